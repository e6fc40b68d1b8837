//! Stream consumers' registrations and checkpoints (redb table
//! `consumers`). A checkpoint moves only from the position its consumer
//! read from, so a batch applied once is never applied twice.

use rave_store::StoreError;
use redb::ReadableTable;

use super::tx::{Applied, Failure, Tx};
use crate::layout::{CONSUMERS, consumer_key};
use crate::stream::{Checkpoint, StartPosition};

/// Registers `consumer` on `table`'s stream at `start`, or finds it
/// registered; returns its checkpoint.
pub(crate) fn register_consumer(
    tx: &mut Tx<'_>,
    table: &str,
    consumer: &str,
    start: StartPosition,
) -> Applied<u64> {
    let state = tx.catalog.get(table)?;
    if !state.definition.stream_enabled {
        return Err(Failure::Request(StoreError::validation(format!(
            "table {table} has no stream"
        ))));
    }
    let mut consumers = tx.txn.open_table(CONSUMERS)?;
    let key = consumer_key(table, consumer);
    if let Some(position) = consumers.get(key.as_str())? {
        return Ok(position.value());
    }
    let position = match start {
        StartPosition::TrimHorizon => 0,
        StartPosition::Latest => tx.next_sequence - 1,
        StartPosition::After(sequence) => sequence,
    };
    consumers.insert(key.as_str(), position)?;
    Ok(position)
}

/// Moves a checkpoint on its own.
pub(crate) fn checkpoint(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Applied<()> {
    check_checkpoint(tx, checkpoint)?;
    write_checkpoint(tx, checkpoint)
}

/// Refuses a checkpoint whose consumer is not registered, moved on already
/// (a failed condition) or would move backwards.
pub(crate) fn check_checkpoint(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Applied<()> {
    let consumers = tx.txn.open_table(CONSUMERS)?;
    let key = consumer_key(&checkpoint.table, &checkpoint.consumer);
    let current = consumers.get(key.as_str())?.map(|v| v.value());
    match current {
        None => Err(Failure::Request(StoreError::validation(format!(
            "consumer {} is not registered on {}",
            checkpoint.consumer, checkpoint.table
        )))),
        Some(current) if current != checkpoint.expected => {
            Err(Failure::Request(StoreError::ConditionalCheckFailed))
        }
        Some(_) if checkpoint.sequence < checkpoint.expected => Err(Failure::Request(
            StoreError::validation("a checkpoint cannot move backwards"),
        )),
        Some(_) => Ok(()),
    }
}

pub(crate) fn write_checkpoint(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Applied<()> {
    let mut consumers = tx.txn.open_table(CONSUMERS)?;
    let key = consumer_key(&checkpoint.table, &checkpoint.consumer);
    consumers.insert(key.as_str(), checkpoint.sequence)?;
    Ok(())
}

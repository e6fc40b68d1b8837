//! The stream records writes append, and their trimming.
//!
//! A record is written in the same transaction as its change, keyed by the
//! next sequence number (shared by all tables, kept in `meta`). Records
//! are dropped once every consumer of the table has passed them and they
//! are older than the retention; the writer trims now and then inside a
//! group's commit, a bounded number at a time.

use std::time::Duration;

use rave_store::Item;
use redb::ReadableTable;

use super::indexes::ItemChange;
use super::tx::{Applied, Failure, Tx};
use crate::catalog::TableState;
use crate::codec::{RecordHeadFields, decode_record, encode_item, encode_record};
use crate::layout::{CONSUMERS, split_key};
use crate::stream::EventName;

/// Most stream records one trim pass removes, to keep commits short.
const TRIM_BATCH: usize = 10_000;

/// Appends the record of `change` to `table`'s stream.
pub(crate) fn append_record(
    tx: &mut Tx<'_>,
    table: &TableState,
    change: &ItemChange<'_>,
    removed_by_ttl: bool,
) -> Applied<()> {
    let event = match (change.old, change.new) {
        (None, _) => EventName::Insert,
        (Some(_), Some(_)) => EventName::Modify,
        (Some(_), None) => EventName::Remove,
    };
    let keys = table
        .schema()
        .key_of(change.old.or(change.new).unwrap_or(&Item::new()));
    let head = RecordHeadFields {
        event,
        removed_by_ttl,
        commit_time_ms: tx.now_ms,
        keys: &keys,
    };
    let old_bytes = change.old.map(encode_item);
    let bytes = encode_record(&head, old_bytes.as_deref(), change.new_bytes);
    let sequence = tx.next_sequence;
    tx.stream(&table.stream_table)?
        .insert(sequence, bytes.as_slice())?;
    tx.next_sequence += 1;
    Ok(())
}

/// Drops stream records every consumer has passed and that are older than
/// the retention period.
pub(crate) fn trim_streams(tx: &mut Tx<'_>, retention: Duration) -> Applied<()> {
    let cutoff = tx.now_ms.saturating_sub(retention.as_millis() as u64);
    let positions = consumer_positions(tx)?;
    let catalog = tx.catalog;
    for name in catalog.names()? {
        let state = catalog.get(&name)?;
        if !state.definition.stream_enabled {
            continue;
        }
        let passed_by_all = positions
            .iter()
            .filter(|(t, _)| *t == name)
            .map(|(_, p)| *p)
            .min()
            .unwrap_or(u64::MAX);
        let stream = tx.stream(&state.stream_table)?;
        let mut doomed = Vec::new();
        for entry in stream.range(..=passed_by_all)? {
            let (sequence, value) = entry?;
            let record = decode_record(value.value())
                .map_err(|e| Failure::Request(state.corrupt_record(sequence.value(), e)))?;
            // Records are in commit order: the first young one ends the pass.
            if record.commit_time_ms >= cutoff || doomed.len() >= TRIM_BATCH {
                break;
            }
            doomed.push(sequence.value());
        }
        for sequence in doomed {
            stream.remove(sequence)?;
        }
    }
    Ok(())
}

/// Each registered consumer's table and checkpoint.
fn consumer_positions(tx: &Tx<'_>) -> Applied<Vec<(String, u64)>> {
    let consumers = tx.txn.open_table(CONSUMERS)?;
    let mut all = Vec::new();
    for entry in consumers.iter()? {
        let (k, v) = entry?;
        if let Some((table, _)) = split_key(k.value()) {
            all.push((table.to_owned(), v.value()));
        }
    }
    Ok(all)
}

//! BatchWriteItem: puts and deletes of up to 25 items, in one commit, each
//! without a condition. The engine processes every request of a batch, so
//! none comes back unprocessed.

use std::sync::Arc;

use rave_store::{
    BatchWriteItemInput, BatchWriteItemOutput, Item, MAX_BATCH_WRITE_REQUESTS, StoreError,
    WriteRequest,
};

use super::collections::{self, CollectionChange};
use super::item::{Consumption, write_item};
use super::queue::Written;
use super::tx::{Applied, Failure, Tx};
use crate::catalog::{Catalog, TableState};

/// One request of the batch, checked: its table, the item's stored key
/// and the item it puts (`None`: a deletion).
struct Planned<'a> {
    table: Arc<TableState>,
    key: Vec<u8>,
    new: Option<&'a Item>,
}

pub(crate) fn batch_write(
    tx: &mut Tx<'_>,
    input: &BatchWriteItemInput,
) -> Applied<Written<BatchWriteItemOutput>> {
    let planned = plan(tx.catalog, input)?;
    // Read every old image first: an item that does not decode fails
    // the request before any of its writes touched the transaction.
    let mut olds = Vec::with_capacity(planned.len());
    for request in &planned {
        olds.push(tx.get(&request.table, &request.key)?);
    }
    let changes: Vec<CollectionChange<'_>> = planned
        .iter()
        .zip(&olds)
        .map(|(request, old)| (request.table.as_ref(), old.as_ref(), request.new))
        .collect();
    collections::check(tx, &changes)?;
    let mut consumed = Consumption::default();
    for (request, old) in planned.iter().zip(&olds) {
        consumed.add(write_item(
            tx,
            &request.table,
            &request.key,
            old.as_ref(),
            request.new,
        )?);
    }
    let named: Vec<_> = planned
        .iter()
        .zip(&input.requests)
        .map(|(planned, (_, request))| match request {
            WriteRequest::Put(item) => (planned.table.as_ref(), item),
            WriteRequest::Delete(key) => (planned.table.as_ref(), key),
        })
        .collect();
    Ok(Written {
        item_collections: collections::sizes(tx, &named)?,
        output: BatchWriteItemOutput {
            unprocessed: Vec::new(),
            consumed: consumed.0,
        },
    })
}

/// Checks the batch as a whole (its size, each request against its table,
/// no item twice) before anything is read.
fn plan<'a>(catalog: &Catalog, input: &'a BatchWriteItemInput) -> Applied<Vec<Planned<'a>>> {
    let count = input.requests.len();
    if count == 0 || count > MAX_BATCH_WRITE_REQUESTS {
        // DynamoDB's words, which do not name the count.
        return Err(Failure::Request(StoreError::validation(
            "Too many items requested for the BatchWriteItem call",
        )));
    }
    let mut planned: Vec<Planned<'a>> = Vec::with_capacity(count);
    for (table_name, request) in &input.requests {
        let table = catalog.get(table_name)?;
        let (key, new) = match request {
            WriteRequest::Put(item) => (table.validate_item(item)?, Some(item)),
            WriteRequest::Delete(key) => (table.key_bytes(key)?, None),
        };
        if planned
            .iter()
            .any(|p| p.table.name() == table.name() && p.key == key)
        {
            return Err(Failure::Request(StoreError::validation(
                "Provided list of item keys contains duplicates",
            )));
        }
        planned.push(Planned { table, key, new });
    }
    Ok(planned)
}

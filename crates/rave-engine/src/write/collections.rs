//! Item collection sizes, for tables with local secondary indexes.
//!
//! DynamoDB limits an item collection (the items of one partition key value
//! of a table with local secondary indexes, plus what those indexes project
//! of them) to 10 GB. Each collection's size is kept in `collections/<table>`
//! by `item::write_item`, the one place every write goes through (Time to
//! Live's deletions included), so the size commits with the write and
//! survives restarts: nothing scans to find it. What one item adds to its
//! collection (its size and its local index entries' sizes) is
//! `TableState::collection_bytes`.
//!
//! Before a request writes, what its writes do to each collection is added
//! up, and the request is refused, with nothing written, if a collection
//! would end larger than the limit and larger than it was:
//! `ItemCollectionSizeLimitExceeded`, or in a transaction a cancellation
//! reason on the action that overflowed. Writes that shrink a collection
//! over the limit still go, as DynamoDB allows. The limit is
//! `EngineOptions::max_item_collection_bytes` (10 GB; tests make it small).
//! A data directory from before the sizes were kept has them measured once,
//! by a scan, when the engine opens it (`startup`). The sizes after a write
//! go back with its reply (`Written::item_collections`), for DynamoDB's
//! ItemCollectionMetrics.

use std::collections::BTreeMap;

use rave_store::{Item, Result, StoreError};
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};

use super::queue::ItemCollectionSize;
use super::tx::{Applied, Failure, Tx};
use crate::catalog::TableState;
use crate::codec::decode_item;
use crate::database::storage;
use crate::keys::partition_prefix;
use crate::layout::{bytes_table, collections_table};

/// One item's change as item collections see it: its table, its old and
/// its new image.
pub(crate) type CollectionChange<'a> = (&'a TableState, Option<&'a Item>, Option<&'a Item>);

/// Moves the size of the collection `old` or `new` belongs to from one to
/// the other; a collection that ends empty is forgotten.
pub(crate) fn resize(
    tx: &mut Tx<'_>,
    table: &TableState,
    old: Option<&Item>,
    new: Option<&Item>,
) -> Applied<()> {
    let Some(collections) = &table.collections_table else {
        return Ok(());
    };
    let Some(partition) = old
        .or(new)
        .and_then(|i| i.get(&table.schema().partition.name))
    else {
        return Ok(());
    };
    let bytes = |item: Option<&Item>| item.map_or(0, |i| table.collection_bytes(i));
    let prefix = partition_prefix(&[partition]);
    let size = (tx.collection_size(collections, &prefix)? + bytes(new)).saturating_sub(bytes(old));
    let sizes = tx.collections(collections)?;
    if size == 0 {
        sizes.remove(prefix.as_slice())?;
    } else {
        sizes.insert(prefix.as_slice(), size)?;
    }
    Ok(())
}

/// Refuses a request whose writes would grow an item collection past
/// the limit (see [`oversized`]).
pub(crate) fn check(tx: &mut Tx<'_>, changes: &[CollectionChange<'_>]) -> Applied<()> {
    match oversized(tx, changes)? {
        None => Ok(()),
        Some(_) => Err(Failure::Request(
            // The API reference's words for the exception, with the
            // limit in force (a test's may be smaller than DynamoDB's).
            StoreError::ItemCollectionSizeLimitExceeded(format!(
                "The total size of an item collection has exceeded the maximum limit of {}",
                match tx.max_item_collection_bytes {
                    bytes if bytes % (1 << 30) == 0 => format!("{} gigabytes", bytes >> 30),
                    bytes => format!("{bytes} bytes"),
                }
            )),
        )),
    }
}

/// The first of `changes` whose item collection would end up larger than
/// the limit and larger than it is: DynamoDB still allows writes that
/// shrink a collection over the limit. Changes to one collection add up.
pub(crate) fn oversized(
    tx: &mut Tx<'_>,
    changes: &[CollectionChange<'_>],
) -> Applied<Option<usize>> {
    // (table, collection, size before, size after), in order first touched.
    let mut sizes: Vec<(&str, Vec<u8>, u64, u64)> = Vec::new();
    for (position, &(table, old, new)) in changes.iter().enumerate() {
        let Some(collections) = &table.collections_table else {
            continue;
        };
        let Some(partition) = old
            .or(new)
            .and_then(|item| item.get(&table.schema().partition.name))
        else {
            continue;
        };
        let prefix = partition_prefix(&[partition]);
        let at = match sizes
            .iter()
            .position(|(name, p, _, _)| *name == table.name() && *p == prefix)
        {
            Some(at) => at,
            None => {
                let current = tx.collection_size(collections, &prefix)?;
                sizes.push((table.name(), prefix, current, current));
                sizes.len() - 1
            }
        };
        let bytes = |item: Option<&Item>| item.map_or(0, |i| table.collection_bytes(i));
        let (_, _, before, after) = &mut sizes[at];
        *after = (*after + bytes(new)).saturating_sub(bytes(old));
        if *after > tx.max_item_collection_bytes && *after > *before {
            return Ok(Some(position));
        }
    }
    Ok(None)
}

/// The item collections `written` (tables with an item or key of each
/// write) belong to, with their sizes now; once per collection, in the
/// order first written.
pub(crate) fn sizes(
    tx: &mut Tx<'_>,
    written: &[(&TableState, &Item)],
) -> Applied<Vec<ItemCollectionSize>> {
    let mut sizes: Vec<(Vec<u8>, ItemCollectionSize)> = Vec::new();
    for &(table, item) in written {
        let Some(collections) = &table.collections_table else {
            continue;
        };
        let partition = &table.schema().partition.name;
        let Some(value) = item.get(partition) else {
            continue;
        };
        let prefix = partition_prefix(&[value]);
        if sizes
            .iter()
            .any(|(p, size)| size.table == table.name() && *p == prefix)
        {
            continue;
        }
        let bytes = tx.collection_size(collections, &prefix)?;
        let key = Item::from([(partition.clone(), value.clone())]);
        sizes.push((
            prefix,
            ItemCollectionSize {
                table: table.name().to_owned(),
                key,
                bytes,
            },
        ));
    }
    Ok(sizes.into_iter().map(|(_, size)| size).collect())
}

/// Fills the item collection sizes of `state` from its items when they
/// were never kept (a table created before rave kept them): the
/// collections table is empty while the table has items.
pub(crate) fn measure(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    let Some(name) = &state.collections_table else {
        return Ok(());
    };
    let mut collections = txn.open_table(collections_table(name)).map_err(storage)?;
    if !collections.is_empty().map_err(storage)? {
        return Ok(());
    }
    let items = txn
        .open_table(bytes_table(&state.items_table))
        .map_err(storage)?;
    let mut sizes: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for entry in items.iter().map_err(storage)? {
        let (key, value) = entry.map_err(storage)?;
        let item = decode_item(value.value()).map_err(|e| state.corrupt_item(key.value(), e))?;
        if let Some(partition) = item.get(&state.schema().partition.name) {
            *sizes.entry(partition_prefix(&[partition])).or_default() +=
                state.collection_bytes(&item);
        }
    }
    for (prefix, bytes) in sizes {
        collections
            .insert(prefix.as_slice(), bytes)
            .map_err(storage)?;
    }
    Ok(())
}

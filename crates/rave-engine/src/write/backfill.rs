//! The backfill of an index being created (`index_changes`): the
//! writer thread copies the table's items into it between groups of
//! requests, a chunk of items per commit, so that requests keep flowing
//! while it runs. The backfill's position is stored with the chunk it
//! completes (redb table `index_builds`), so a restarted engine resumes
//! where it stopped. When the last chunk is in, the index becomes
//! `ACTIVE`.

use std::ops::Bound;
use std::time::Duration;

use rave_store::{Item, Result};
use redb::{ReadableTable, WriteTransaction};

use crate::catalog::{Catalog, IndexEntry, IndexState, IndexStatus, TableState};
use crate::codec::decode_item;
use crate::database::{SharedDatabase, storage};
use crate::layout::{INDEX_BUILDS, build_key, bytes_table};

/// Items one backfill commit copies, to keep commits (and the requests
/// waiting behind them) short.
const BACKFILL_CHUNK: usize = 1_000;

/// Copies one chunk of items into an index that is being created, if
/// any is; returns whether there was one. The index turns ACTIVE with
/// its last chunk. A failure is logged and retried on the next call.
pub(crate) fn step(db: &SharedDatabase, catalog: &Catalog) -> bool {
    let Some((table, index)) = catalog.index_being_created() else {
        return false;
    };
    match db.commit_alone(|txn| backfill_chunk(txn, &table, &table.indexes[index])) {
        Ok(true) => {
            let name = &table.indexes[index].index.name;
            if let Err(error) = catalog.insert(table.with_status(name, IndexStatus::Active)) {
                tracing::error!(%error, "index backfill could not finish");
            }
        }
        Ok(false) => {}
        Err(error) => {
            tracing::error!(%error, table = table.name(), "index backfill failed; retrying");
            // Leave the writer free for requests before trying again.
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    true
}

/// The entry a backfill gives `item` in `index`: none when it lacks the
/// index's key attributes, and none when one of them has another type than
/// the index's key declares, as DynamoDB's backfill leaves such index key
/// violations out.
pub(crate) fn backfilled_entry<'a>(
    table: &TableState,
    index: &IndexState,
    item: &'a Item,
) -> Option<IndexEntry<'a>> {
    let fits = index.index.key_schema.attributes().all(|attr| {
        item.get(&attr.name)
            .is_none_or(|value| attr.key_type.matches(value))
    });
    fits.then(|| table.index_entry(index, item)).flatten()
}

/// Copies the next chunk of `table`'s items into `index`, inside `txn`.
/// Returns whether the backfill is complete (its record is then removed).
fn backfill_chunk(txn: &WriteTransaction, table: &TableState, index: &IndexState) -> Result<bool> {
    let key = build_key(table.name(), &index.index.name);
    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    let after = match builds.get(key.as_str()).map_err(storage)? {
        Some(position) => position.value().to_vec(),
        // Deleted meanwhile: nothing left to do.
        None => return Ok(true),
    };
    let items = txn
        .open_table(bytes_table(&table.items_table))
        .map_err(storage)?;
    let mut entries = txn
        .open_table(bytes_table(&index.redb_table))
        .map_err(storage)?;
    let range = if after.is_empty() {
        items.range::<&[u8]>(..).map_err(storage)?
    } else {
        items
            .range::<&[u8]>((Bound::Excluded(after.as_slice()), Bound::Unbounded))
            .map_err(storage)?
    };
    let mut last = None;
    let mut copied = 0;
    for entry in range {
        let (stored_key, value) = entry.map_err(storage)?;
        let item =
            decode_item(value.value()).map_err(|e| table.corrupt_item(stored_key.value(), e))?;
        if let Some(entry) = backfilled_entry(table, index, &item) {
            entries
                .insert(entry.key.as_slice(), entry.stored_value(index).as_slice())
                .map_err(storage)?;
        }
        last = Some(stored_key.value().to_vec());
        copied += 1;
        if copied == BACKFILL_CHUNK {
            break;
        }
    }
    match last {
        Some(position) if copied == BACKFILL_CHUNK => {
            builds
                .insert(key.as_str(), position.as_slice())
                .map_err(storage)?;
            Ok(false)
        }
        _ => {
            builds.remove(key.as_str()).map_err(storage)?;
            Ok(true)
        }
    }
}

//! UpdateTable's index changes: adding a global secondary index to a table
//! that already has items, and deleting one.
//!
//! Adding an index commits it to the catalog at once, with status
//! `CREATING`: from then on every write maintains it like any other index.
//! The items written before are copied in by a backfill that the writer
//! thread runs between groups of requests, a chunk of items per commit, so
//! that requests keep flowing while it runs. The backfill's position is
//! stored with the chunk it completes (redb table `index_builds`), so a
//! restarted engine resumes where it stopped. When the last chunk is in,
//! the index becomes `ACTIVE`. DynamoDB refuses to read an index that is
//! still backfilling, and so does the engine.

use rave_store::{GlobalSecondaryIndex, Result, StoreError};
use redb::{ReadableTable, TableDefinition as RedbTable, WriteTransaction};

use crate::catalog::{IndexState, TableState};
use crate::codec::decode_item;
use crate::{bytes_table, storage};

/// Backfills in progress: `table \0 index` → the stored key of the last
/// item copied (empty before the first chunk).
pub(crate) const INDEX_BUILDS: RedbTable<&str, &[u8]> = RedbTable::new("index_builds");

/// Items one backfill commit copies, to keep commits (and the requests
/// waiting behind them) short.
const BACKFILL_CHUNK: usize = 1_000;

/// A change UpdateTable makes to a table's global secondary indexes.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexChange {
    /// Adds the index and backfills it from the table's items.
    Create(GlobalSecondaryIndex),
    /// Deletes the index named.
    Delete(String),
}

/// An index's status, as DescribeTable reports it (`IndexStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexStatus {
    /// Being backfilled: written to, not yet readable.
    Creating,
    Active,
}

impl IndexStatus {
    /// DynamoDB's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            IndexStatus::Creating => "CREATING",
            IndexStatus::Active => "ACTIVE",
        }
    }
}

/// One global secondary index of a table and its status.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDescription {
    pub index: GlobalSecondaryIndex,
    pub status: IndexStatus,
}

pub(crate) fn build_key(table: &str, index: &str) -> String {
    format!("{table}\u{0}{index}")
}

/// The index a Query or Scan may read: not one still backfilling.
pub(crate) fn check_readable(index: &IndexState) -> Result<()> {
    match index.status {
        IndexStatus::Active => Ok(()),
        IndexStatus::Creating => Err(StoreError::validation(format!(
            "Cannot read from backfilling global secondary index: {}",
            index.index.name
        ))),
    }
}

/// Copies the next chunk of `table`'s items into `index`, inside `txn`.
/// Returns whether the backfill is complete (its record is then removed).
pub(crate) fn backfill_chunk(
    txn: &WriteTransaction,
    table: &TableState,
    index: &IndexState,
) -> Result<bool> {
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
        use std::ops::Bound;
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
        // An item whose attribute has another type than the index's key
        // declares stays out of the index, as DynamoDB's backfill leaves
        // such index key violations out.
        let fits = index.index.key_schema.attributes().all(|attr| {
            item.get(&attr.name)
                .is_none_or(|value| attr.key_type.matches(value))
        });
        if fits && let Some(entry) = table.index_entry(index, &item) {
            entries
                .insert(entry.key.as_slice(), entry.projected.encode().as_slice())
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

//! What each table takes on disk: its items, each index and its stream,
//! as redb counts them (`rave storage`).
//!
//! An operator asking why a data directory is large needs to know which
//! part holds the bytes and how full its pages are; the file's size alone
//! says neither.

use std::path::Path;

use rave_store::{Result, StoreError};
use redb::{ReadTransaction, ReadableTableMetadata, TableError, TableStats};

use crate::catalog::Catalog;
use crate::database::{SharedDatabase, storage};
use crate::layout::{bytes_table, stream_table};

/// One part of a table: its items, one index, or its change stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TablePart {
    Items,
    Index(String),
    Stream,
}

impl std::fmt::Display for TablePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TablePart::Items => f.write_str("items"),
            TablePart::Index(name) => write!(f, "index {name}"),
            TablePart::Stream => f.write_str("stream"),
        }
    }
}

/// What one part of a table takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartUsage {
    pub table: String,
    pub part: TablePart,
    pub entries: u64,
    /// Keys and values as stored, without page overhead.
    pub stored_bytes: u64,
    /// The pages' headers, offsets and checksums.
    pub metadata_bytes: u64,
    /// What its pages hold of neither: room left by splits and deletions.
    pub fragmented_bytes: u64,
    pub leaf_pages: u64,
    pub branch_pages: u64,
}

impl PartUsage {
    /// The bytes its pages take.
    pub fn page_bytes(&self) -> u64 {
        self.stored_bytes + self.metadata_bytes + self.fragmented_bytes
    }
}

/// What the data directory takes: the database file, and each part of each
/// table within it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageUsage {
    /// The file's length.
    pub file_bytes: u64,
    /// What the file system allocated for it, where it tells (a file can
    /// be sparse).
    pub allocated_bytes: Option<u64>,
    pub parts: Vec<PartUsage>,
}

/// What the database `file` takes, and each of `catalog`'s tables within
/// it, as of now.
pub(crate) fn storage_usage(
    file: &Path,
    db: &SharedDatabase,
    catalog: &Catalog,
) -> Result<StorageUsage> {
    let metadata = std::fs::metadata(file).map_err(|error| {
        StoreError::Unavailable(format!("cannot read {}: {error}", file.display()))
    })?;
    let txn = db.begin_read().map_err(storage)?;
    let mut parts = Vec::new();
    for name in catalog.names()? {
        let state = catalog.get(&name)?;
        let mut add = |part: TablePart, entries: u64, stats: TableStats| {
            parts.push(PartUsage {
                table: name.clone(),
                part,
                entries,
                stored_bytes: stats.stored_bytes(),
                metadata_bytes: stats.metadata_bytes(),
                fragmented_bytes: stats.fragmented_bytes(),
                leaf_pages: stats.leaf_pages(),
                branch_pages: stats.branch_pages(),
            });
        };
        if let Some((entries, stats)) = bytes_table_usage(&txn, &state.items_table)? {
            add(TablePart::Items, entries, stats);
        }
        for index in &state.indexes {
            if let Some((entries, stats)) = bytes_table_usage(&txn, &index.redb_table)? {
                add(TablePart::Index(index.index.name.clone()), entries, stats);
            }
        }
        match txn.open_table(stream_table(&state.stream_table)) {
            Ok(stream) => add(
                TablePart::Stream,
                stream.len().map_err(storage)?,
                stream.stats().map_err(storage)?,
            ),
            Err(TableError::TableDoesNotExist(_)) => {}
            Err(error) => return Err(storage(error)),
        }
    }
    Ok(StorageUsage {
        file_bytes: metadata.len(),
        allocated_bytes: allocated(&metadata),
        parts,
    })
}

/// The entries and statistics of a redb table of bytes, if it has been
/// created (a table's parts are created by their first write).
fn bytes_table_usage(txn: &ReadTransaction, name: &str) -> Result<Option<(u64, TableStats)>> {
    let table = match txn.open_table(bytes_table(name)) {
        Ok(table) => table,
        Err(TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(error) => return Err(storage(error)),
    };
    Ok(Some((
        table.len().map_err(storage)?,
        table.stats().map_err(storage)?,
    )))
}

#[cfg(unix)]
fn allocated(metadata: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    // `blocks` counts 512-byte units whatever the file system's block size.
    Some(metadata.blocks() * 512)
}

#[cfg(not(unix))]
fn allocated(_: &std::fs::Metadata) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use rave_conformance::table_definition;
    use rave_store::{PutItemInput, ReturnValues, Store, item};

    use super::*;
    use crate::engine::Engine;

    #[tokio::test]
    async fn each_part_counts_its_own_entries_and_the_file_holds_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path()).unwrap();
        engine
            .create_table(table_definition("things"))
            .await
            .unwrap();
        // Ten items; every other one in `byGroup`, none in the other indexes.
        for n in 0..10 {
            let mut item = item! {"PK" => format!("p{n}"), "SK" => "s", "note" => "x".repeat(100)};
            if n % 2 == 0 {
                item.insert("GROUP".into(), "g".into());
                item.insert("AT".into(), format!("{n:02}").into());
            }
            let put = PutItemInput {
                table: "things".into(),
                item,
                condition: None,
                return_values: ReturnValues::None,
            };
            engine.put_item(put).await.unwrap();
        }
        let usage = engine.storage_usage().unwrap();
        let entries = |part: TablePart| {
            usage
                .parts
                .iter()
                .find(|p| p.table == "things" && p.part == part)
                .map(|p| p.entries)
        };
        assert_eq!(entries(TablePart::Items), Some(10));
        assert_eq!(entries(TablePart::Index("byGroup".into())), Some(5));
        // An index no item has an entry in is listed, empty.
        assert_eq!(entries(TablePart::Index("byScore".into())), Some(0));
        assert_eq!(entries(TablePart::Stream), Some(10));
        let items = usage
            .parts
            .iter()
            .find(|p| p.part == TablePart::Items)
            .unwrap();
        // Each item's value holds its 100-byte note.
        assert!(items.stored_bytes > 1_000, "{items:?}");
        let pages: u64 = usage.parts.iter().map(PartUsage::page_bytes).sum();
        assert!(usage.file_bytes >= pages, "{usage:?}");
    }
}

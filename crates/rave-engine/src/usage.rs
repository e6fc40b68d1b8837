//! What each table takes on disk: its items, each index, its stream and,
//! where the table has them, its item collection sizes and its Time to
//! Live queue, as redb counts them (`rave storage`).
//!
//! An operator asking why a data directory is large needs to know which
//! part holds the bytes and how full its pages are; the file's size alone
//! says neither.

use std::path::Path;

use rave_store::{Result, StoreError};
use redb::{
    Key, ReadTransaction, ReadableTableMetadata, TableDefinition, TableError, TableStats, Value,
};

use crate::catalog::Catalog;
use crate::database::{SharedDatabase, storage};
use crate::layout::{bytes_table, collections_table, stream_table};

/// One part of a table: its items, one index, its change stream, the sizes
/// of its item collections (a table with local secondary indexes) or its
/// Time to Live queue (a table with TTL enabled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TablePart {
    Items,
    Index(String),
    Stream,
    Collections,
    TimeToLiveQueue,
}

impl std::fmt::Display for TablePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TablePart::Items => f.write_str("items"),
            TablePart::Index(name) => write!(f, "index {name}"),
            TablePart::Stream => f.write_str("stream"),
            TablePart::Collections => f.write_str("collection sizes"),
            TablePart::TimeToLiveQueue => f.write_str("time to live queue"),
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
        let mut add_if_created = |part: TablePart, usage: Option<(u64, TableStats)>| {
            if let Some((entries, stats)) = usage {
                add(part, entries, stats);
            }
        };
        add_if_created(
            TablePart::Items,
            table_usage(&txn, bytes_table(&state.items_table))?,
        );
        for index in &state.indexes {
            add_if_created(
                TablePart::Index(index.index.name.clone()),
                table_usage(&txn, bytes_table(&index.redb_table))?,
            );
        }
        add_if_created(
            TablePart::Stream,
            table_usage(&txn, stream_table(&state.stream_table))?,
        );
        if let Some(collections) = &state.collections_table {
            add_if_created(
                TablePart::Collections,
                table_usage(&txn, collections_table(collections))?,
            );
        }
        if let Some(queue) = &state.expiries_table {
            add_if_created(
                TablePart::TimeToLiveQueue,
                table_usage(&txn, bytes_table(queue))?,
            );
        }
    }
    Ok(StorageUsage {
        file_bytes: metadata.len(),
        allocated_bytes: allocated(&metadata),
        parts,
    })
}

/// The entries and statistics of a redb table, if it has been created (a
/// store from an older rave may lack a part).
fn table_usage<K: Key + 'static, V: Value + 'static>(
    txn: &ReadTransaction,
    definition: TableDefinition<'_, K, V>,
) -> Result<Option<(u64, TableStats)>> {
    let table = match txn.open_table(definition) {
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
    use rave_store::{
        AttributeValue, KeyAttribute, KeyType, LocalSecondaryIndex, Number, Projection,
        PutItemInput, ReturnValues, Store, TableDefinition, item,
    };

    use super::*;
    use crate::engine::Engine;
    use crate::ttl::TimeToLiveSpecification;

    #[tokio::test]
    async fn each_part_counts_its_own_entries_and_the_file_holds_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path()).unwrap();
        let definition = TableDefinition {
            local_secondary_indexes: vec![LocalSecondaryIndex {
                name: "byNote".into(),
                sort_key: KeyAttribute::new("note", KeyType::S),
                projection: Projection::KeysOnly,
            }],
            ..table_definition("things")
        };
        engine.create_table(definition).await.unwrap();
        let ttl = TimeToLiveSpecification {
            attribute_name: "expires".into(),
            enabled: true,
        };
        engine.update_time_to_live("things", ttl).await.unwrap();
        // Ten items in ten partitions; every other one in `byGroup`, none in
        // the other global indexes, every third with a TTL value.
        for n in 0..10 {
            let mut item = item! {"PK" => format!("p{n}"), "SK" => "s", "note" => "x".repeat(100)};
            if n % 2 == 0 {
                item.insert("GROUP".into(), "g".into());
                item.insert("AT".into(), format!("{n:02}").into());
            }
            if n % 3 == 0 {
                item.insert(
                    "expires".into(),
                    AttributeValue::N(Number::from(4_000_000_000_i64)),
                );
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
        assert_eq!(entries(TablePart::Collections), Some(10));
        assert_eq!(entries(TablePart::TimeToLiveQueue), Some(4));
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

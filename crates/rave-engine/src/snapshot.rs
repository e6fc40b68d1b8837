//! The read snapshot that reads share until the writer's next commit.
//!
//! Beginning a redb read transaction and opening a table in it cost a
//! GetItem about as much as finding its item (≈ 4,000 of its 51,000
//! instructions, BENCHMARKS.md). So reads share one snapshot, and the tables
//! opened in it, until something commits: [`Snapshots::latest`] hands out
//! the current one, beginning it if there is none, and every commit drops
//! it ([`Snapshots::committed`], called by `SharedDatabase::commit`) before
//! the writer replies to anyone. A read that starts after a write was
//! acknowledged therefore begins a snapshot that holds the write.
//!
//! A snapshot is begun while the lock is held, so none begun before a
//! commit can be stored after that commit dropped the last one. A snapshot
//! pins the pages of its commit as any read transaction does, and lives
//! until the next commit and the last read that took it.

use std::sync::{Arc, Mutex, PoisonError};

use redb::{ReadOnlyTable, ReadTransaction, TableDefinition, TableError, TableHandle};

/// A table of stored bytes, as a snapshot opened it.
pub(crate) type ReadTable = ReadOnlyTable<&'static [u8], &'static [u8]>;

/// One read transaction and the tables opened in it.
pub(crate) struct Snapshot {
    txn: ReadTransaction,
    /// Few (a table's items and its indexes), so a list.
    tables: Mutex<Vec<(String, Arc<ReadTable>)>>,
}

impl Snapshot {
    fn new(txn: ReadTransaction) -> Snapshot {
        Snapshot {
            txn,
            tables: Mutex::new(Vec::new()),
        }
    }

    /// The redb table of stored bytes (items, an index's entries) that
    /// `definition` names, opened once per snapshot.
    pub(crate) fn table(
        &self,
        definition: TableDefinition<&'static [u8], &'static [u8]>,
    ) -> Result<Arc<ReadTable>, TableError> {
        let name = definition.name();
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, table)) = tables.iter().find(|(opened, _)| opened == name) {
            return Ok(table.clone());
        }
        let table = Arc::new(self.txn.open_table(definition)?);
        tables.push((name.to_owned(), table.clone()));
        Ok(table)
    }
}

/// The snapshot reads share now, if any read began one since the last
/// commit.
#[derive(Default)]
pub(crate) struct Snapshots {
    latest: Mutex<Option<Arc<Snapshot>>>,
}

impl std::fmt::Debug for Snapshots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Snapshots")
    }
}

impl Snapshots {
    /// The snapshot to read from: the shared one, or one `begin` begins.
    pub(crate) fn latest<E>(
        &self,
        begin: impl FnOnce() -> Result<ReadTransaction, E>,
    ) -> Result<Arc<Snapshot>, E> {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(snapshot) = latest.as_ref() {
            return Ok(snapshot.clone());
        }
        let snapshot = Arc::new(Snapshot::new(begin()?));
        *latest = Some(snapshot.clone());
        Ok(snapshot)
    }

    /// Forgets the shared snapshot: something committed (or the database
    /// is being closed), and the next read begins a new one.
    pub(crate) fn committed(&self) {
        let old = self
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // Dropped outside the lock: it may be the last reference.
        drop(old);
    }
}

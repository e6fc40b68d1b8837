//! The redb database behind the engine, and its reopening after an I/O
//! failure.
//!
//! redb latches the first I/O error of a write (a full disk, ENOSPC, or
//! EFBIG past a file size limit, EIO): from then on every transaction of
//! that database, reads included, fails with `PreviousIo` until the database
//! is closed and opened again. Opening it again recovers the file exactly as
//! after a crash: the last durable commit is the state, and nothing
//! acknowledged is lost, since the writer replies only after a commit
//! succeeds. So the writer, after a failed commit, reopens the database in
//! place ([`SharedDatabase::reopen`]) instead of asking for a restart, and
//! reads the stream sequence back from the file (a commit that reported an
//! error may still have landed). What that means with a full disk (each
//! shown through the real `rave serve` by rave-cli's `tests/faults.rs`):
//!
//! * the group whose commit needed the space fails whole, every request in
//!   it gets `Unavailable`, and the domain's retry and the HTTP layer's 503
//!   with `Retry-After` take it from there;
//! * while the disk is full, reads keep answering (the reopened database
//!   serves them) and writes fail; a small write may still fit in pages the
//!   file has free;
//! * once space is freed, the next write succeeds, with no restart;
//! * the reopen runs redb's recovery pass, whose time grows with the file,
//!   and holds the database's lock for writing, so reads wait for it; each
//!   refused group reopens once.
//!
//! Readers reach the database through a read lock held only while they
//! begin a transaction, so the writer can swap it between two of them; a
//! read transaction already begun keeps its snapshot of the old file and
//! may fail with `DatabaseClosed` (an `Unavailable`, retried by the domain).
//! If a reopen fails, reads and writes answer `Unavailable` until the next
//! write tries again. Reads share a snapshot until the next commit or
//! reopen ([`crate::snapshot`]); so every commit goes through
//! [`SharedDatabase::commit`], which drops it.
//!
//! [`storage`] says what a redb failure means for a caller.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use rave_store::StoreError;
use redb::{
    CommitError, Database, DatabaseError, Durability, ReadTransaction, ReadableDatabase,
    StorageError, TransactionError, WriteTransaction,
};

use crate::snapshot::{Snapshot, Snapshots};

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "rave.redb";

/// What a redb failure means for a caller: the disk failed or is full
/// (`Unavailable`, retryable), the file is damaged (`Corrupt`), or rave
/// misused redb (`Internal`, a bug).
pub(crate) fn storage(error: impl Into<redb::Error>) -> StoreError {
    match error.into() {
        redb::Error::Io(io) => {
            // std reports ENOSPC as StorageFull.
            if io.kind() == std::io::ErrorKind::StorageFull {
                StoreError::Unavailable(format!("disk full: {io}"))
            } else {
                StoreError::Unavailable(format!("I/O error: {io}"))
            }
        }
        redb::Error::Corrupted(detail) => StoreError::corrupt(DATABASE_FILE, detail),
        error @ (redb::Error::PreviousIo
        | redb::Error::DatabaseClosed
        | redb::Error::DatabaseAlreadyOpen
        | redb::Error::TransactionPoisoned) => StoreError::Unavailable(error.to_string()),
        error => StoreError::Internal(format!("storage: {error}")),
    }
}

#[derive(Debug)]
pub(crate) struct SharedDatabase {
    path: PathBuf,
    cache_size: usize,
    /// Declared before `current`, so that it is dropped first: a snapshot
    /// keeps its database open.
    snapshots: Snapshots,
    /// `None` after a reopen failed; the next reopen tries again.
    current: RwLock<Option<Database>>,
}

impl SharedDatabase {
    pub(crate) fn open(path: &Path, cache_size: usize) -> Result<SharedDatabase, DatabaseError> {
        let database = open(path, cache_size)?;
        Ok(SharedDatabase {
            path: path.to_owned(),
            cache_size,
            snapshots: Snapshots::default(),
            current: RwLock::new(Some(database)),
        })
    }

    pub(crate) fn begin_read(&self) -> Result<ReadTransaction, TransactionError> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().ok_or_else(closed)?.begin_read()
    }

    /// The snapshot reads share until the next commit (`snapshot`).
    pub(crate) fn snapshot(&self) -> rave_store::Result<Arc<Snapshot>> {
        self.snapshots.latest(|| self.begin_read()).map_err(storage)
    }

    /// Commits `txn`. Every commit goes through here: the shared read
    /// snapshot goes with it (even when the commit reports an error, which
    /// may still have landed), so a read that follows sees it.
    pub(crate) fn commit(&self, txn: WriteTransaction) -> Result<(), CommitError> {
        let committed = txn.commit();
        self.snapshots.committed();
        committed
    }

    pub(crate) fn begin_write(&self) -> Result<WriteTransaction, TransactionError> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().ok_or_else(closed)?.begin_write()
    }

    /// Runs `write` in a transaction of its own and commits it: the
    /// writer's chunks of work between groups (index backfills, TTL queue
    /// fills).
    pub(crate) fn commit_alone<T>(
        &self,
        write: impl FnOnce(&WriteTransaction) -> rave_store::Result<T>,
    ) -> rave_store::Result<T> {
        self.commit_alone_with(Durability::Immediate, write)
    }

    /// [`SharedDatabase::commit_alone`] with `durability`: `None` for work
    /// that a later durable commit completes and a crash before it only
    /// redoes (an index build's chunks).
    pub(crate) fn commit_alone_with<T>(
        &self,
        durability: Durability,
        write: impl FnOnce(&WriteTransaction) -> rave_store::Result<T>,
    ) -> rave_store::Result<T> {
        let mut txn = self.begin_write().map_err(storage)?;
        txn.set_durability(durability).map_err(storage)?;
        let done = write(&txn)?;
        self.commit(txn).map_err(storage)?;
        Ok(done)
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// False after a reopen failed, until one succeeds.
    pub(crate) fn is_open(&self) -> bool {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.is_some()
    }

    /// Closes the database and opens it again, which recovers it from a
    /// latched I/O error. Only the writer calls it, between two commits.
    pub(crate) fn reopen(&self) -> Result<(), DatabaseError> {
        self.snapshots.committed();
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        // The old database must be closed first: it holds the file's lock.
        drop(current.take());
        *current = Some(open(&self.path, self.cache_size)?);
        Ok(())
    }
}

fn open(path: &Path, cache_size: usize) -> Result<Database, DatabaseError> {
    Database::builder().set_cache_size(cache_size).create(path)
}

fn closed() -> TransactionError {
    TransactionError::Storage(StorageError::DatabaseClosed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redb_failures_map_to_their_kinds() {
        let io = |error: std::io::Error| storage(redb::StorageError::Io(error));
        let full = io(std::io::Error::from_raw_os_error(28));
        assert!(
            matches!(&full, StoreError::Unavailable(why) if why.starts_with("disk full")),
            "{full:?}"
        );
        let broken = io(std::io::Error::other("bad sector"));
        assert!(matches!(&broken, StoreError::Unavailable(why) if why.starts_with("I/O error")));
        assert!(full.is_retryable() && broken.is_retryable());
        assert!(matches!(
            storage(redb::StorageError::Corrupted("bad page".into())),
            StoreError::Corrupt { .. }
        ));
        assert!(matches!(
            storage(redb::TableError::TableDoesNotExist("x".into())),
            StoreError::Internal(_)
        ));
    }

    #[test]
    fn reads_share_a_snapshot_until_a_commit_drops_it() {
        let dir = tempfile::tempdir().expect("a directory");
        let database =
            SharedDatabase::open(&dir.path().join("test.redb"), 1 << 20).expect("opened");
        let write = |value: &[u8]| {
            let txn = database.begin_write().expect("a write");
            txn.open_table(crate::layout::bytes_table("t"))
                .expect("a table")
                .insert(b"k".as_slice(), value)
                .expect("inserted");
            database.commit(txn).expect("committed");
        };
        let read = |snapshot: &Snapshot| {
            let table = snapshot
                .table(crate::layout::bytes_table("t"))
                .expect("the table");
            let value = table.get(b"k".as_slice()).expect("read");
            value.map(|v| v.value().to_vec())
        };
        write(b"1");
        let first = database.snapshot().expect("a snapshot");
        assert!(Arc::ptr_eq(
            &first,
            &database.snapshot().expect("a snapshot")
        ));
        let table = || {
            first
                .table(crate::layout::bytes_table("t"))
                .expect("the table")
        };
        assert!(Arc::ptr_eq(&table(), &table()));
        write(b"2");
        let second = database.snapshot().expect("a snapshot");
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(read(&first), Some(b"1".to_vec()));
        assert_eq!(read(&second), Some(b"2".to_vec()));
        database.reopen().expect("reopened");
        let reopened = database.snapshot().expect("a snapshot");
        assert!(!Arc::ptr_eq(&second, &reopened));
        assert_eq!(read(&reopened), Some(b"2".to_vec()));
    }

    #[test]
    fn a_reopened_database_keeps_its_commits() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("test.redb");
        let database = SharedDatabase::open(&path, 1 << 20).expect("opened");
        let table: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("t");
        let txn = database.begin_write().expect("a write");
        txn.open_table(table)
            .expect("a table")
            .insert("a", 1)
            .expect("inserted");
        database.commit(txn).expect("committed");
        let reader = database.begin_read().expect("a read");
        database.reopen().expect("reopened");
        assert!(database.is_open());
        let txn = database.begin_read().expect("a read");
        let value = txn
            .open_table(table)
            .expect("the table")
            .get("a")
            .expect("read")
            .map(|v| v.value());
        assert_eq!(value, Some(1));
        // A snapshot begun before the reopen does not hold the file's lock.
        drop(reader);
    }
}

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
//! write tries again.
//!
//! [`storage`] says what a redb failure means for a caller.

use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use rave_store::StoreError;
use redb::{
    Database, DatabaseError, Durability, ReadTransaction, ReadableDatabase, StorageError,
    TransactionError, WriteTransaction,
};

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
    /// `None` after a reopen failed; the next reopen tries again.
    current: RwLock<Option<Database>>,
}

impl SharedDatabase {
    pub(crate) fn open(path: &Path, cache_size: usize) -> Result<SharedDatabase, DatabaseError> {
        let database = open(path, cache_size)?;
        Ok(SharedDatabase {
            path: path.to_owned(),
            cache_size,
            current: RwLock::new(Some(database)),
        })
    }

    pub(crate) fn begin_read(&self) -> Result<ReadTransaction, TransactionError> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().ok_or_else(closed)?.begin_read()
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
        txn.commit().map_err(storage)?;
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
        txn.commit().expect("committed");
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

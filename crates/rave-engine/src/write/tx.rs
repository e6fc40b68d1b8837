//! One group's write transaction ([`Tx`]) and how a request applied in it
//! fails ([`Failure`]).

use std::collections::HashMap;

use rave_store::{Item, StoreError, WriteFailure};
use redb::{ReadableTable, WriteTransaction};

use super::packed::EntryWrites;
use crate::catalog::{Catalog, TableState};
use crate::codec::decode_item;
use crate::database::storage;
use crate::layout::{
    BytesTable, CollectionTable, StreamTable, bytes_table, collections_table, stream_table,
};

/// Why a request of a group failed, which decides who else fails with it.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The request's own fault (invalid, a condition, an item it reads
    /// does not decode): it fails alone, having changed nothing, and the
    /// group goes on.
    Request(StoreError),
    /// redb failed inside the shared transaction: the transaction cannot be
    /// trusted, so every request of the group fails.
    Transaction(StoreError),
    /// A failed condition of a request that asked for the items its
    /// conditions saw: fails alone, as `Request` does.
    Refused(WriteFailure),
}

/// What applying a request in a group gives.
pub(crate) type Applied<T> = std::result::Result<T, Failure>;

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Failure {
        Failure::Request(error)
    }
}

macro_rules! redb_failures {
    ($($error:ty),*) => {$(
        impl From<$error> for Failure {
            fn from(error: $error) -> Failure {
                Failure::Transaction(storage(error))
            }
        }
    )*};
}

redb_failures!(redb::Error, redb::StorageError, redb::TableError);

/// One group's write transaction: the redb tables it has opened (each once
/// per group), the tables its requests see, and what they commit with.
pub(crate) struct Tx<'t> {
    pub(crate) txn: &'t WriteTransaction,
    pub(crate) catalog: &'t Catalog,
    /// The commit time of the group's stream records.
    pub(crate) now_ms: u64,
    /// The sequence number of the group's next stream record.
    pub(crate) next_sequence: u64,
    /// The size no write may grow an item collection past.
    pub(crate) max_item_collection_bytes: u64,
    tables: HashMap<String, BytesTable<'t>>,
    streams: HashMap<String, StreamTable<'t>>,
    collections: HashMap<String, CollectionTable<'t>>,
    /// Index entry writes, applied in key order when the group ends
    /// ([`Tx::apply_entry_writes`]).
    pub(crate) entries: EntryWrites,
}

impl<'t> Tx<'t> {
    pub(crate) fn new(
        txn: &'t WriteTransaction,
        catalog: &'t Catalog,
        now_ms: u64,
        next_sequence: u64,
        max_item_collection_bytes: u64,
    ) -> Tx<'t> {
        Tx {
            txn,
            catalog,
            now_ms,
            next_sequence,
            max_item_collection_bytes,
            tables: HashMap::new(),
            streams: HashMap::new(),
            collections: HashMap::new(),
            entries: EntryWrites::default(),
        }
    }

    /// The redb table of items or index entries named `name`.
    pub(crate) fn table(&mut self, name: &str) -> Applied<&mut BytesTable<'t>> {
        if !self.tables.contains_key(name) {
            let table = self.txn.open_table(bytes_table(name))?;
            self.tables.insert(name.to_owned(), table);
        }
        self.tables
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("table vanished".into())))
    }

    pub(crate) fn stream(&mut self, name: &str) -> Applied<&mut StreamTable<'t>> {
        if !self.streams.contains_key(name) {
            let table = self.txn.open_table(stream_table(name))?;
            self.streams.insert(name.to_owned(), table);
        }
        self.streams
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("stream vanished".into())))
    }

    pub(crate) fn collections(&mut self, name: &str) -> Applied<&mut CollectionTable<'t>> {
        if !self.collections.contains_key(name) {
            let table = self.txn.open_table(collections_table(name))?;
            self.collections.insert(name.to_owned(), table);
        }
        self.collections
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("collections vanished".into())))
    }

    /// The bytes of the item collection at partition `prefix`.
    pub(crate) fn collection_size(&mut self, name: &str, prefix: &[u8]) -> Applied<u64> {
        Ok(self
            .collections(name)?
            .get(prefix)?
            .map_or(0, |size| size.value()))
    }

    /// Applies the group's index entry writes: the last thing a group does
    /// before its commit.
    pub(crate) fn apply_entry_writes(&mut self) -> Applied<()> {
        for (name, writes) in std::mem::take(&mut self.entries).into_tables() {
            writes.apply(self.table(&name)?)?;
        }
        Ok(())
    }

    /// The item stored at `key`, as this transaction sees it.
    pub(crate) fn get(&mut self, table: &TableState, key: &[u8]) -> Applied<Option<Item>> {
        let items = self.table(&table.items_table)?;
        match items.get(key)? {
            Some(bytes) => decode_item(bytes.value())
                .map(Some)
                .map_err(|e| Failure::Request(table.corrupt_item(key, e))),
            None => Ok(None),
        }
    }
}

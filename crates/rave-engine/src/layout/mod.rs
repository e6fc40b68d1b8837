//! How the engine lays its state out in the redb file (`rave.redb` in the
//! data directory): the redb tables, their names and keys, and (in
//! [`definition`]) the stored form of a table definition with its
//! migrations.
//!
//! | redb table              | key                                   | value              |
//! |-------------------------|---------------------------------------|--------------------|
//! | `catalog`               | table name                            | table definition   |
//! | `items/<table>`         | `hash(pk) ‖ pk ‖ sk`                  | item               |
//! | `index/<table>/<index>` | `hash(ipk) ‖ ipk ‖ isk ‖ pk ‖ sk`     | projected item (1) |
//! | `stream/<table>`        | sequence number (u64)                 | change record      |
//! | `consumers`             | `table \0 consumer`                   | checkpoint (u64)   |
//! | `meta`                  | `next_sequence`                       | next sequence      |
//! | `index_builds`          | `table \0 index`                      | backfill position  |
//! | `collections/<table>`   | `hash(pk) ‖ pk`                       | collection bytes   |
//! | `expiries/<table>`      | TTL value ‖ `hash(pk) ‖ pk ‖ sk`      | TTL value (text)   |
//! | `expiry_fills`          | table name                            | fill position      |
//!
//! (1) Index entries hold the projected item, as DynamoDB does, so a
//! query page is one range scan with no second lookup per item; the
//! strings the entry's key holds are left out of the value and read back
//! from the key (`entry`).
//! `collections/<table>` exists for tables with local secondary indexes:
//! the size of each item collection, kept by every write in its commit.
//! `expiries/<table>` exists for tables with Time to Live enabled: the
//! items with a TTL value, in its order, for the sweeper (`write::expiries`);
//! `expiry_fills` holds where the filling of a table's queue from its items
//! has got to, while it runs.
//! The stored keys are built by `keys`, items and stream records
//! encoded by `codec`.
//!
//! Everything here is a name or a shape (and the reading of the one
//! counter, [`next_sequence`]): reading and writing the tables is the
//! business of `read`, `write` and `usage`.

pub(crate) mod definition;

use rave_store::Result;
use redb::{ReadableTable, TableDefinition as RedbTable};

use crate::database::storage;

/// Table name → its stored definition ([`definition`]).
pub(crate) const CATALOG: RedbTable<&str, &[u8]> = RedbTable::new("catalog");
/// [`consumer_key`] → the consumer's checkpoint.
pub(crate) const CONSUMERS: RedbTable<&str, u64> = RedbTable::new("consumers");
/// Counters that outlive a restart: [`NEXT_SEQUENCE`] and [`WRITE_PROBE`].
pub(crate) const META: RedbTable<&str, u64> = RedbTable::new("meta");
/// The sequence number the next stream record gets, shared by all tables.
pub(crate) const NEXT_SEQUENCE: &str = "next_sequence";
/// When the last write probe was sent (see `write_health`), in Unix ms.
pub(crate) const WRITE_PROBE: &str = "write_probe";
/// Backfills in progress: [`build_key`] → the stored key of the last item
/// copied (empty before the first chunk).
pub(crate) const INDEX_BUILDS: RedbTable<&str, &[u8]> = RedbTable::new("index_builds");
/// Time to Live queues being filled: table name → the stored key of the
/// last item read (empty before the first chunk).
pub(crate) const EXPIRY_FILLS: RedbTable<&str, &[u8]> = RedbTable::new("expiry_fills");

/// A redb table of a table's items or of one of its indexes: stored key →
/// encoded item.
pub(crate) type BytesTable<'t> = redb::Table<'t, &'static [u8], &'static [u8]>;
/// A redb table of a table's change stream: sequence number → record.
pub(crate) type StreamTable<'t> = redb::Table<'t, u64, &'static [u8]>;
/// A redb table of a table's item collection sizes: partition prefix → bytes.
pub(crate) type CollectionTable<'t> = redb::Table<'t, &'static [u8], u64>;

pub(crate) fn bytes_table(name: &str) -> RedbTable<'_, &'static [u8], &'static [u8]> {
    RedbTable::new(name)
}

pub(crate) fn stream_table(name: &str) -> RedbTable<'_, u64, &'static [u8]> {
    RedbTable::new(name)
}

pub(crate) fn collections_table(name: &str) -> RedbTable<'_, &'static [u8], u64> {
    RedbTable::new(name)
}

/// The name of the redb table of `table`'s items.
pub(crate) fn items_table_name(table: &str) -> String {
    format!("items/{table}")
}

/// The name of the redb table of the entries of `table`'s index `index`.
pub(crate) fn index_table_name(table: &str, index: &str) -> String {
    format!("index/{table}/{index}")
}

/// The name of the redb table of `table`'s change stream.
pub(crate) fn stream_table_name(table: &str) -> String {
    format!("stream/{table}")
}

/// The name of the redb table of `table`'s item collection sizes.
pub(crate) fn collections_table_name(table: &str) -> String {
    format!("collections/{table}")
}

/// The name of the redb table of `table`'s items queued by TTL value.
pub(crate) fn expiries_table_name(table: &str) -> String {
    format!("expiries/{table}")
}

/// The key of a consumer's checkpoint in [`CONSUMERS`].
pub(crate) fn consumer_key(table: &str, consumer: &str) -> String {
    format!("{table}\u{0}{consumer}")
}

/// The key of an index's backfill in [`INDEX_BUILDS`].
pub(crate) fn build_key(table: &str, index: &str) -> String {
    format!("{table}\u{0}{index}")
}

/// The table a [`consumer_key`] or [`build_key`] belongs to, and the rest.
pub(crate) fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('\u{0}')
}

/// The stored [`NEXT_SEQUENCE`] of an opened [`META`] (1 in a new file).
pub(crate) fn next_sequence(meta: &impl ReadableTable<&'static str, u64>) -> Result<u64> {
    Ok(meta
        .get(NEXT_SEQUENCE)
        .map_err(storage)?
        .map_or(1, |v| v.value()))
}

//! rave's embedded storage engine: DynamoDB's semantics on one machine.
//!
//! The engine stores DynamoDB tables in one redb database file and
//! implements [`rave_store::Store`]: items with global secondary indexes
//! (sparse, with projections) maintained in the same transaction as the
//! item, conditional and transactional writes, queries and parallel scans,
//! capacity accounting and a change stream.
//!
//! The redb file's layout (its tables, keys and stored table definitions)
//! is `layout`'s.
//!
//! Reads run on the caller's thread against a snapshot; writes go to one
//! writer thread that batches concurrent requests into a shared commit
//! (see `write`).
//!
//! Failures are reported by kind (`rave_store::StoreError`), so a caller
//! knows what to do without knowing redb:
//!
//! | kind | where the engine reports it | retryable |
//! |---|---|---|
//! | `Unavailable` | a redb I/O error, a full disk, a closed or poisoned database, a stopped writer | yes |
//! | `Corrupt` | an item, index entry, stream record or catalog entry that does not decode (named by table and key, e.g. `item {PK="a", SK="b"} of table rave`); a damaged redb page | no |
//! | `Internal` | a broken invariant (a poisoned lock, an impossible reply) | no |
//! | `ItemCollectionSizeLimitExceeded` | a write that would grow an item collection past its limit | no |
//!
//! `Throttled` and `TransactionConflict` are DynamoDB's alone. Callers retry
//! with `rave_store::Retry`, which retries exactly the kinds
//! `StoreError::is_retryable` names.
//!
//! Modules, from the API down: `engine` ([`Engine`]); `feed` (the stream
//! as a `ChangeFeed`); `read` and `write` (the two paths); `usage`;
//! `catalog` (the tables and how items map to stored keys and index
//! entries), `ttl` and `stream` (their rules and types); `layout`,
//! `codec`, `entry` and `keys` (the stored forms); `database` (the redb file
//! and what its failures mean); `clock`.

#![warn(unreachable_pub)]

mod catalog;
mod clock;
mod codec;
mod database;
mod engine;
mod entry;
mod feed;
mod keys;
mod layout;
mod read;
mod snapshot;
mod stream;
mod ttl;
mod usage;
mod write;
mod write_health;

pub use catalog::{IndexChange, IndexDescription, IndexStatus};
pub use clock::{Clock, ManualClock};
pub use database::DATABASE_FILE;
pub use engine::{Engine, EngineOptions, MAX_ITEM_COLLECTION_BYTES};
pub use feed::{EngineBatch, EngineFeed};
pub use stream::{Checkpoint, EventName, StartPosition, StreamRecord};
pub use ttl::{TimeToLiveDescription, TimeToLiveSpecification, TimeToLiveStatus};
pub use usage::{PartUsage, StorageUsage, TablePart};
pub use write::queue::{ItemCollectionSize, Written};

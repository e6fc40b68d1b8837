//! The change stream: one record per committed item change (INSERT, MODIFY
//! or REMOVE, the keys, the old and new images, the commit time), written in
//! the same redb transaction as the change, keyed by a strictly increasing
//! sequence number. A write that changes nothing appends nothing. Reading
//! from a position is a range scan, so its cost does not depend on how long
//! the stream is.
//!
//! Sequence numbers are never reused, even after trimming and restarts: the
//! next number is persisted with each commit that produces records.
//! Consumers register durably, read from a sequence number, wait on a watch
//! channel for new commits, and checkpoint with a compare-and-set; a
//! consumer can commit its own writes and its checkpoint in one transaction
//! (`Engine::transact_with_checkpoint`), so a retried batch is refused whole
//! and its effects apply exactly once. Records are trimmed once every
//! registered consumer has passed them and they are older than the
//! retention (24 hours by default).
//!
//! A REMOVE made by Time to Live is marked (`removed_by_ttl`, stored as an
//! event byte of its own), as DynamoDB Streams marks it with the service's
//! `userIdentity`; `rave_store::ChangeRecord` carries the mark on both
//! backends.
//!
//! `read` reads a consumer's next records, a long backlog on two threads.

mod read;

pub(crate) use read::{WantedRecords, read_wanted};

use serde::{Deserialize, Serialize};

use rave_store::Item;

/// What happened to the item (DynamoDB Streams' `eventName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventName {
    Insert,
    Modify,
    Remove,
}

/// One change of one item, with both images (NEW_AND_OLD_IMAGES).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamRecord {
    pub sequence: u64,
    pub event: EventName,
    /// The table's key attributes of the item.
    pub keys: Item,
    pub old_image: Option<Item>,
    pub new_image: Option<Item>,
    /// Milliseconds since the Unix epoch at which the change committed.
    pub commit_time_ms: u64,
    /// A REMOVE made by Time to Live, not by a request.
    pub removed_by_ttl: bool,
}

/// The stored form: the sequence number is the redb key.
pub(crate) struct StoredRecord {
    pub(crate) event: EventName,
    pub(crate) keys: Item,
    pub(crate) old_image: Option<Item>,
    pub(crate) new_image: Option<Item>,
    pub(crate) commit_time_ms: u64,
    pub(crate) removed_by_ttl: bool,
}

impl StoredRecord {
    pub(crate) fn into_record(self, sequence: u64) -> StreamRecord {
        StreamRecord {
            sequence,
            event: self.event,
            keys: self.keys,
            old_image: self.old_image,
            new_image: self.new_image,
            commit_time_ms: self.commit_time_ms,
            removed_by_ttl: self.removed_by_ttl,
        }
    }
}

/// Where a newly registered consumer starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartPosition {
    /// The oldest record still kept.
    TrimHorizon,
    /// Only records committed after registration.
    Latest,
    /// Records after this sequence number.
    After(u64),
}

/// A consumer's durable position: it has applied every record up to and
/// including `sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub table: String,
    pub consumer: String,
    /// The position the consumer read from; the write is refused (as a
    /// failed condition) unless the stored checkpoint still equals it, so a
    /// batch applied once is never applied twice.
    pub expected: u64,
    pub sequence: u64,
}

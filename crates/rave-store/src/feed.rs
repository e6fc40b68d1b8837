//! A table's change stream as a consumer sees it, whatever the backend:
//! the embedded engine's stream, or DynamoDB Streams.
//!
//! A consumer reads a batch, computes its effects, and hands both back to
//! [`ChangeFeed::commit`], which applies the effects and moves the
//! consumer's position past the batch as one unit: a batch is applied
//! exactly once, even when the consumer crashes and starts again.
//!
//! Most consumers want a few kinds of item, and the kind is in the key.
//! `ChangeFeed::next_wanted` takes a `KeyFilter` over a record's keys, so a
//! feed may pass over the records the consumer refuses without decoding
//! their images (the engine's does: committing the batch moves past them,
//! and `ChangeBatch::passed` counts them), or hand them out anyway (DynamoDB
//! Streams delivers whole records), and the consumer ignores them.

use std::future::Future;
use std::time::Duration;

use crate::{Item, Result, TransactWriteAction};

/// One change of one item (NEW_AND_OLD_IMAGES).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRecord {
    pub old_image: Option<Item>,
    pub new_image: Option<Item>,
    /// Milliseconds since the Unix epoch at which the change committed.
    pub commit_time_ms: u64,
    /// A REMOVE made by Time to Live rather than by a request (DynamoDB
    /// Streams' `userIdentity` of type `Service`, principal
    /// `dynamodb.amazonaws.com`).
    pub removed_by_ttl: bool,
}

/// Records read from a feed, not yet applied.
pub trait ChangeBatch: Send {
    fn records(&self) -> &[ChangeRecord];
    /// Keeps only the first `len` records; the rest come again next time.
    fn truncate(&mut self, len: usize);
    /// How many stream records committing the batch moves past: its
    /// records, and those the feed passed over unread (see
    /// [`ChangeFeed::next_wanted`]) before the first record it no longer keeps.
    fn passed(&self) -> usize {
        self.records().len()
    }

    /// Lets go of the records' images once the consumer has counted them:
    /// it commits the batch later, by its place in the stream alone, and
    /// may read and count the next batch meanwhile. The records stay, with
    /// neither image. A feed whose images are not worth freeing early keeps
    /// them.
    fn release_images(&mut self) {}
}

/// Which changes a consumer wants, judged from the changed item's key
/// attributes alone: a record's keys say what kind of item it is, so a feed
/// can pass over the rest without decoding their images.
pub type KeyFilter = fn(&Item) -> bool;

/// How far a consumer is behind the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedLag {
    /// Position of the last applied record (a sequence number).
    pub position: u64,
    /// Position of the newest committed record.
    pub latest: u64,
    /// Records committed but not applied yet.
    pub events: u64,
    /// Age of the oldest record not applied yet, in milliseconds (0 when none).
    pub millis: u64,
}

pub trait ChangeFeed: Send + Sync + 'static {
    type Batch: ChangeBatch;

    /// Up to `max_records` records after the consumer's position, waiting
    /// at most `wait` for some to arrive; `None` when none did.
    fn next(
        &self,
        max_records: usize,
        wait: Duration,
    ) -> impl Future<Output = Result<Option<Self::Batch>>> + Send;

    /// [`ChangeFeed::next`] for a consumer that wants only the records whose
    /// keys pass `wanted`. A feed may pass over the others without handing
    /// them out (committing the batch still moves past them); one that
    /// cannot tell cheaply hands them out, so consumers must still ignore
    /// what they do not want.
    fn next_wanted(
        &self,
        max_records: usize,
        wait: Duration,
        _wanted: KeyFilter,
    ) -> impl Future<Output = Result<Option<Self::Batch>>> + Send {
        self.next(max_records, wait)
    }

    /// The records that follow `batch`, read before `batch` is committed,
    /// so a consumer can work out its next batch while this one commits
    /// (`None`: nothing follows yet). The batch read ahead continues from
    /// `batch`'s end: committing it fails with `ConditionalCheckFailed`
    /// unless `batch` was committed first. A feed that cannot read ahead
    /// answers `None`, and the consumer reads after committing.
    fn next_wanted_after<'a>(
        &'a self,
        batch: &Self::Batch,
        max_records: usize,
        wanted: KeyFilter,
    ) -> impl Future<Output = Result<Option<Self::Batch>>> + Send + use<'a, Self> {
        let _ = (batch, max_records, wanted);
        std::future::ready(Ok(None))
    }

    /// Applies `effects` and moves past `batch`, atomically. Fails with
    /// `ConditionalCheckFailed` (and applies nothing) if another consumer
    /// moved the position first; reading again from the feed recovers.
    fn commit(
        &self,
        batch: Self::Batch,
        effects: Vec<TransactWriteAction>,
    ) -> impl Future<Output = Result<()>> + Send;

    fn lag(&self) -> impl Future<Output = Result<FeedLag>> + Send;

    /// Most effects one [`ChangeFeed::commit`] may carry. On DynamoDB a
    /// commit is a TransactWriteItems of at most 100 actions, one of which
    /// records the position.
    fn max_effects(&self) -> usize {
        MAX_EFFECTS_PER_COMMIT
    }

    /// How many readers may call [`ChangeFeed::next`] and commit at the same
    /// time without taking the same records: a feed of independent shards
    /// hands each reader a shard of its own. One ordered log has one reader.
    fn concurrent_readers(&self) -> usize {
        1
    }
}

/// Most actions a DynamoDB transaction may carry besides the position itself.
const MAX_EFFECTS_PER_COMMIT: usize = 99;

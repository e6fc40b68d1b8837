//! The engine's change stream as a [`ChangeFeed`]: a registered consumer
//! whose checkpoint moves in the same transaction as its effects.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rave_store::{
    ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, KeyFilter, Result, StoreError,
    TransactWriteAction, TransactWriteItemsInput,
};

use crate::engine::Engine;
use crate::stream::{Checkpoint, StartPosition};

/// Most effects one consumer commit carries beside a live service: the
/// commit holds the single writer, and every write a client waits for
/// queues behind it, so it stays short (tens of milliseconds).
const LIVE_EFFECTS: usize = 5_000;

/// Most effects one commit carries while catching up with nothing else
/// writing ([`EngineFeed::catching_up`]): each commit rewrites every page it
/// touches and syncs, so a long batch that writes a busy statistics item
/// once for many comments makes catching up after a bulk load several times
/// faster; such a commit holds the writer for a few hundred milliseconds.
const CATCH_UP_EFFECTS: usize = 100_000;

/// A durable consumer of one table's stream.
#[derive(Debug)]
pub struct EngineFeed {
    engine: Engine,
    table: String,
    consumer: String,
    /// The last sequence number this consumer applied.
    position: AtomicU64,
    /// Most effects one commit carries.
    max_effects: usize,
}

/// Records read but not yet applied, with where they sit in the stream.
#[derive(Debug)]
pub struct EngineBatch {
    records: Vec<ChangeRecord>,
    sequences: Vec<u64>,
    /// Per record, how many records of the stream were read before it
    /// (more than its index when unwanted ones were passed over).
    read_before: Vec<usize>,
    /// The checkpoint the batch was read after.
    after: u64,
    /// The checkpoint committing the batch moves to.
    until: u64,
    /// How many records of the stream that moves past.
    passed: usize,
}

impl ChangeBatch for EngineBatch {
    fn records(&self) -> &[ChangeRecord] {
        &self.records
    }

    fn truncate(&mut self, len: usize) {
        if len >= self.records.len() {
            return;
        }
        // Stop just before the first record dropped: the unwanted records
        // passed over before it are passed for good.
        self.until = self.sequences[len] - 1;
        self.passed = self.read_before[len];
        self.records.truncate(len);
        self.sequences.truncate(len);
        self.read_before.truncate(len);
    }

    fn passed(&self) -> usize {
        self.passed
    }

    fn release_images(&mut self) {
        for record in &mut self.records {
            record.old_image = None;
            record.new_image = None;
        }
    }
}

impl EngineFeed {
    /// Registers (or finds) `consumer` on `table`'s stream; a new consumer
    /// starts from the oldest record kept.
    pub async fn open(engine: Engine, table: &str, consumer: &str) -> Result<EngineFeed> {
        EngineFeed::open_at(engine, table, consumer, StartPosition::TrimHorizon).await
    }

    /// [`EngineFeed::open`] with where a new consumer starts (one already
    /// registered goes on from its checkpoint).
    pub async fn open_at(
        engine: Engine,
        table: &str,
        consumer: &str,
        start: StartPosition,
    ) -> Result<EngineFeed> {
        let position = engine.register_consumer(table, consumer, start).await?;
        Ok(EngineFeed {
            engine,
            table: table.to_owned(),
            consumer: consumer.to_owned(),
            position: AtomicU64::new(position),
            max_effects: LIVE_EFFECTS,
        })
    }

    /// The same consumer committing long batches, for catching up with a
    /// backlog (after a bulk load, before a recount) while no client is
    /// waiting on the writer.
    pub fn catching_up(mut self) -> EngineFeed {
        self.max_effects = CATCH_UP_EFFECTS;
        self
    }

    /// Up to `max_records` wanted records after sequence number `after`.
    fn read(
        &self,
        after: u64,
        max_records: usize,
        wanted: KeyFilter,
    ) -> Result<Option<EngineBatch>> {
        let found = self
            .engine
            .read_wanted_stream(&self.table, after, max_records, wanted)?;
        if found.read == 0 {
            return Ok(None);
        }
        let mut batch = EngineBatch {
            records: Vec::with_capacity(found.records.len()),
            sequences: Vec::with_capacity(found.records.len()),
            read_before: Vec::with_capacity(found.records.len()),
            after,
            until: found.last,
            passed: found.read,
        };
        for (read_before, r) in found.records {
            batch.sequences.push(r.sequence);
            batch.read_before.push(read_before);
            batch.records.push(ChangeRecord {
                old_image: r.old_image,
                new_image: r.new_image,
                commit_time_ms: r.commit_time_ms,
                removed_by_ttl: r.removed_by_ttl,
            });
        }
        Ok(Some(batch))
    }
}

impl ChangeFeed for EngineFeed {
    type Batch = EngineBatch;

    async fn next(&self, max_records: usize, wait: Duration) -> Result<Option<EngineBatch>> {
        self.next_wanted(max_records, wait, |_| true).await
    }

    async fn next_wanted(
        &self,
        max_records: usize,
        wait: Duration,
        wanted: KeyFilter,
    ) -> Result<Option<EngineBatch>> {
        // Subscribe before reading, so a commit between the two is not missed.
        let mut commits = self.engine.subscribe();
        let after = || self.position.load(Ordering::Acquire);
        if let Some(batch) = self.read(after(), max_records, wanted)? {
            return Ok(Some(batch));
        }
        let waited = tokio::time::timeout(wait, commits.changed()).await;
        if let Ok(Err(_closed)) = waited {
            // The writer is gone (the engine is closing): nothing will
            // commit, so wait out the time instead of returning at once.
            tokio::time::sleep(wait).await;
        }
        self.read(after(), max_records, wanted)
    }

    /// Reads on the calling thread while the writer thread commits `batch`.
    fn next_wanted_after<'a>(
        &'a self,
        batch: &EngineBatch,
        max_records: usize,
        wanted: KeyFilter,
    ) -> impl Future<Output = Result<Option<EngineBatch>>> + Send + use<'a> {
        let after = batch.until;
        async move { self.read(after, max_records, wanted) }
    }

    async fn commit(&self, batch: EngineBatch, effects: Vec<TransactWriteAction>) -> Result<()> {
        let last = batch.until;
        if last == batch.after {
            return Ok(());
        }
        let checkpoint = Checkpoint {
            table: self.table.clone(),
            consumer: self.consumer.clone(),
            expected: batch.after,
            sequence: last,
        };
        let outcome = if effects.is_empty() {
            self.engine.checkpoint(checkpoint).await
        } else {
            self.engine
                .transact_with_checkpoint(TransactWriteItemsInput { actions: effects }, checkpoint)
                .await
                .map(|_| ())
        };
        match outcome {
            Ok(()) => {
                self.position.store(last, Ordering::Release);
                Ok(())
            }
            Err(StoreError::ConditionalCheckFailed) => {
                // Someone else moved the checkpoint: continue from theirs.
                if let Some(position) =
                    self.engine.consumer_position(&self.table, &self.consumer)?
                {
                    self.position.store(position, Ordering::Release);
                }
                Err(StoreError::ConditionalCheckFailed)
            }
            Err(error) => Err(error),
        }
    }

    /// The engine commits a consumer's effects and checkpoint in one redb
    /// transaction of any size; this bound only keeps commits short.
    fn max_effects(&self) -> usize {
        self.max_effects
    }

    async fn lag(&self) -> Result<FeedLag> {
        let position = self
            .engine
            .consumer_position(&self.table, &self.consumer)?
            .unwrap_or(0);
        let latest = self.engine.latest_sequence();
        let oldest_pending = self.engine.read_stream(&self.table, position, 1)?;
        let now_ms = self.engine.now_ms();
        Ok(FeedLag {
            position,
            latest,
            // Sequence numbers are shared by the engine's tables, so this
            // counts what is pending on this table and any other.
            events: latest.saturating_sub(position),
            millis: oldest_pending
                .first()
                .map_or(0, |r| now_ms.saturating_sub(r.commit_time_ms)),
        })
    }
}

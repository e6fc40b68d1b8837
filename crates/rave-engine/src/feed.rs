//! The engine's change stream as a [`ChangeFeed`]: a registered consumer
//! whose checkpoint moves in the same transaction as its effects.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rave_store::{
    ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, Result, StoreError, TransactWriteAction,
    TransactWriteItemsInput,
};

use crate::{Checkpoint, Engine, StartPosition};

/// Most effects one consumer commit carries.
const MAX_CONSUMER_EFFECTS: usize = 5_000;

/// A durable consumer of one table's stream.
#[derive(Debug)]
pub struct EngineFeed {
    engine: Engine,
    table: String,
    consumer: String,
    /// The last sequence number this consumer applied.
    position: AtomicU64,
}

/// Records read but not yet applied, with where they sit in the stream.
#[derive(Debug)]
pub struct EngineBatch {
    records: Vec<ChangeRecord>,
    sequences: Vec<u64>,
    /// The checkpoint the batch was read after.
    after: u64,
}

impl ChangeBatch for EngineBatch {
    fn records(&self) -> &[ChangeRecord] {
        &self.records
    }

    fn truncate(&mut self, len: usize) {
        self.records.truncate(len);
        self.sequences.truncate(len);
    }
}

impl EngineFeed {
    /// Registers (or finds) `consumer` on `table`'s stream; a new consumer
    /// starts from the oldest record kept.
    pub async fn open(engine: Engine, table: &str, consumer: &str) -> Result<EngineFeed> {
        let position = engine
            .register_consumer(table, consumer, StartPosition::TrimHorizon)
            .await?;
        Ok(EngineFeed {
            engine,
            table: table.to_owned(),
            consumer: consumer.to_owned(),
            position: AtomicU64::new(position),
        })
    }

    fn read(&self, max_records: usize) -> Result<Option<EngineBatch>> {
        let after = self.position.load(Ordering::Acquire);
        let stream = self.engine.read_stream(&self.table, after, max_records)?;
        if stream.is_empty() {
            return Ok(None);
        }
        let (sequences, records) = stream
            .into_iter()
            .map(|r| {
                (
                    r.sequence,
                    ChangeRecord {
                        old_image: r.old_image,
                        new_image: r.new_image,
                        commit_time_ms: r.commit_time_ms,
                        removed_by_ttl: r.removed_by_ttl,
                    },
                )
            })
            .unzip();
        Ok(Some(EngineBatch {
            records,
            sequences,
            after,
        }))
    }
}

impl ChangeFeed for EngineFeed {
    type Batch = EngineBatch;

    async fn next(&self, max_records: usize, wait: Duration) -> Result<Option<EngineBatch>> {
        // Subscribe before reading, so a commit between the two is not missed.
        let mut commits = self.engine.subscribe();
        if let Some(batch) = self.read(max_records)? {
            return Ok(Some(batch));
        }
        let _ = tokio::time::timeout(wait, commits.changed()).await;
        self.read(max_records)
    }

    async fn commit(&self, batch: EngineBatch, effects: Vec<TransactWriteAction>) -> Result<()> {
        let Some(&last) = batch.sequences.last() else {
            return Ok(());
        };
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
        MAX_CONSUMER_EFFECTS
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

//! A multi-shard change feed over any single feed, for tests: DynamoDB
//! Streams' layout (each item's changes in order on one shard, shards
//! independent of each other) on a backend with one ordered stream.
//!
//! Shard `s` of `n` is a consumer of the whole stream that keeps only the
//! records of items hashing to `s` and steps over the others, so several
//! aggregators can apply different shards at the same time and contend on
//! the statistics items the shards share. A commit yields once before it
//! goes to the store, so that aggregators stepping together all read before
//! any of them writes.

use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rave_store::{
    AttributeValue, ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, KeyFilter, Result, StoreError,
};

/// One shard of a stream, read through `inner`, a consumer of its own.
#[derive(Debug)]
pub struct ShardFeed<F> {
    inner: F,
    shard: u64,
    shards: u64,
}

/// The records of one shard in a batch of the whole stream.
#[derive(Debug)]
pub struct ShardBatch<B> {
    inner: B,
    records: Vec<ChangeRecord>,
    /// Where each kept record sits in `inner`.
    positions: Vec<usize>,
}

impl<B: ChangeBatch> ChangeBatch for ShardBatch<B> {
    fn records(&self) -> &[ChangeRecord] {
        &self.records
    }

    fn truncate(&mut self, len: usize) {
        // Keep the stepped-over records before the first record dropped.
        if let Some(&first_dropped) = self.positions.get(len) {
            self.inner.truncate(first_dropped);
            self.records.truncate(len);
            self.positions.truncate(len);
        }
    }

    fn passed(&self) -> usize {
        self.inner.passed()
    }
}

/// The shard (of `shards`) a record's item belongs to, from its partition key.
pub fn shard_of(record: &ChangeRecord, shards: u64) -> u64 {
    let partition = record
        .new_image
        .as_ref()
        .or(record.old_image.as_ref())
        .and_then(|item| item.get("PK"))
        .and_then(AttributeValue::as_s)
        .unwrap_or("");
    let mut hasher = DefaultHasher::new();
    partition.hash(&mut hasher);
    hasher.finish() % shards
}

impl<F: ChangeFeed> ShardFeed<F> {
    /// Shard `shard` of `shards`, read through `inner` (which no other
    /// shard may share: its position is this shard's).
    pub fn new(inner: F, shard: u64, shards: u64) -> ShardFeed<F> {
        ShardFeed {
            inner,
            shard,
            shards,
        }
    }
}

impl<F: ChangeFeed> ChangeFeed for ShardFeed<F> {
    type Batch = ShardBatch<F::Batch>;

    async fn next(&self, max_records: usize, wait: Duration) -> Result<Option<Self::Batch>> {
        self.next_wanted(max_records, wait, |_| true).await
    }

    async fn next_wanted(
        &self,
        max_records: usize,
        wait: Duration,
        wanted: KeyFilter,
    ) -> Result<Option<Self::Batch>> {
        loop {
            let Some(inner) = self.inner.next_wanted(max_records, wait, wanted).await? else {
                return Ok(None);
            };
            let (positions, records): (Vec<usize>, Vec<ChangeRecord>) = inner
                .records()
                .iter()
                .enumerate()
                .filter(|(_, r)| shard_of(r, self.shards) == self.shard)
                .map(|(i, r)| (i, r.clone()))
                .unzip();
            if !records.is_empty() {
                return Ok(Some(ShardBatch {
                    inner,
                    records,
                    positions,
                }));
            }
            // Nothing of this shard: step over it. Another consumer of the
            // shard stepping over it first is as good.
            match self.inner.commit(inner, Vec::new()).await {
                Ok(()) | Err(StoreError::ConditionalCheckFailed) => {}
                Err(e) => return Err(e),
            }
        }
    }

    async fn commit(
        &self,
        batch: Self::Batch,
        effects: Vec<rave_store::TransactWriteAction>,
    ) -> Result<()> {
        // A commit takes a round trip on DynamoDB: let the other aggregators
        // read and work out their effects meanwhile, as they would there.
        YieldOnce(false).await;
        self.inner.commit(batch.inner, effects).await
    }

    async fn lag(&self) -> Result<FeedLag> {
        self.inner.lag().await
    }

    fn max_effects(&self) -> usize {
        self.inner.max_effects()
    }
}

/// Pending once, so that the other futures of a `join_all` run first.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use rave_store::{AttributeValue, Item};

    use super::*;

    #[test]
    fn every_item_stays_on_one_shard_and_all_shards_are_used() {
        let record = |pk: &str, new: bool| {
            let item = Item::from([("PK".to_owned(), AttributeValue::s(pk))]);
            ChangeRecord {
                old_image: (!new).then(|| item.clone()),
                new_image: new.then_some(item),
                commit_time_ms: 0,
                removed_by_ttl: false,
            }
        };
        let mut used = [false; 4];
        for i in 0..64 {
            let pk = format!("COMMENT#{i}");
            let shard = shard_of(&record(&pk, true), 4);
            assert_eq!(shard, shard_of(&record(&pk, false), 4));
            used[shard as usize] = true;
        }
        assert_eq!(used, [true; 4]);
    }
}

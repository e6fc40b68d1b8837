//! DynamoDB Streams as a [`ChangeFeed`].
//!
//! A stream is a set of shards; a shard's records are ordered, and a child
//! shard may be read only after its parent is finished. Delivery is at
//! least once, so exactly-once effects come from the table: each shard's
//! position is an item (laid out by the table's owner, a
//! [`PositionLayout`]) written in the same transaction as the batch's
//! effects, on the condition that it still holds the position the batch
//! was read after. A batch read
//! twice, by a restarted or a second consumer, fails that condition and
//! applies nothing.
//!
//! Shards are read parents first, each leased to one of the process's
//! readers at a time ([`ChangeFeed::concurrent_readers`]; the CLI's
//! aggregator runs that many), so a shard's records stay in order while
//! shards are applied side by side. The position's layout comes from the
//! table's owner so that the backend never names the domain's attributes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodbstreams::types::{AttributeValue as StreamValue, ShardIteratorType};
use rave_store::{
    AttributeValue, ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, GetItemInput, Item, Number,
    PositionLayout, Result, Store, StoreError, TransactWriteAction, TransactWriteItemsInput,
};

use crate::client::DynamoStore;
use crate::error::map_error;

/// How often the list of shards is read again.
const SHARD_REFRESH: Duration = Duration::from_secs(10);

/// A durable consumer of a table's DynamoDB stream.
///
/// Several readers may share one feed (see [`ChangeFeed::concurrent_readers`]):
/// each [`ChangeFeed::next`] leases a shard no other reader holds, so the
/// shards of a busy stream are read and applied side by side while each
/// shard's records stay in order. The lease ends when the batch is
/// committed or dropped.
#[derive(Debug)]
pub struct StreamsFeed {
    streams: aws_sdk_dynamodbstreams::Client,
    store: DynamoStore,
    table: String,
    consumer: String,
    /// How the table's owner keys and writes the position items.
    positions: Box<dyn PositionLayout>,
    stream_arn: String,
    readers: usize,
    /// Never held across an await.
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Shard id → parent shard id, in the order DynamoDB lists them.
    shards: Vec<(String, Option<String>)>,
    refreshed: Option<Instant>,
    /// The iterator to continue each shard with, when known.
    iterators: HashMap<String, String>,
    /// Each shard's durable position as this feed last read or wrote it
    /// (`None` inside: the shard's start), so that a poll costs no read of
    /// the table; dropped whenever a commit fails, as another consumer may
    /// have moved it.
    positions: HashMap<String, Option<String>>,
    finished: HashSet<String>,
    /// Shards with a batch out to a reader.
    leased: HashSet<String>,
    /// Where the next reader starts looking, so that one busy shard does
    /// not starve the others.
    turn: usize,
    /// Age of the newest record applied, for the lag report.
    lag_ms: u64,
}

impl State {
    /// Continues `shard` with `next`, or marks it finished when the stream
    /// closed it.
    fn continue_with(&mut self, shard: &str, next: Option<String>) {
        match next {
            Some(next) => {
                self.iterators.insert(shard.to_owned(), next);
            }
            None => {
                self.finished.insert(shard.to_owned());
            }
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state holds only positions to resume from; a reader that
    // panicked mid-update leaves nothing that a re-read cannot repair.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One reader's hold on a shard, from its read to its batch's end.
#[derive(Debug)]
struct Lease {
    state: Arc<Mutex<State>>,
    shard: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        lock(&self.state).leased.remove(&self.shard);
    }
}

/// Records of one shard, read after `after` (None: the shard's start).
#[derive(Debug)]
pub struct StreamsBatch {
    lease: Lease,
    after: Option<String>,
    records: Vec<ChangeRecord>,
    sequences: Vec<String>,
    next_iterator: Option<String>,
    truncated: bool,
}

impl ChangeBatch for StreamsBatch {
    fn records(&self) -> &[ChangeRecord] {
        &self.records
    }

    fn truncate(&mut self, len: usize) {
        if len < self.records.len() {
            self.truncated = true;
        }
        self.records.truncate(len);
        self.sequences.truncate(len);
    }
}

fn from_stream(value: &StreamValue) -> Result<AttributeValue> {
    let number = |text: &str| -> Result<Number> {
        text.parse()
            .map_err(|e| StoreError::corrupt("a stream record", format!("malformed number: {e}")))
    };
    Ok(match value {
        StreamValue::S(s) => AttributeValue::S(s.clone()),
        StreamValue::N(n) => AttributeValue::N(number(n)?),
        StreamValue::B(b) => AttributeValue::B(b.as_ref().to_vec()),
        StreamValue::Bool(b) => AttributeValue::Bool(*b),
        StreamValue::Null(_) => AttributeValue::Null,
        StreamValue::L(l) => AttributeValue::L(l.iter().map(from_stream).collect::<Result<_>>()?),
        StreamValue::M(m) => AttributeValue::M(image(m)?),
        StreamValue::Ss(s) => AttributeValue::Ss(s.iter().cloned().collect()),
        StreamValue::Ns(s) => {
            AttributeValue::Ns(s.iter().map(|n| number(n)).collect::<Result<_>>()?)
        }
        StreamValue::Bs(s) => AttributeValue::Bs(s.iter().map(|b| b.as_ref().to_vec()).collect()),
        other => {
            return Err(StoreError::corrupt(
                "a stream record",
                format!("unknown value {other:?}"),
            ));
        }
    })
}

fn image(map: &HashMap<String, StreamValue>) -> Result<Item> {
    map.iter()
        .map(|(k, v)| Ok((k.clone(), from_stream(v)?)))
        .collect::<Result<BTreeMap<_, _>>>()
}

/// Whether stream sequence number `a` comes after `b` (both decimal strings).
fn sequence_after(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    (a.len(), a) > (b.len(), b)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl StreamsFeed {
    /// A consumer of `table`'s stream, named `consumer`, with the stream
    /// client configured like `store`'s (`streams`).
    pub async fn open(
        store: DynamoStore,
        streams: aws_sdk_dynamodbstreams::Client,
        table: &str,
        consumer: &str,
        positions: Box<dyn PositionLayout>,
    ) -> Result<StreamsFeed> {
        let stream_arn = store
            .description(table)
            .await?
            .latest_stream_arn()
            .ok_or_else(|| StoreError::Validation(format!("table {table} has no stream")))?
            .to_owned();
        Ok(StreamsFeed {
            streams,
            store,
            table: table.to_owned(),
            consumer: consumer.to_owned(),
            positions,
            stream_arn,
            readers: 1,
            state: Arc::default(),
        })
    }

    /// Lets `readers` readers (at least one; one unless told) take shards
    /// at the same time.
    pub fn with_concurrent_shards(mut self, readers: usize) -> StreamsFeed {
        self.readers = readers.max(1);
        self
    }

    async fn position(&self, shard: &str) -> Result<Option<String>> {
        let out = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: self.positions.key(&self.consumer, shard),
                consistent_read: true,
            })
            .await?;
        out.item
            .map(|item| self.positions.sequence(&item))
            .transpose()
    }

    async fn refresh_shards(&self) -> Result<()> {
        if lock(&self.state)
            .refreshed
            .is_some_and(|at| at.elapsed() < SHARD_REFRESH)
        {
            return Ok(());
        }
        let mut shards = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let out = self
                .streams
                .describe_stream()
                .stream_arn(&self.stream_arn)
                .set_exclusive_start_shard_id(start.take())
                .send()
                .await
                .map_err(map_error)?;
            let Some(description) = out.stream_description() else {
                break;
            };
            for shard in description.shards() {
                if let Some(id) = shard.shard_id() {
                    shards.push((id.to_owned(), shard.parent_shard_id().map(str::to_owned)));
                }
            }
            match description.last_evaluated_shard_id() {
                Some(last) => start = Some(last.to_owned()),
                None => break,
            }
        }
        let mut state = lock(&self.state);
        state.shards = shards;
        state.refreshed = Some(Instant::now());
        Ok(())
    }

    async fn iterator(&self, shard: &str, after: Option<&str>) -> Result<Option<String>> {
        let request = self
            .streams
            .get_shard_iterator()
            .stream_arn(&self.stream_arn)
            .shard_id(shard);
        let request = match after {
            Some(sequence) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(sequence),
            None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        Ok(request
            .send()
            .await
            .map_err(map_error)?
            .shard_iterator()
            .map(str::to_owned))
    }

    /// Up to `limit` records of the leased shard after its durable
    /// position; `None` (and the lease given back) when it has none new.
    async fn read(&self, lease: Lease, limit: i32) -> Result<Option<StreamsBatch>> {
        let shard = lease.shard.clone();
        let cached = lock(&self.state).positions.get(&shard).cloned();
        let after = match cached {
            Some(after) => after,
            None => {
                let after = self.position(&shard).await?;
                lock(&self.state)
                    .positions
                    .insert(shard.clone(), after.clone());
                after
            }
        };
        let cached = lock(&self.state).iterators.get(&shard).cloned();
        let iterator = match cached {
            Some(iterator) => Some(iterator),
            None => self.iterator(&shard, after.as_deref()).await?,
        };
        let Some(iterator) = iterator else {
            lock(&self.state).finished.insert(shard);
            return Ok(None);
        };
        let out = match self
            .streams
            .get_records()
            .shard_iterator(iterator)
            .limit(limit)
            .send()
            .await
        {
            Ok(out) => out,
            // An iterator that expired, or that points before what the
            // stream still keeps: start again from what it keeps. Records
            // at or before the durable position are dropped below, so a
            // re-read never applies anything twice.
            Err(error)
                if matches!(
                    aws_sdk_dynamodbstreams::error::ProvideErrorMetadata::code(&error),
                    Some("ExpiredIteratorException" | "TrimmedDataAccessException")
                ) =>
            {
                tracing::warn!(shard, %error, "re-reading the shard from the oldest record kept");
                lock(&self.state).iterators.remove(&shard);
                let Some(fresh) = self.iterator(&shard, None).await? else {
                    lock(&self.state).finished.insert(shard);
                    return Ok(None);
                };
                self.streams
                    .get_records()
                    .shard_iterator(fresh)
                    .limit(limit)
                    .send()
                    .await
                    .map_err(map_error)?
            }
            Err(error) => return Err(map_error(error)),
        };
        let next_iterator = out.next_shard_iterator().map(str::to_owned);
        let mut records = Vec::with_capacity(out.records().len());
        let mut sequences = Vec::with_capacity(out.records().len());
        for record in out.records() {
            let Some(change) = record.dynamodb() else {
                continue;
            };
            let sequence = change.sequence_number().unwrap_or_default();
            if after
                .as_deref()
                .is_some_and(|after| !sequence_after(sequence, after))
            {
                continue;
            }
            records.push(ChangeRecord {
                old_image: change.old_image().map(image).transpose()?,
                new_image: change.new_image().map(image).transpose()?,
                commit_time_ms: change
                    .approximate_creation_date_time()
                    .map_or(0, |t| t.to_millis().unwrap_or(0).max(0) as u64),
                removed_by_ttl: crate::convert::removed_by_ttl(record),
            });
            sequences.push(sequence.to_owned());
        }
        if records.is_empty() {
            // Nothing new, or everything read was applied before.
            lock(&self.state).continue_with(&shard, next_iterator);
            return Ok(None);
        }
        Ok(Some(StreamsBatch {
            lease,
            after,
            records,
            sequences,
            next_iterator,
            truncated: false,
        }))
    }
}

/// The shards a reader may take now: not finished, not leased, their
/// parent (if still listed) finished. Each call starts at another one.
fn readable_shards(state: &Mutex<State>) -> Vec<String> {
    let mut state = lock(state);
    let known: HashSet<&str> = state.shards.iter().map(|(id, _)| id.as_str()).collect();
    let mut readable: Vec<String> = state
        .shards
        .iter()
        .filter(|(shard, parent)| {
            let parent_done = parent
                .as_deref()
                .is_none_or(|p| !known.contains(p) || state.finished.contains(p));
            parent_done && !state.finished.contains(shard) && !state.leased.contains(shard)
        })
        .map(|(shard, _)| shard.clone())
        .collect();
    state.turn = state.turn.wrapping_add(1);
    if !readable.is_empty() {
        let start = state.turn % readable.len();
        readable.rotate_left(start);
    }
    readable
}

/// Takes `shard` for one reader, unless another holds it or it finished
/// since it was listed.
fn lease(state: &Arc<Mutex<State>>, shard: String) -> Option<Lease> {
    let mut guard = lock(state);
    if guard.finished.contains(&shard) || !guard.leased.insert(shard.clone()) {
        return None;
    }
    Some(Lease {
        state: Arc::clone(state),
        shard,
    })
}

/// Moves a shard's iterator past an applied batch.
fn advance(state: &mut State, batch: &StreamsBatch) {
    let shard = &batch.lease.shard;
    // A whole batch continues with the iterator GetRecords returned; a
    // truncated one resumes after the position it committed.
    if batch.truncated {
        state.iterators.remove(shard);
    } else {
        state.continue_with(shard, batch.next_iterator.clone());
    }
    if let Some(newest) = batch.records.last() {
        state.lag_ms = now_ms().saturating_sub(newest.commit_time_ms);
    }
}

impl ChangeFeed for StreamsFeed {
    type Batch = StreamsBatch;

    async fn next(&self, max_records: usize, wait: Duration) -> Result<Option<StreamsBatch>> {
        self.refresh_shards().await?;
        let limit = i32::try_from(max_records).unwrap_or(1000).clamp(1, 1000);
        for shard in readable_shards(&self.state) {
            let Some(lease) = lease(&self.state, shard) else {
                continue;
            };
            if let Some(batch) = self.read(lease, limit).await? {
                return Ok(Some(batch));
            }
        }
        tokio::time::sleep(wait).await;
        Ok(None)
    }

    async fn commit(
        &self,
        batch: StreamsBatch,
        mut effects: Vec<TransactWriteAction>,
    ) -> Result<()> {
        let Some(last) = batch.sequences.last().cloned() else {
            return Ok(());
        };
        if effects.is_empty() {
            // Records that change nothing (among them the position writes
            // themselves, which are table items too) move only the iterator:
            // writing the position would put yet another record on the
            // stream. After a restart they are read again and still change
            // nothing; every batch with effects moves the durable position.
            advance(&mut lock(&self.state), &batch);
            return Ok(());
        }
        effects.push(TransactWriteAction::Update {
            table: self.table.clone(),
            key: self.positions.key(&self.consumer, &batch.lease.shard),
            update: self.positions.store(&last),
            condition: Some(self.positions.holds(batch.after.as_deref())),
        });
        let outcome = self
            .store
            .transact_write_items(TransactWriteItemsInput { actions: effects })
            .await;
        let mut state = lock(&self.state);
        match outcome {
            Ok(_) => {
                advance(&mut state, &batch);
                state
                    .positions
                    .insert(batch.lease.shard.clone(), Some(last));
                Ok(())
            }
            Err(StoreError::TransactionCanceled(_) | StoreError::ConditionalCheckFailed) => {
                // Applied already (by us before a restart, or by another
                // consumer): read the position again next time.
                state.iterators.remove(&batch.lease.shard);
                state.positions.remove(&batch.lease.shard);
                Err(StoreError::ConditionalCheckFailed)
            }
            Err(e) => {
                state.iterators.remove(&batch.lease.shard);
                state.positions.remove(&batch.lease.shard);
                Err(e)
            }
        }
        // `state` is released before `batch` (and its lease) drops: locals
        // drop before parameters.
    }

    /// DynamoDB Streams does not say how many records are pending, so only
    /// the age of the newest applied record is reported.
    async fn lag(&self) -> Result<FeedLag> {
        Ok(FeedLag {
            position: 0,
            latest: 0,
            events: 0,
            millis: lock(&self.state).lag_ms,
        })
    }

    fn concurrent_readers(&self) -> usize {
        self.readers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(shards: &[(&str, Option<&str>)]) -> Arc<Mutex<State>> {
        Arc::new(Mutex::new(State {
            shards: shards
                .iter()
                .map(|(id, parent)| ((*id).to_owned(), parent.map(str::to_owned)))
                .collect(),
            ..State::default()
        }))
    }

    #[test]
    fn each_shard_goes_to_one_reader_until_its_lease_ends() {
        let state = stream(&[("a", None), ("b", None), ("c", None)]);
        let first = lease(&state, "a".into()).expect("a is free");
        assert!(lease(&state, "a".into()).is_none(), "a is taken");
        let mut readable = readable_shards(&state);
        readable.sort();
        assert_eq!(readable, ["b", "c"]);
        drop(first);
        assert_eq!(readable_shards(&state).len(), 3, "a is free again");
    }

    #[test]
    fn a_child_shard_waits_for_its_parent() {
        let state = stream(&[
            ("parent", None),
            ("child", Some("parent")),
            ("orphan", Some("gone")),
        ]);
        let mut readable = readable_shards(&state);
        readable.sort();
        assert_eq!(
            readable,
            ["orphan", "parent"],
            "a parent no longer listed counts as done"
        );
        lock(&state).finished.insert("parent".into());
        assert!(
            lease(&state, "parent".into()).is_none(),
            "finished shards are not leased"
        );
        assert!(readable_shards(&state).contains(&"child".to_owned()));
    }

    #[test]
    fn readers_start_at_a_different_shard_each_time() {
        let state = stream(&[("a", None), ("b", None), ("c", None)]);
        let firsts: HashSet<String> = (0..3).map(|_| readable_shards(&state)[0].clone()).collect();
        assert_eq!(
            firsts.len(),
            3,
            "a busy first shard does not starve the rest"
        );
    }
}

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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodbstreams::types::{AttributeValue as StreamValue, ShardIteratorType};
use rave_store::{
    AttributeValue, ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, GetItemInput, Item, Number,
    PositionLayout, Result, Store, StoreError, TransactWriteAction, TransactWriteItemsInput,
};
use tokio::sync::Mutex;

use crate::{DynamoStore, map_error};

/// How often the list of shards is read again.
const SHARD_REFRESH: Duration = Duration::from_secs(10);

/// A durable consumer of a table's DynamoDB stream.
#[derive(Debug)]
pub struct StreamsFeed {
    streams: aws_sdk_dynamodbstreams::Client,
    store: DynamoStore,
    table: String,
    consumer: String,
    /// How the table's owner keys and writes the position items.
    positions: Box<dyn PositionLayout>,
    stream_arn: String,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Shard id → parent shard id, in the order DynamoDB lists them.
    shards: Vec<(String, Option<String>)>,
    refreshed: Option<Instant>,
    /// The iterator to continue each shard with, when known.
    iterators: HashMap<String, String>,
    finished: HashSet<String>,
    /// Age of the newest record applied, for the lag report.
    lag_ms: u64,
}

/// Records of one shard, read after `after` (None: the shard's start).
#[derive(Debug)]
pub struct StreamsBatch {
    shard: String,
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
        let description = store
            .client()
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(map_error)?;
        let stream_arn = description
            .table()
            .and_then(|t| t.latest_stream_arn())
            .ok_or_else(|| StoreError::Validation(format!("table {table} has no stream")))?
            .to_owned();
        Ok(StreamsFeed {
            streams,
            store,
            table: table.to_owned(),
            consumer: consumer.to_owned(),
            positions,
            stream_arn,
            state: Mutex::new(State::default()),
        })
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

    async fn refresh_shards(&self, state: &mut State) -> Result<()> {
        if state
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
}

/// Moves a shard's iterator past an applied batch.
fn advance(state: &mut State, batch: &StreamsBatch) {
    // A whole batch continues with the iterator GetRecords returned; a
    // truncated one resumes from its position (read again from the table).
    match (&batch.next_iterator, batch.truncated) {
        (Some(next), false) => {
            state.iterators.insert(batch.shard.clone(), next.clone());
        }
        (None, false) => {
            state.finished.insert(batch.shard.clone());
        }
        (_, true) => {
            state.iterators.remove(&batch.shard);
        }
    }
    if let Some(newest) = batch.records.last() {
        state.lag_ms = now_ms().saturating_sub(newest.commit_time_ms);
    }
}

impl ChangeFeed for StreamsFeed {
    type Batch = StreamsBatch;

    async fn next(&self, max_records: usize, wait: Duration) -> Result<Option<StreamsBatch>> {
        let mut state = self.state.lock().await;
        self.refresh_shards(&mut state).await?;
        let known: HashSet<String> = state.shards.iter().map(|(id, _)| id.clone()).collect();
        let shards = state.shards.clone();
        for (shard, parent) in shards {
            // Parents first: a child waits until its parent (if still listed) is done.
            let parent_done = parent
                .as_ref()
                .is_none_or(|p| !known.contains(p) || state.finished.contains(p));
            if state.finished.contains(&shard) || !parent_done {
                continue;
            }
            let after = self.position(&shard).await?;
            let iterator = match state.iterators.get(&shard) {
                Some(iterator) => Some(iterator.clone()),
                None => self.iterator(&shard, after.as_deref()).await?,
            };
            let Some(iterator) = iterator else {
                state.finished.insert(shard);
                continue;
            };
            let limit = i32::try_from(max_records).unwrap_or(1000).clamp(1, 1000);
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
                    state.iterators.remove(&shard);
                    let Some(fresh) = self.iterator(&shard, None).await? else {
                        state.finished.insert(shard);
                        continue;
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
            if out.records().is_empty() {
                match &next_iterator {
                    Some(next) => {
                        state.iterators.insert(shard, next.clone());
                    }
                    None => {
                        state.finished.insert(shard);
                    }
                }
                continue;
            }
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
                // Everything read was applied before.
                match next_iterator {
                    Some(next) => state.iterators.insert(shard, next),
                    None => {
                        state.finished.insert(shard);
                        continue;
                    }
                };
                continue;
            }
            return Ok(Some(StreamsBatch {
                shard,
                after,
                records,
                sequences,
                next_iterator,
                truncated: false,
            }));
        }
        drop(state);
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
            let mut state = self.state.lock().await;
            advance(&mut state, &batch);
            return Ok(());
        }
        effects.push(TransactWriteAction::Update {
            table: self.table.clone(),
            key: self.positions.key(&self.consumer, &batch.shard),
            update: self.positions.store(&last),
            condition: Some(self.positions.holds(batch.after.as_deref())),
        });
        let outcome = self
            .store
            .transact_write_items(TransactWriteItemsInput { actions: effects })
            .await;
        let mut state = self.state.lock().await;
        match outcome {
            Ok(_) => {
                advance(&mut state, &batch);
                Ok(())
            }
            Err(StoreError::TransactionCanceled(_) | StoreError::ConditionalCheckFailed) => {
                // Applied already (by us before a restart, or by another
                // consumer): read the position again next time.
                state.iterators.remove(&batch.shard);
                Err(StoreError::ConditionalCheckFailed)
            }
            Err(e) => {
                state.iterators.remove(&batch.shard);
                Err(e)
            }
        }
    }

    /// DynamoDB Streams does not say how many records are pending, so only
    /// the age of the newest applied record is reported.
    async fn lag(&self) -> Result<FeedLag> {
        let state = self.state.lock().await;
        Ok(FeedLag {
            position: 0,
            latest: 0,
            events: 0,
            millis: state.lag_ms,
        })
    }
}

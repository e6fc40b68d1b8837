//! The single writer thread and its group commit.
//!
//! redb allows one write transaction at a time and each durable commit costs
//! an fsync. Every write request is therefore sent to this thread, which
//! drains whatever has queued up, applies the requests one after another in
//! one redb transaction and commits once: N concurrent writers share one
//! fsync. Replies go out only after the commit, so an acknowledged write is
//! durable.
//!
//! Each request is checked completely (validation, conditions, update
//! evaluation, decoding the items it reads) before it mutates anything, so
//! a request that fails leaves the shared transaction untouched and fails
//! alone. Only a failure of redb itself inside the shared transaction (an
//! I/O error, a full disk, a damaged page) or of its commit aborts the
//! whole group, and every request in it gets that error ([`Failure`]).
//! redb then refuses every later transaction, so the writer reopens the
//! database before the next group ([`crate::database`]): a full disk
//! refuses writes while it is full, not until a restart.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use rave_store::{
    BatchWriteItemInput, BatchWriteItemOutput, CancellationReason, ConsumedCapacity,
    DeleteItemInput, Item, MAX_BATCH_WRITE_REQUESTS, MAX_TRANSACT_ACTIONS, MAX_TRANSACTION_BYTES,
    PutItemInput, Result, ReturnValues, ReturnValuesOnConditionCheckFailure, StoreError,
    TableDefinition, TransactWriteAction, TransactWriteItemsInput, TransactWriteItemsOutput,
    Update, UpdateItemInput, WriteFailure, WriteOutput, WriteRequest, add_by_table, item_size,
    write_units,
};
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};
use tokio::sync::{oneshot, watch};

use crate::catalog::{Catalog, IndexEntry, Projected, TableState};
use crate::clock::Clock;
use crate::codec::{RecordHeadFields, decode_item, decode_record, encode_item, encode_record};
use crate::database::SharedDatabase;
use crate::index_build::{self, INDEX_BUILDS, IndexChange, IndexStatus, build_key};
use crate::keys::partition_prefix;
use crate::stream::{Checkpoint, EventName, StartPosition, consumer_key};
use crate::ttl::{self, Expired, TimeToLiveSpecification};
use crate::write_health::{WRITE_PROBE, WriteHealth};
use crate::{
    CATALOG, CONSUMERS, ItemCollectionSize, META, NEXT_SEQUENCE, Written, bytes_table,
    encode_definition, storage,
};

/// How often the writer looks for stream records it may drop.
const TRIM_INTERVAL: Duration = Duration::from_secs(1);
/// Most stream records one trim pass removes, to keep commits short.
const TRIM_BATCH: usize = 10_000;

pub(crate) enum WriteOp {
    CreateTable(TableDefinition),
    DeleteTable(String),
    Put(PutItemInput, ReturnValuesOnConditionCheckFailure),
    Update(UpdateItemInput, ReturnValuesOnConditionCheckFailure),
    Delete(DeleteItemInput, ReturnValuesOnConditionCheckFailure),
    BatchWrite(BatchWriteItemInput),
    /// A transaction, the consumer checkpoint it moves, and what each
    /// action hands back if its condition fails (missing entries: nothing).
    Transact(
        TransactWriteItemsInput,
        Option<Checkpoint>,
        Vec<ReturnValuesOnConditionCheckFailure>,
    ),
    RegisterConsumer {
        table: String,
        consumer: String,
        start: StartPosition,
    },
    Checkpoint(Checkpoint),
    UpdateTimeToLive {
        table: String,
        change: TimeToLiveSpecification,
    },
    UpdateTable {
        table: String,
        change: IndexChange,
    },
    /// Turns the table's change stream on or off.
    UpdateStream {
        table: String,
        enabled: bool,
    },
    /// The sweeper's deletion of items it found expired by `attribute`.
    Expire {
        table: String,
        attribute: String,
        items: Vec<Expired>,
    },
    /// A small write of the engine's own, to learn whether writes commit
    /// again after a failure (see `write_health`).
    Probe,
}

impl WriteOp {
    fn changes_catalog(&self) -> bool {
        matches!(
            self,
            WriteOp::CreateTable(_)
                | WriteOp::DeleteTable(_)
                | WriteOp::UpdateTimeToLive { .. }
                | WriteOp::UpdateTable { .. }
                | WriteOp::UpdateStream { .. }
        )
    }
}

#[derive(Debug)]
pub(crate) enum WriteReply {
    Done,
    Write(Written<WriteOutput>),
    Batch(Written<BatchWriteItemOutput>),
    Transact(Written<TransactWriteItemsOutput>),
    Position(u64),
    /// How many items Time to Live deleted.
    Expired(u64),
    /// A write refused by a condition, with the items the request asked
    /// to see: an error, sent as a reply because the items travel with it.
    Refused(WriteFailure),
}

pub(crate) struct Job {
    pub op: WriteOp,
    pub reply: oneshot::Sender<Result<WriteReply>>,
}

/// Why a request of a group failed, which decides who else fails with it.
#[derive(Debug)]
enum Failure {
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

type Applied<T> = std::result::Result<T, Failure>;

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

redb_failures!(redb::StorageError, redb::TableError);

pub(crate) struct Writer {
    pub db: Arc<SharedDatabase>,
    pub catalog: Arc<Catalog>,
    pub next_sequence: u64,
    pub retention: Duration,
    pub latest_sequence: watch::Sender<u64>,
    pub last_trim: Instant,
    pub max_group: usize,
    pub clock: Clock,
    pub max_item_collection_bytes: u64,
    pub health: Arc<WriteHealth>,
}

impl Writer {
    /// Serves jobs until every sender is gone.
    pub fn run(mut self, jobs: Receiver<Job>) {
        let mut carried: Option<Job> = None;
        loop {
            let first = match carried.take() {
                Some(job) => job,
                // While an index builds, one backfill chunk commits between
                // groups of requests.
                None if self.backfill_step() => match jobs.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty) => continue,
                    Err(TryRecvError::Disconnected) => return,
                },
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
            };
            if first.op.changes_catalog() {
                self.run_catalog_change(first);
                continue;
            }
            let mut group = vec![first];
            while group.len() < self.max_group {
                match jobs.try_recv() {
                    // Catalog changes commit alone, so that no request in a
                    // group sees a table the catalog does not have yet.
                    Ok(job) if job.op.changes_catalog() => {
                        carried = Some(job);
                        break;
                    }
                    Ok(job) => group.push(job),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
            self.run_group(group);
        }
    }

    /// Copies one chunk of items into an index that is being created, if
    /// any is; returns whether there was one. The index turns ACTIVE with
    /// its last chunk. A failure is logged and retried on the next call.
    fn backfill_step(&mut self) -> bool {
        let Some((table, index)) = self.catalog.index_being_created() else {
            return false;
        };
        let done = self.db.begin_write().map_err(storage).and_then(|txn| {
            let done = index_build::backfill_chunk(&txn, &table, &table.indexes[index])?;
            txn.commit().map_err(storage)?;
            Ok(done)
        });
        match done {
            Ok(true) => {
                let name = &table.indexes[index].index.name;
                if let Err(error) = self
                    .catalog
                    .insert(table.with_status(name, IndexStatus::Active))
                {
                    tracing::error!(%error, "index backfill could not finish");
                }
            }
            Ok(false) => {}
            Err(error) => {
                tracing::error!(%error, table = table.name(), "index backfill failed; retrying");
                // Leave the writer free for requests before trying again.
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        true
    }

    fn run_group(&mut self, group: Vec<Job>) {
        if !self.db.is_open() {
            self.reopen();
        }
        let first_sequence = self.next_sequence;
        let (ops, replies): (Vec<WriteOp>, Vec<_>) =
            group.into_iter().map(|j| (j.op, j.reply)).unzip();
        let started = Instant::now();
        let committed = self.commit_group(&ops);
        tracing::trace!(
            requests = ops.len(),
            micros = started.elapsed().as_micros() as u64,
            "group commit"
        );
        self.health.committed(committed.as_ref().map(|_| ()));
        match committed {
            Ok(outcomes) => {
                if self.next_sequence != first_sequence {
                    self.latest_sequence.send_replace(self.next_sequence - 1);
                }
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    // The requester may have gone away; the write stands.
                    let _ = reply.send(outcome);
                }
            }
            Err(error) => {
                tracing::error!(%error, requests = replies.len(), "group commit failed");
                self.next_sequence = first_sequence;
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
                if matches!(error, StoreError::Unavailable(_)) {
                    self.reopen();
                }
            }
        }
    }

    /// Recovers the database from a failed commit, which redb latches (see
    /// [`crate::database`]). The sequence is read back from the file: a
    /// commit that reported an error may still have reached the disk.
    fn reopen(&mut self) {
        let reopened = self.db.reopen().map_err(storage).and_then(|()| {
            let txn = self.db.begin_read().map_err(storage)?;
            let meta = txn.open_table(META).map_err(storage)?;
            Ok(meta
                .get(NEXT_SEQUENCE)
                .map_err(storage)?
                .map_or(1, |v| v.value()))
        });
        match reopened {
            Ok(next_sequence) => {
                tracing::warn!("database reopened after a failed commit");
                if next_sequence != self.next_sequence {
                    self.next_sequence = next_sequence;
                    self.latest_sequence.send_replace(next_sequence - 1);
                }
            }
            Err(error) => tracing::error!(%error, "database reopen failed; the next write retries"),
        }
    }

    fn commit_group(&mut self, ops: &[WriteOp]) -> Result<Vec<Result<WriteReply>>> {
        let txn = self.db.begin_write().map_err(storage)?;
        let now_ms = self.clock.now_ms();
        let mut outcomes = Vec::with_capacity(ops.len());
        {
            let mut tx = Tx {
                txn: &txn,
                tables: HashMap::new(),
                streams: HashMap::new(),
                collections: HashMap::new(),
                now_ms,
                next_sequence: self.next_sequence,
            };
            for op in ops {
                match self.apply(&mut tx, op) {
                    Ok(reply) => outcomes.push(Ok(reply)),
                    Err(Failure::Request(error)) => outcomes.push(Err(error)),
                    Err(Failure::Refused(failure)) => {
                        outcomes.push(Ok(WriteReply::Refused(failure)));
                    }
                    Err(Failure::Transaction(error)) => return Err(error),
                }
            }
            if tx.next_sequence != self.next_sequence {
                let mut meta = txn.open_table(META).map_err(storage)?;
                meta.insert(NEXT_SEQUENCE, tx.next_sequence)
                    .map_err(storage)?;
            }
            if self.last_trim.elapsed() >= TRIM_INTERVAL {
                self.last_trim = Instant::now();
                match trim_streams(&mut tx, &self.catalog, self.retention) {
                    Ok(()) => {}
                    // Housekeeping must not fail the group's requests: a
                    // record that does not decode stays, and is reported.
                    Err(Failure::Request(error) | Failure::Refused(WriteFailure { error, .. })) => {
                        tracing::error!(%error, "stream trim skipped");
                    }
                    Err(Failure::Transaction(error)) => return Err(error),
                }
            }
            self.next_sequence = tx.next_sequence;
        }
        txn.commit().map_err(storage)?;
        Ok(outcomes)
    }

    fn apply(&self, tx: &mut Tx<'_>, op: &WriteOp) -> Applied<WriteReply> {
        match op {
            WriteOp::Put(input, on_failure) => {
                self.put(tx, input, *on_failure).map(WriteReply::Write)
            }
            WriteOp::Update(input, on_failure) => {
                self.update(tx, input, *on_failure).map(WriteReply::Write)
            }
            WriteOp::Delete(input, on_failure) => {
                self.delete(tx, input, *on_failure).map(WriteReply::Write)
            }
            WriteOp::BatchWrite(input) => self.batch_write(tx, input).map(WriteReply::Batch),
            WriteOp::Transact(input, checkpoint, on_failure) => self
                .transact(tx, input, checkpoint.as_ref(), on_failure)
                .map(WriteReply::Transact),
            WriteOp::RegisterConsumer {
                table,
                consumer,
                start,
            } => self
                .register_consumer(tx, table, consumer, *start)
                .map(WriteReply::Position),
            WriteOp::Probe => {
                let mut meta = tx.txn.open_table(META)?;
                meta.insert(WRITE_PROBE, tx.now_ms)?;
                Ok(WriteReply::Done)
            }
            WriteOp::Checkpoint(checkpoint) => {
                check_checkpoint(tx, checkpoint)?;
                write_checkpoint(tx, checkpoint)?;
                Ok(WriteReply::Done)
            }
            WriteOp::Expire {
                table,
                attribute,
                items,
            } => self
                .expire(tx, table, attribute, items)
                .map(WriteReply::Expired),
            WriteOp::CreateTable(_)
            | WriteOp::DeleteTable(_)
            | WriteOp::UpdateTimeToLive { .. }
            | WriteOp::UpdateTable { .. }
            | WriteOp::UpdateStream { .. } => Err(Failure::Request(StoreError::Internal(
                "catalog change inside a group".into(),
            ))),
        }
    }

    fn put(
        &self,
        tx: &mut Tx<'_>,
        input: &PutItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> Applied<Written<WriteOutput>> {
        let table = self.catalog.get(&input.table)?;
        if !matches!(
            input.return_values,
            ReturnValues::None | ReturnValues::AllOld
        ) {
            return Err(Failure::Request(StoreError::validation(
                "ReturnValues can only be ALL_OLD or NONE for PutItem",
            )));
        }
        let key = table.validate_item(&input.item)?;
        let old = tx.get(&table, &key)?;
        check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
        self.check_collections(tx, &[(&table, old.as_ref(), Some(&input.item))])?;
        let consumed = tx.write_item(&table, &key, old.as_ref(), Some(&input.item))?;
        Ok(Written {
            item_collections: tx.collection_sizes(&[(&table, &input.item)])?,
            output: WriteOutput {
                attributes: old.filter(|_| input.return_values == ReturnValues::AllOld),
                consumed,
            },
        })
    }

    fn update(
        &self,
        tx: &mut Tx<'_>,
        input: &UpdateItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> Applied<Written<WriteOutput>> {
        let table = self.catalog.get(&input.table)?;
        let key = table.key_bytes(&input.key)?;
        check_update(&table, &input.update)?;
        let old = tx.get(&table, &key)?;
        check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
        let new = updated_item(&table, &input.key, old.as_ref(), &input.update)?;
        self.check_collections(tx, &[(&table, old.as_ref(), new.as_ref())])?;
        let consumed = tx.write_item(&table, &key, old.as_ref(), new.as_ref())?;
        let item_collections = tx.collection_sizes(&[(&table, &input.key)])?;
        let attributes = match input.return_values {
            ReturnValues::None => None,
            ReturnValues::AllOld => old,
            ReturnValues::AllNew => new,
            ReturnValues::UpdatedOld => updated_attributes(old.as_ref(), &input.update),
            ReturnValues::UpdatedNew => updated_attributes(new.as_ref(), &input.update),
        };
        Ok(Written {
            output: WriteOutput {
                attributes,
                consumed,
            },
            item_collections,
        })
    }

    fn delete(
        &self,
        tx: &mut Tx<'_>,
        input: &DeleteItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> Applied<Written<WriteOutput>> {
        let table = self.catalog.get(&input.table)?;
        if !matches!(
            input.return_values,
            ReturnValues::None | ReturnValues::AllOld
        ) {
            return Err(Failure::Request(StoreError::validation(
                "ReturnValues can only be ALL_OLD or NONE for DeleteItem",
            )));
        }
        let key = table.key_bytes(&input.key)?;
        let old = tx.get(&table, &key)?;
        check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
        // A deletion only shrinks its collection: no limit to check.
        let consumed = tx.write_item(&table, &key, old.as_ref(), None)?;
        Ok(Written {
            item_collections: tx.collection_sizes(&[(&table, &input.key)])?,
            output: WriteOutput {
                attributes: old.filter(|_| input.return_values == ReturnValues::AllOld),
                consumed,
            },
        })
    }

    fn batch_write(
        &self,
        tx: &mut Tx<'_>,
        input: &BatchWriteItemInput,
    ) -> Applied<Written<BatchWriteItemOutput>> {
        let count = input.requests.len();
        if count == 0 || count > MAX_BATCH_WRITE_REQUESTS {
            // DynamoDB's words, which do not name the count.
            return Err(Failure::Request(StoreError::validation(
                "Too many items requested for the BatchWriteItem call",
            )));
        }
        let mut planned = Vec::with_capacity(count);
        for (table_name, request) in &input.requests {
            let table = self.catalog.get(table_name)?;
            let (key, new) = match request {
                WriteRequest::Put(item) => (table.validate_item(item)?, Some(item)),
                WriteRequest::Delete(key) => (table.key_bytes(key)?, None),
            };
            if planned
                .iter()
                .any(|(t, k, _): &(Arc<TableState>, Vec<u8>, _)| {
                    t.name() == table.name() && *k == key
                })
            {
                return Err(Failure::Request(StoreError::validation(
                    "Provided list of item keys contains duplicates",
                )));
            }
            planned.push((table, key, new));
        }
        // Read every old image first: an item that does not decode fails
        // the request before any of its writes touched the transaction.
        let mut olds = Vec::with_capacity(planned.len());
        for (table, key, _) in &planned {
            olds.push(tx.get(table, key)?);
        }
        let changes: Vec<_> = planned
            .iter()
            .zip(&olds)
            .map(|((table, _, new), old)| (table.as_ref(), old.as_ref(), *new))
            .collect();
        self.check_collections(tx, &changes)?;
        let mut consumed = Consumption::default();
        for ((table, key, new), old) in planned.iter().zip(&olds) {
            consumed.add(tx.write_item(table, key, old.as_ref(), *new)?);
        }
        let named: Vec<_> = planned
            .iter()
            .zip(&input.requests)
            .map(|((table, _, _), (_, request))| match request {
                WriteRequest::Put(item) => (table.as_ref(), item),
                WriteRequest::Delete(key) => (table.as_ref(), key),
            })
            .collect();
        Ok(Written {
            item_collections: tx.collection_sizes(&named)?,
            output: BatchWriteItemOutput {
                unprocessed: Vec::new(),
                consumed: consumed.0,
            },
        })
    }

    fn transact(
        &self,
        tx: &mut Tx<'_>,
        input: &TransactWriteItemsInput,
        checkpoint: Option<&Checkpoint>,
        on_failure: &[ReturnValuesOnConditionCheckFailure],
    ) -> Applied<Written<TransactWriteItemsOutput>> {
        let count = input.actions.len();
        // DynamoDB's limit binds TransactWriteItems; a stream consumer's
        // commit (with a checkpoint) is the engine's own and may be larger.
        let limit = if checkpoint.is_some() {
            usize::MAX
        } else {
            MAX_TRANSACT_ACTIONS
        };
        if count == 0 || count > limit {
            return Err(Failure::Request(StoreError::validation(format!(
                "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and {MAX_TRANSACT_ACTIONS} (got {count})"
            ))));
        }
        // Validate the request as a whole before reading anything.
        let mut resolved = Vec::with_capacity(count);
        // A set, not a scan of `resolved`: a consumer's commit carries
        // thousands of actions, and the scan made checking them quadratic.
        let mut targets: HashSet<(String, Vec<u8>)> = HashSet::with_capacity(count);
        for action in &input.actions {
            let table = self.catalog.get(action.table())?;
            let key = match action {
                TransactWriteAction::Put { item, .. } => table.validate_item(item)?,
                TransactWriteAction::Update { key, update, .. } => {
                    check_update(&table, update)?;
                    table.key_bytes(key)?
                }
                TransactWriteAction::Delete { key, .. }
                | TransactWriteAction::ConditionCheck { key, .. } => table.key_bytes(key)?,
            };
            if !targets.insert((table.name().to_owned(), key.clone())) {
                return Err(Failure::Request(StoreError::validation(
                    "Transaction request cannot include multiple operations on one item",
                )));
            }
            resolved.push((table, key));
        }
        if let Some(checkpoint) = checkpoint {
            check_checkpoint(tx, checkpoint)?;
        }
        // Evaluate every action against the current state; change nothing yet.
        let mut reasons = Vec::with_capacity(count);
        let mut writes = Vec::with_capacity(count);
        for (action, (table, key)) in input.actions.iter().zip(&resolved) {
            let old = tx.get(table, key)?;
            let (condition, new) = match action {
                TransactWriteAction::Put {
                    item, condition, ..
                } => (condition.as_ref(), Ok(Some(item.clone()))),
                TransactWriteAction::Update {
                    key: item_key,
                    update,
                    condition,
                    ..
                } => (
                    condition.as_ref(),
                    updated_item(table, item_key, old.as_ref(), update),
                ),
                TransactWriteAction::Delete { condition, .. } => (condition.as_ref(), Ok(None)),
                TransactWriteAction::ConditionCheck { condition, .. } => {
                    (Some(condition), Ok(old.clone()))
                }
            };
            let reason = if check_condition(condition, old.as_ref()).is_err() {
                CancellationReason::ConditionalCheckFailed
            } else {
                match &new {
                    Ok(_) => CancellationReason::None,
                    // The reason carries the message alone: its code is the
                    // variant.
                    Err(StoreError::Validation(message)) => {
                        CancellationReason::ValidationError(message.clone())
                    }
                    Err(other) => return Err(Failure::Request(other.clone())),
                }
            };
            reasons.push(reason);
            let is_check = matches!(action, TransactWriteAction::ConditionCheck { .. });
            writes.push((old, new.ok().flatten(), is_check));
        }
        let aggregate: usize = writes
            .iter()
            .map(|(old, new, _)| {
                let size = |i: &Option<Item>| i.as_ref().map_or(0, item_size);
                size(old).max(size(new))
            })
            .sum();
        if checkpoint.is_none() && aggregate > MAX_TRANSACTION_BYTES {
            return Err(Failure::Request(StoreError::validation(
                "Transaction request cannot be larger than 4 MB",
            )));
        }
        if reasons.iter().any(|r| *r != CancellationReason::None) {
            let old_items: Vec<Option<Item>> = reasons
                .iter()
                .zip(&writes)
                .enumerate()
                .map(|(action, (reason, (old, _, _)))| {
                    let asked = on_failure.get(action)
                        == Some(&ReturnValuesOnConditionCheckFailure::AllOld);
                    old.clone()
                        .filter(|_| asked && *reason == CancellationReason::ConditionalCheckFailed)
                })
                .collect();
            let error = StoreError::TransactionCanceled(reasons);
            return Err(if on_failure.is_empty() {
                Failure::Request(error)
            } else {
                Failure::Refused(WriteFailure { error, old_items })
            });
        }
        let changes: Vec<_> = resolved
            .iter()
            .zip(&writes)
            .map(|((table, _), (old, new, is_check))| match is_check {
                true => (table.as_ref(), None, None),
                false => (table.as_ref(), old.as_ref(), new.as_ref()),
            })
            .collect();
        if let Some(oversized) = self.oversized_collection(tx, &changes)? {
            let reasons = (0..count)
                .map(|action| match action == oversized {
                    true => CancellationReason::ItemCollectionSizeLimitExceeded,
                    false => CancellationReason::None,
                })
                .collect();
            return Err(Failure::Request(StoreError::TransactionCanceled(reasons)));
        }
        let named: Vec<_> = resolved
            .iter()
            .zip(&input.actions)
            .filter_map(|((table, _), action)| match action {
                TransactWriteAction::Put { item, .. } => Some((table.as_ref(), item)),
                TransactWriteAction::Update { key, .. }
                | TransactWriteAction::Delete { key, .. } => Some((table.as_ref(), key)),
                TransactWriteAction::ConditionCheck { .. } => None,
            })
            .collect();
        let mut consumed = Consumption::default();
        for ((table, key), (old, new, is_check)) in resolved.iter().zip(writes) {
            if is_check {
                // A condition check is billed like a write of the item it reads.
                let mut units = ConsumedCapacity::new(table.name());
                units.write_units = write_units(old.as_ref().map_or(0, item_size));
                consumed.add(units);
            } else {
                consumed.add(tx.write_item(table, key, old.as_ref(), new.as_ref())?);
            }
        }
        if let Some(checkpoint) = checkpoint {
            write_checkpoint(tx, checkpoint)?;
        }
        Ok(Written {
            item_collections: tx.collection_sizes(&named)?,
            output: TransactWriteItemsOutput {
                consumed: consumed
                    .0
                    .into_iter()
                    .map(ConsumedCapacity::transactional)
                    .collect(),
            },
        })
    }

    /// Refuses a request whose writes would grow an item collection past
    /// the limit (see [`Writer::oversized_collection`]).
    fn check_collections(&self, tx: &mut Tx<'_>, changes: &[CollectionChange<'_>]) -> Applied<()> {
        match self.oversized_collection(tx, changes)? {
            None => Ok(()),
            Some(_) => Err(Failure::Request(
                // The API reference's words for the exception, with the
                // limit in force (a test's may be smaller than DynamoDB's).
                StoreError::ItemCollectionSizeLimitExceeded(format!(
                    "The total size of an item collection has exceeded the maximum limit of {}",
                    match self.max_item_collection_bytes {
                        bytes if bytes % (1 << 30) == 0 => format!("{} gigabytes", bytes >> 30),
                        bytes => format!("{bytes} bytes"),
                    }
                )),
            )),
        }
    }

    /// The first of `changes` (each a table, an item's old and new image)
    /// whose item collection would end up larger than the limit and larger
    /// than it is: DynamoDB still allows writes that shrink a collection
    /// over the limit. Changes to one collection add up.
    fn oversized_collection(
        &self,
        tx: &mut Tx<'_>,
        changes: &[CollectionChange<'_>],
    ) -> Applied<Option<usize>> {
        // (table, collection, size before, size after), in order first touched.
        let mut sizes: Vec<(&str, Vec<u8>, u64, u64)> = Vec::new();
        for (position, &(table, old, new)) in changes.iter().enumerate() {
            let Some(collections) = &table.collections_table else {
                continue;
            };
            let Some(partition) = old
                .or(new)
                .and_then(|item| item.get(&table.schema().partition.name))
            else {
                continue;
            };
            let prefix = partition_prefix(&[partition]);
            let at = match sizes
                .iter()
                .position(|(name, p, _, _)| *name == table.name() && *p == prefix)
            {
                Some(at) => at,
                None => {
                    let current = tx.collection_size(collections, &prefix)?;
                    sizes.push((table.name(), prefix, current, current));
                    sizes.len() - 1
                }
            };
            let bytes = |item: Option<&Item>| item.map_or(0, |i| table.collection_bytes(i));
            let (_, _, before, after) = &mut sizes[at];
            *after = (*after + bytes(new)).saturating_sub(bytes(old));
            if *after > self.max_item_collection_bytes && *after > *before {
                return Ok(Some(position));
            }
        }
        Ok(None)
    }

    /// Deletes the items that are still as the sweeper found them: the
    /// table's TTL attribute unchanged, the item's TTL value the one that
    /// expired it, and still expired now. Anything else was written in
    /// between, and stays.
    fn expire(
        &self,
        tx: &mut Tx<'_>,
        table: &str,
        attribute: &str,
        items: &[Expired],
    ) -> Applied<u64> {
        let table = self.catalog.get(table)?;
        if table.definition.time_to_live_attribute.as_deref() != Some(attribute) {
            return Ok(0);
        }
        let mut deleted = 0;
        for expired in items {
            let old = match tx.get(&table, &expired.key) {
                Ok(old) => old,
                Err(Failure::Request(error)) => {
                    tracing::error!(%error, "time to live skipped an item");
                    continue;
                }
                Err(failure) => return Err(failure),
            };
            let Some(old) = old else { continue };
            if ttl::expired_value(&old, attribute, tx.now_ms) == Some(expired.value) {
                tx.expire_item(&table, &expired.key, &old)?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    fn register_consumer(
        &self,
        tx: &mut Tx<'_>,
        table: &str,
        consumer: &str,
        start: StartPosition,
    ) -> Applied<u64> {
        let state = self.catalog.get(table)?;
        if !state.definition.stream_enabled {
            return Err(Failure::Request(StoreError::validation(format!(
                "table {table} has no stream"
            ))));
        }
        let mut consumers = tx.txn.open_table(CONSUMERS)?;
        let key = consumer_key(table, consumer);
        if let Some(position) = consumers.get(key.as_str())? {
            return Ok(position.value());
        }
        let position = match start {
            StartPosition::TrimHorizon => 0,
            StartPosition::Latest => tx.next_sequence - 1,
            StartPosition::After(sequence) => sequence,
        };
        consumers.insert(key.as_str(), position)?;
        Ok(position)
    }

    fn run_catalog_change(&mut self, job: Job) {
        let outcome = self.change_catalog(&job.op);
        let _ = job.reply.send(outcome.map(|()| WriteReply::Done));
    }

    fn change_catalog(&mut self, op: &WriteOp) -> Result<()> {
        let txn = self.db.begin_write().map_err(storage)?;
        match op {
            WriteOp::CreateTable(definition) => {
                definition.validate().map_err(StoreError::Validation)?;
                if self.catalog.get(&definition.name).is_ok() {
                    return Err(StoreError::ResourceInUse(format!(
                        "Table already exists: {}",
                        definition.name
                    )));
                }
                let state = TableState::new(definition.clone());
                {
                    let mut catalog = txn.open_table(CATALOG).map_err(storage)?;
                    catalog
                        .insert(
                            definition.name.as_str(),
                            encode_definition(definition)?.as_slice(),
                        )
                        .map_err(storage)?;
                }
                // Create the redb tables now, so readers never meet a missing one.
                for name in std::iter::once(&state.items_table)
                    .chain(state.indexes.iter().map(|i| &i.redb_table))
                {
                    txn.open_table(bytes_table(name)).map_err(storage)?;
                }
                txn.open_table(crate::stream_table(&state.stream_table))
                    .map_err(storage)?;
                if let Some(collections) = &state.collections_table {
                    txn.open_table(collections_table(collections))
                        .map_err(storage)?;
                }
                txn.commit().map_err(storage)?;
                self.catalog.insert(state)
            }
            WriteOp::DeleteTable(name) => {
                let state = self.catalog.get(name)?;
                txn.open_table(CATALOG)
                    .map_err(storage)?
                    .remove(name.as_str())
                    .map_err(storage)?;
                for table in std::iter::once(&state.items_table)
                    .chain(state.indexes.iter().map(|i| &i.redb_table))
                {
                    txn.delete_table(bytes_table(table)).map_err(storage)?;
                }
                txn.delete_table(crate::stream_table(&state.stream_table))
                    .map_err(storage)?;
                if let Some(collections) = &state.collections_table {
                    txn.delete_table(collections_table(collections))
                        .map_err(storage)?;
                }
                {
                    let mut consumers = txn.open_table(CONSUMERS).map_err(storage)?;
                    let prefix = consumer_key(name, "");
                    consumers
                        .retain(|k, _| !k.starts_with(&prefix))
                        .map_err(storage)?;
                    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
                    let prefix = build_key(name, "");
                    builds
                        .retain(|k, _| !k.starts_with(&prefix))
                        .map_err(storage)?;
                }
                txn.commit().map_err(storage)?;
                self.catalog.remove(name)
            }
            WriteOp::UpdateTimeToLive { table, change } => {
                let state = self.catalog.get(table)?;
                let mut definition = state.definition.clone();
                definition.time_to_live_attribute =
                    ttl::changed_attribute(definition.time_to_live_attribute.as_deref(), change)?;
                txn.open_table(CATALOG)
                    .map_err(storage)?
                    .insert(table.as_str(), encode_definition(&definition)?.as_slice())
                    .map_err(storage)?;
                txn.commit().map_err(storage)?;
                self.catalog.insert(state.successor(definition, None))
            }
            WriteOp::UpdateTable { table, change } => {
                let state = self.catalog.get(table)?;
                let next = change_indexes(&txn, &state, change)?;
                txn.commit().map_err(storage)?;
                self.catalog.insert(next)
            }
            WriteOp::UpdateStream { table, enabled } => {
                let state = self.catalog.get(table)?;
                match (state.definition.stream_enabled, enabled) {
                    (true, true) => {
                        return Err(StoreError::validation(format!(
                            "Table already has an enabled stream: TableName: {table}"
                        )));
                    }
                    (false, false) => {
                        return Err(StoreError::validation(format!(
                            "Table has no stream to disable: TableName: {table}"
                        )));
                    }
                    _ => {}
                }
                let mut definition = state.definition.clone();
                definition.stream_enabled = *enabled;
                txn.open_table(CATALOG)
                    .map_err(storage)?
                    .insert(table.as_str(), encode_definition(&definition)?.as_slice())
                    .map_err(storage)?;
                txn.commit().map_err(storage)?;
                self.catalog.insert(state.successor(definition, None))
            }
            _ => Err(StoreError::Internal("not a catalog change".into())),
        }
    }
}

/// Applies UpdateTable's `change` to `state` inside `txn` and returns the
/// table's next state: a new index is created empty, CREATING, with a
/// backfill record; a deleted one loses its entries and any backfill.
fn change_indexes(
    txn: &WriteTransaction,
    state: &TableState,
    change: &IndexChange,
) -> Result<TableState> {
    let mut definition = state.definition.clone();
    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    let next = match change {
        IndexChange::Create(index) => {
            if state
                .indexes
                .iter()
                .any(|i| i.status == IndexStatus::Creating)
            {
                return Err(StoreError::ResourceInUse(format!(
                    "Attempt to change a resource which is still in use: Table is being updated: {}",
                    state.name()
                )));
            }
            if state.index(&index.name).is_ok() {
                return Err(StoreError::validation(format!(
                    "One or more parameter values were invalid: Attempting to create an index which already exists: {}",
                    index.name
                )));
            }
            definition.global_secondary_indexes.push(index.clone());
            definition.validate().map_err(StoreError::Validation)?;
            let next = state.successor(definition.clone(), Some(&index.name));
            let created = next.index(&index.name)?;
            txn.open_table(bytes_table(&created.redb_table))
                .map_err(storage)?;
            builds
                .insert(build_key(state.name(), &index.name).as_str(), [].as_slice())
                .map_err(storage)?;
            next
        }
        IndexChange::Delete(name) => {
            // A local secondary index lives as long as its table.
            let deleted = state
                .indexes
                .iter()
                .find(|i| i.index.name == *name && !i.local)
                .ok_or_else(|| {
                    StoreError::ResourceNotFound(format!(
                        "Requested resource not found: Index: {name} not found on table {}",
                        state.name()
                    ))
                })?;
            txn.delete_table(bytes_table(&deleted.redb_table))
                .map_err(storage)?;
            builds
                .remove(build_key(state.name(), name).as_str())
                .map_err(storage)?;
            definition
                .global_secondary_indexes
                .retain(|i| i.name != *name);
            state.successor(definition.clone(), None)
        }
    };
    txn.open_table(CATALOG)
        .map_err(storage)?
        .insert(state.name(), encode_definition(&definition)?.as_slice())
        .map_err(storage)?;
    Ok(next)
}

/// One item's change as item collections see it: its table, its old and
/// its new image.
type CollectionChange<'a> = (&'a TableState, Option<&'a Item>, Option<&'a Item>);

/// Capacity summed per table, in the order tables were first touched.
#[derive(Default)]
struct Consumption(Vec<ConsumedCapacity>);

impl Consumption {
    fn add(&mut self, units: ConsumedCapacity) {
        add_by_table(&mut self.0, units);
    }
}

fn check_condition(condition: Option<&rave_store::Condition>, old: Option<&Item>) -> Result<()> {
    let Some(condition) = condition else {
        return Ok(());
    };
    let empty = Item::new();
    if condition.evaluate(old.unwrap_or(&empty)) {
        Ok(())
    } else {
        Err(StoreError::ConditionalCheckFailed)
    }
}

/// Rejects updates DynamoDB rejects before looking at the item.
/// A single-item write's condition: when it fails, the item it saw goes
/// back with the error if the request asked for it.
fn check_write_condition(
    condition: Option<&rave_store::Condition>,
    old: Option<&Item>,
    on_failure: ReturnValuesOnConditionCheckFailure,
) -> Applied<()> {
    check_condition(condition, old).map_err(|error| match on_failure {
        ReturnValuesOnConditionCheckFailure::None => Failure::Request(error),
        ReturnValuesOnConditionCheckFailure::AllOld => Failure::Refused(WriteFailure {
            error,
            old_items: vec![old.cloned()],
        }),
    })
}

fn check_update(table: &TableState, update: &Update) -> Result<()> {
    if update.is_empty() {
        // DynamoDB's UpdateItem without an UpdateExpression: it writes the
        // bare key.
        return Ok(());
    }
    update
        .validate()
        .map_err(|e| StoreError::Validation(e.to_string()))?;
    for path in update.paths() {
        if let Some(top) = path.top()
            && table.schema().attributes().any(|a| a.name == top)
        {
            return Err(StoreError::validation(format!(
                "One or more parameter values were invalid: Cannot update attribute {top}. This attribute is part of the key"
            )));
        }
    }
    Ok(())
}

/// The item after `update`. An update of a missing item creates it from its
/// key, unless the update only removes: the API reference (AttributeValueUpdate)
/// says that for a missing item "DELETE - Nothing happens; there is no
/// attribute to delete", and REMOVE and DELETE-from-set on a missing item
/// leave the key alone, so DynamoDB creates no item and no stream record.
/// An update without actions (UpdateItem without an UpdateExpression)
/// writes the bare key: a missing item is created with only its key, an
/// existing one stays as it is.
fn updated_item(
    table: &TableState,
    key: &Item,
    old: Option<&Item>,
    update: &Update,
) -> Result<Option<Item>> {
    let base = old.unwrap_or(key);
    if update.is_empty() {
        return Ok(Some(base.clone()));
    }
    let new = update
        .apply(base)
        .map_err(|e| StoreError::Validation(e.to_string()))?;
    table.validate_item(&new)?;
    if old.is_none() && new == *key {
        return Ok(None);
    }
    Ok(Some(new))
}

/// What UPDATED_OLD and UPDATED_NEW return: the attributes the update
/// wrote, taken from `image` (API reference, UpdateItem: "Returns only the
/// updated attributes"); nothing when none of them is there.
fn updated_attributes(image: Option<&Item>, update: &Update) -> Option<Item> {
    let paths: Vec<rave_store::Path> = update.paths().cloned().collect();
    Some(rave_store::project(image?, &paths)).filter(|item| !item.is_empty())
}

fn check_checkpoint(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Applied<()> {
    let consumers = tx.txn.open_table(CONSUMERS)?;
    let key = consumer_key(&checkpoint.table, &checkpoint.consumer);
    let current = consumers.get(key.as_str())?.map(|v| v.value());
    match current {
        None => Err(Failure::Request(StoreError::validation(format!(
            "consumer {} is not registered on {}",
            checkpoint.consumer, checkpoint.table
        )))),
        Some(current) if current != checkpoint.expected => {
            Err(Failure::Request(StoreError::ConditionalCheckFailed))
        }
        Some(_) if checkpoint.sequence < checkpoint.expected => Err(Failure::Request(
            StoreError::validation("a checkpoint cannot move backwards"),
        )),
        Some(_) => Ok(()),
    }
}

fn write_checkpoint(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Applied<()> {
    let mut consumers = tx.txn.open_table(CONSUMERS)?;
    let key = consumer_key(&checkpoint.table, &checkpoint.consumer);
    consumers.insert(key.as_str(), checkpoint.sequence)?;
    Ok(())
}

/// Drops stream records every consumer has passed and that are older than
/// the retention period.
fn trim_streams(tx: &mut Tx<'_>, catalog: &Catalog, retention: Duration) -> Applied<()> {
    let cutoff = tx.now_ms.saturating_sub(retention.as_millis() as u64);
    let positions: Vec<(String, u64)> = {
        let consumers = tx.txn.open_table(CONSUMERS)?;
        let mut all = Vec::new();
        for entry in consumers.iter()? {
            let (k, v) = entry?;
            if let Some((table, _)) = k.value().split_once('\u{0}') {
                all.push((table.to_owned(), v.value()));
            }
        }
        all
    };
    for name in catalog.names()? {
        let state = catalog.get(&name)?;
        if !state.definition.stream_enabled {
            continue;
        }
        let passed_by_all = positions
            .iter()
            .filter(|(t, _)| *t == name)
            .map(|(_, p)| *p)
            .min()
            .unwrap_or(u64::MAX);
        let stream = tx.stream(&state.stream_table)?;
        let mut doomed = Vec::new();
        for entry in stream.range(..=passed_by_all)? {
            let (sequence, value) = entry?;
            let record = decode_record(value.value())
                .map_err(|e| Failure::Request(state.corrupt_record(sequence.value(), e)))?;
            // Records are in commit order: the first young one ends the pass.
            if record.commit_time_ms >= cutoff || doomed.len() >= TRIM_BATCH {
                break;
            }
            doomed.push(sequence.value());
        }
        for sequence in doomed {
            stream.remove(sequence)?;
        }
    }
    Ok(())
}

type BytesTable<'t> = redb::Table<'t, &'static [u8], &'static [u8]>;
type StreamTable<'t> = redb::Table<'t, u64, &'static [u8]>;
type CollectionTable<'t> = redb::Table<'t, &'static [u8], u64>;

/// The redb table of a table's item collection sizes: partition prefix to bytes.
pub(crate) fn collections_table(name: &str) -> redb::TableDefinition<'_, &'static [u8], u64> {
    redb::TableDefinition::new(name)
}

/// Fills the item collection sizes of `state` from its items when they
/// were never kept (a table created before rave kept them): the
/// collections table is empty while the table has items.
pub(crate) fn measure_collections(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    let Some(name) = &state.collections_table else {
        return Ok(());
    };
    let mut collections = txn.open_table(collections_table(name)).map_err(storage)?;
    if !collections.is_empty().map_err(storage)? {
        return Ok(());
    }
    let items = txn
        .open_table(bytes_table(&state.items_table))
        .map_err(storage)?;
    let mut sizes: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
    for entry in items.iter().map_err(storage)? {
        let (key, value) = entry.map_err(storage)?;
        let item = decode_item(value.value()).map_err(|e| state.corrupt_item(key.value(), e))?;
        if let Some(partition) = item.get(&state.schema().partition.name) {
            *sizes.entry(partition_prefix(&[partition])).or_default() +=
                state.collection_bytes(&item);
        }
    }
    for (prefix, bytes) in sizes {
        collections
            .insert(prefix.as_slice(), bytes)
            .map_err(storage)?;
    }
    Ok(())
}

/// One group's write transaction with the redb tables it has opened.
struct Tx<'t> {
    txn: &'t WriteTransaction,
    tables: HashMap<String, BytesTable<'t>>,
    streams: HashMap<String, StreamTable<'t>>,
    collections: HashMap<String, CollectionTable<'t>>,
    now_ms: u64,
    next_sequence: u64,
}

impl<'t> Tx<'t> {
    fn table(&mut self, name: &str) -> Applied<&mut BytesTable<'t>> {
        if !self.tables.contains_key(name) {
            let table = self.txn.open_table(bytes_table(name))?;
            self.tables.insert(name.to_owned(), table);
        }
        self.tables
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("table vanished".into())))
    }

    fn stream(&mut self, name: &str) -> Applied<&mut StreamTable<'t>> {
        if !self.streams.contains_key(name) {
            let table = self.txn.open_table(crate::stream_table(name))?;
            self.streams.insert(name.to_owned(), table);
        }
        self.streams
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("stream vanished".into())))
    }

    fn collections(&mut self, name: &str) -> Applied<&mut CollectionTable<'t>> {
        if !self.collections.contains_key(name) {
            let table = self.txn.open_table(collections_table(name))?;
            self.collections.insert(name.to_owned(), table);
        }
        self.collections
            .get_mut(name)
            .ok_or_else(|| Failure::Request(StoreError::Internal("collections vanished".into())))
    }

    /// The bytes of the item collection at partition `prefix`.
    fn collection_size(&mut self, name: &str, prefix: &[u8]) -> Applied<u64> {
        Ok(self
            .collections(name)?
            .get(prefix)?
            .map_or(0, |size| size.value()))
    }

    /// The item collections `written` (tables with an item or key of each
    /// write) belong to, with their sizes now; once per collection, in the
    /// order first written.
    fn collection_sizes(
        &mut self,
        written: &[(&TableState, &Item)],
    ) -> Applied<Vec<ItemCollectionSize>> {
        let mut sizes: Vec<(Vec<u8>, ItemCollectionSize)> = Vec::new();
        for &(table, item) in written {
            let Some(collections) = &table.collections_table else {
                continue;
            };
            let partition = &table.schema().partition.name;
            let Some(value) = item.get(partition) else {
                continue;
            };
            let prefix = partition_prefix(&[value]);
            if sizes
                .iter()
                .any(|(p, size)| size.table == table.name() && *p == prefix)
            {
                continue;
            }
            let bytes = self.collection_size(collections, &prefix)?;
            let key = Item::from([(partition.clone(), value.clone())]);
            sizes.push((
                prefix,
                ItemCollectionSize {
                    table: table.name().to_owned(),
                    key,
                    bytes,
                },
            ));
        }
        Ok(sizes.into_iter().map(|(_, size)| size).collect())
    }

    fn get(&mut self, table: &TableState, key: &[u8]) -> Applied<Option<Item>> {
        let items = self.table(&table.items_table)?;
        match items.get(key)? {
            Some(bytes) => decode_item(bytes.value())
                .map(Some)
                .map_err(|e| Failure::Request(table.corrupt_item(key, e))),
            None => Ok(None),
        }
    }

    /// Replaces `old` by `new` (either may be absent): the item, its index
    /// entries and a stream record. Returns the write units DynamoDB charges.
    fn write_item(
        &mut self,
        table: &TableState,
        key: &[u8],
        old: Option<&Item>,
        new: Option<&Item>,
    ) -> Applied<ConsumedCapacity> {
        self.replace_item(table, key, old, new, false)
    }

    /// Deletes `old` on behalf of Time to Live: its stream record says so.
    fn expire_item(&mut self, table: &TableState, key: &[u8], old: &Item) -> Applied<()> {
        self.replace_item(table, key, Some(old), None, true)
            .map(|_| ())
    }

    fn replace_item(
        &mut self,
        table: &TableState,
        key: &[u8],
        old: Option<&Item>,
        new: Option<&Item>,
        removed_by_ttl: bool,
    ) -> Applied<ConsumedCapacity> {
        let old_size = old.map_or(0, item_size);
        let new_size = new.map_or(0, item_size);
        let mut consumed = ConsumedCapacity::new(table.name());
        consumed.write_units = write_units(old_size.max(new_size));
        if old == new {
            // Nothing changes, so nothing is written and no record is produced.
            return Ok(consumed);
        }
        if let Some(collections) = &table.collections_table
            && let Some(partition) = old
                .or(new)
                .and_then(|i| i.get(&table.schema().partition.name))
        {
            let bytes = |item: Option<&Item>| item.map_or(0, |i| table.collection_bytes(i));
            let prefix = partition_prefix(&[partition]);
            let size = (self.collection_size(collections, &prefix)? + bytes(new))
                .saturating_sub(bytes(old));
            let sizes = self.collections(collections)?;
            if size == 0 {
                sizes.remove(prefix.as_slice())?;
            } else {
                sizes.insert(prefix.as_slice(), size)?;
            }
        }
        // The new item is encoded once: for the table, for every index that
        // projects it whole, and for its stream record.
        let new_bytes = new.map(encode_item);
        match &new_bytes {
            Some(bytes) => {
                self.table(&table.items_table)?
                    .insert(key, bytes.as_slice())?;
            }
            None => {
                self.table(&table.items_table)?.remove(key)?;
            }
        }
        let entry_size = |entry: &IndexEntry<'_>, whole: usize| match entry.projected {
            Projected::Whole(_) => whole,
            Projected::Picked(_) => entry.projected.size(),
        };
        for index in &table.indexes {
            let before = old.and_then(|item| table.index_entry(index, item));
            let after = new.and_then(|item| table.index_entry(index, item));
            let units = match (&before, &after) {
                (None, None) => 0.0,
                (Some(b), Some(a)) if b.key == a.key && b.projected == a.projected => 0.0,
                // An entry rewritten in place is charged like an UpdateItem
                // (developer guide, "Item sizes and formats": "the larger of
                // the item sizes before and after the update").
                (Some(b), Some(a)) if b.key == a.key => {
                    write_units(entry_size(b, old_size).max(entry_size(a, new_size)))
                }
                (b, a) => {
                    b.as_ref()
                        .map_or(0.0, |e| write_units(entry_size(e, old_size)))
                        + a.as_ref()
                            .map_or(0.0, |e| write_units(entry_size(e, new_size)))
                }
            };
            let entries = self.table(&index.redb_table)?;
            if let Some(b) = &before
                && after.as_ref().is_none_or(|a| a.key != b.key)
            {
                entries.remove(b.key.as_slice())?;
            }
            if let Some(a) = &after
                && units > 0.0
            {
                match (&new_bytes, &a.projected) {
                    (Some(whole), Projected::Whole(_)) => {
                        entries.insert(a.key.as_slice(), whole.as_slice())?
                    }
                    _ => entries.insert(a.key.as_slice(), a.projected.encode().as_slice())?,
                };
            }
            if units > 0.0 {
                consumed.write_units += units;
                let charged = if index.local {
                    &mut consumed.local_index_units
                } else {
                    &mut consumed.index_units
                };
                charged.insert(index.index.name.clone(), units);
            }
        }
        if table.definition.stream_enabled {
            let event = match (old, new) {
                (None, _) => EventName::Insert,
                (Some(_), Some(_)) => EventName::Modify,
                (Some(_), None) => EventName::Remove,
            };
            let keys = table.schema().key_of(old.or(new).unwrap_or(&Item::new()));
            let head = RecordHeadFields {
                event,
                removed_by_ttl,
                commit_time_ms: self.now_ms,
                keys: &keys,
            };
            let old_bytes = old.map(encode_item);
            let bytes = encode_record(&head, old_bytes.as_deref(), new_bytes.as_deref());
            let sequence = self.next_sequence;
            self.stream(&table.stream_table)?
                .insert(sequence, bytes.as_slice())?;
            self.next_sequence += 1;
        }
        Ok(consumed)
    }
}

#[cfg(test)]
mod tests {
    use rave_conformance::{delete, get, key, put, table_definition};
    use rave_store::{AttributeValue, Number, item};

    use super::*;
    use crate::read;
    use crate::stream::StoredRecord;

    const TABLE: &str = "things";

    /// A writer driven directly, so a test decides exactly which requests
    /// share a group.
    fn writer(dir: &std::path::Path) -> Writer {
        let db = SharedDatabase::open(&dir.join("test.redb"), 1 << 20).expect("a database");
        let mut writer = Writer {
            db: Arc::new(db),
            catalog: Arc::new(Catalog::default()),
            next_sequence: 1,
            retention: Duration::from_secs(60),
            latest_sequence: watch::channel(0).0,
            last_trim: Instant::now(),
            max_group: 1024,
            clock: Clock::System,
            max_item_collection_bytes: crate::MAX_ITEM_COLLECTION_BYTES,
            health: Arc::default(),
        };
        writer
            .change_catalog(&WriteOp::CreateTable(table_definition(TABLE)))
            .expect("table created");
        writer
    }

    /// Runs `ops` as one group and returns each request's outcome.
    fn group(writer: &mut Writer, ops: Vec<WriteOp>) -> Vec<Result<WriteReply>> {
        let (jobs, mut replies): (Vec<Job>, Vec<_>) = ops
            .into_iter()
            .map(|op| {
                let (reply, response) = oneshot::channel();
                (Job { op, reply }, response)
            })
            .unzip();
        writer.run_group(jobs);
        replies
            .iter_mut()
            .map(|r| r.try_recv().expect("answered after the commit"))
            .collect()
    }

    fn read(writer: &Writer, pk: &str) -> Result<Option<Item>> {
        let table = writer.catalog.get(TABLE)?;
        let txn = writer.db.begin_read().map_err(storage)?;
        Ok(read::get_item(&txn, &table, &get(TABLE, key(pk, "s")))?.item)
    }

    fn thing(pk: &str, v: i64) -> Item {
        item! {"PK" => pk, "SK" => "s", "v" => v}
    }

    /// A table with one local index, the way collections are kept for.
    fn local_table(writer: &mut Writer) -> Arc<TableState> {
        let definition = TableDefinition {
            name: "locals".into(),
            local_secondary_indexes: vec![rave_store::LocalSecondaryIndex {
                name: "byV".into(),
                sort_key: rave_store::KeyAttribute::new("v", rave_store::KeyType::N),
                projection: rave_store::Projection::KeysOnly,
            }],
            ..table_definition("locals")
        };
        writer
            .change_catalog(&WriteOp::CreateTable(definition))
            .expect("table created");
        writer.catalog.get("locals").expect("the table")
    }

    fn collection_sizes(writer: &Writer, table: &TableState) -> Vec<(Vec<u8>, u64)> {
        let name = table.collections_table.as_deref().expect("kept");
        let txn = writer.db.begin_read().expect("a snapshot");
        let sizes = txn.open_table(collections_table(name)).expect("the sizes");
        sizes
            .iter()
            .expect("an iterator")
            .map(|entry| {
                let (key, size) = entry.expect("an entry");
                (key.value().to_vec(), size.value())
            })
            .collect()
    }

    #[test]
    fn collections_never_kept_are_measured_from_the_items() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = writer(dir.path());
        let table = local_table(&mut writer);
        let items = [
            item! {"PK" => "a", "SK" => "1", "v" => 1i64},
            item! {"PK" => "a", "SK" => "2"},
            item! {"PK" => "b", "SK" => "1", "v" => 2i64, "note" => "text"},
        ];
        let puts = items
            .iter()
            .map(|item| WriteOp::Put(put("locals", item.clone()), Default::default()))
            .collect();
        assert!(group(&mut writer, puts).iter().all(Result::is_ok));
        let kept = collection_sizes(&writer, &table);
        let expected = |pk: &str| -> u64 {
            items
                .iter()
                .filter(|item| item["PK"] == AttributeValue::from(pk))
                .map(|item| table.collection_bytes(item))
                .sum()
        };
        let partition = |pk: &str| partition_prefix(&[&AttributeValue::from(pk)]);
        let mut wanted = vec![
            (partition("a"), expected("a")),
            (partition("b"), expected("b")),
        ];
        wanted.sort();
        assert_eq!(kept, wanted);

        // As a data directory from before the sizes were kept: none at all.
        let txn = writer.db.begin_write().unwrap();
        let name = table.collections_table.as_deref().unwrap();
        txn.delete_table(collections_table(name)).unwrap();
        txn.commit().unwrap();
        let txn = writer.db.begin_write().unwrap();
        measure_collections(&txn, &table).unwrap();
        txn.commit().unwrap();
        assert_eq!(collection_sizes(&writer, &table), wanted);
    }

    #[test]
    fn a_corrupt_item_fails_only_the_requests_that_read_it() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut writer = writer(dir.path());
        let setup = group(
            &mut writer,
            vec![
                WriteOp::Put(
                    put(TABLE, thing("good", 1)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
                WriteOp::Put(
                    put(TABLE, thing("bad", 1)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
            ],
        );
        assert!(setup.iter().all(Result::is_ok));
        // Damage the stored bytes of one item, as a bad sector or a bug would.
        {
            let table = writer.catalog.get(TABLE).expect("the table");
            let stored = table.key_bytes(&key("bad", "s")).expect("a key");
            let txn = writer.db.begin_write().expect("a write transaction");
            txn.open_table(bytes_table(&table.items_table))
                .expect("the items table")
                .insert(stored.as_slice(), [7u8, 200, 1].as_slice())
                .expect("garbage written");
            txn.commit().expect("committed");
        }

        let outcomes = group(
            &mut writer,
            vec![
                WriteOp::Put(
                    put(TABLE, thing("good", 2)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
                WriteOp::Put(
                    put(TABLE, thing("bad", 2)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
                WriteOp::Put(
                    put(TABLE, thing("new", 1)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
                WriteOp::BatchWrite(BatchWriteItemInput {
                    requests: vec![
                        (TABLE.into(), WriteRequest::Put(thing("batched", 1))),
                        (TABLE.into(), WriteRequest::Delete(key("bad", "s"))),
                    ],
                }),
                WriteOp::Delete(
                    delete(TABLE, key("bad", "s")),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
            ],
        );

        let corrupt = |outcome: &Result<WriteReply>| match outcome {
            Err(StoreError::Corrupt { what, .. }) => {
                what.contains(r#"PK="bad", SK="s""#) && what.contains(TABLE)
            }
            _ => false,
        };
        assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
        assert!(corrupt(&outcomes[1]), "{:?}", outcomes[1]);
        assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
        assert!(corrupt(&outcomes[3]), "{:?}", outcomes[3]);
        assert!(corrupt(&outcomes[4]), "{:?}", outcomes[4]);

        assert_eq!(read(&writer, "good"), Ok(Some(thing("good", 2))));
        assert_eq!(read(&writer, "new"), Ok(Some(thing("new", 1))));
        // The failed batch wrote none of its items.
        assert_eq!(read(&writer, "batched"), Ok(None));
        assert!(matches!(
            read(&writer, "bad"),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn an_added_index_is_creating_until_backfilled_in_chunks_then_active() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut writer = writer(dir.path());
        // 2,500 items: three backfill chunks. Every third has a colour; one
        // has a colour of the wrong type and stays out of the index.
        let items: Vec<WriteOp> = (0..2_500)
            .map(|i| {
                let mut item = thing(&format!("p{i}"), i);
                if i % 3 == 0 {
                    item.insert("COLOR".into(), "red".into());
                }
                if i == 1 {
                    item.insert("COLOR".into(), 7i64.into());
                }
                WriteOp::Put(put(TABLE, item), ReturnValuesOnConditionCheckFailure::None)
            })
            .collect();
        assert!(group(&mut writer, items).iter().all(Result::is_ok));
        let by_color = rave_store::GlobalSecondaryIndex {
            name: "byColor".into(),
            key_schema: rave_store::KeySchema::new(
                rave_store::KeyAttribute::new("COLOR", rave_store::KeyType::S),
                None,
            ),
            projection: rave_store::Projection::KeysOnly,
        };
        writer
            .change_catalog(&WriteOp::UpdateTable {
                table: TABLE.into(),
                change: IndexChange::Create(by_color.clone()),
            })
            .expect("index added");
        let query = |writer: &Writer| {
            let table = writer.catalog.get(TABLE)?;
            let txn = writer.db.begin_read().map_err(storage)?;
            let condition = rave_store::KeyCondition::partition("COLOR", "red");
            read::query(
                &txn,
                &table,
                &rave_store::QueryInput::new(TABLE, Some("byColor"), condition),
            )
        };
        let status = |writer: &Writer| {
            let table = writer.catalog.get(TABLE).expect("the table");
            table.index("byColor").expect("the index").status
        };
        assert_eq!(status(&writer), IndexStatus::Creating);
        assert_eq!(
            query(&writer),
            Err(StoreError::validation(
                "Cannot read from backfilling global secondary index: byColor"
            ))
        );
        // A second index cannot start while this one builds.
        let mut second = by_color.clone();
        second.name = "byColour".into();
        assert!(matches!(
            writer.change_catalog(&WriteOp::UpdateTable {
                table: TABLE.into(),
                change: IndexChange::Create(second),
            }),
            Err(StoreError::ResourceInUse(_))
        ));
        // Writes meanwhile maintain the new index.
        let late = item! {"PK" => "late", "SK" => "s", "COLOR" => "red"};
        assert!(
            group(
                &mut writer,
                vec![WriteOp::Put(
                    put(TABLE, late),
                    ReturnValuesOnConditionCheckFailure::None
                )]
            )[0]
            .is_ok()
        );
        let mut steps = 0;
        while writer.backfill_step() {
            steps += 1;
            assert!(steps <= 3, "three chunks of at most 1,000 items");
        }
        assert_eq!(steps, 3);
        assert_eq!(status(&writer), IndexStatus::Active);
        let page = query(&writer).expect("the index is readable");
        // p0, p3, ... p2499: 834 items, and the late one.
        assert_eq!(page.items.len(), 835);

        writer
            .change_catalog(&WriteOp::UpdateTable {
                table: TABLE.into(),
                change: IndexChange::Delete("byColor".into()),
            })
            .expect("index deleted");
        assert_eq!(
            query(&writer),
            Err(StoreError::validation(
                "The table does not have the specified index: byColor"
            ))
        );
        assert!(!writer.backfill_step());
    }

    #[test]
    fn time_to_live_deletes_only_items_still_as_found() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut writer = writer(dir.path());
        writer.clock = Clock::Manual(crate::ManualClock::starting_at(10_000_000));
        writer
            .change_catalog(&WriteOp::UpdateTimeToLive {
                table: TABLE.into(),
                change: TimeToLiveSpecification {
                    attribute_name: "expires".into(),
                    enabled: true,
                },
            })
            .expect("TTL enabled");
        let expiring = |pk: &str, at: i64| item! {"PK" => pk, "SK" => "s", "expires" => at};
        let setup = group(
            &mut writer,
            vec![
                WriteOp::Put(
                    put(TABLE, expiring("found", 9_000)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
                WriteOp::Put(
                    put(TABLE, expiring("rewritten", 9_500)),
                    ReturnValuesOnConditionCheckFailure::None,
                ),
            ],
        );
        assert!(setup.iter().all(Result::is_ok));
        let table = writer.catalog.get(TABLE).expect("the table");
        let found = |pk: &str, at: i64| Expired {
            key: table.key_bytes(&key(pk, "s")).expect("a key"),
            value: Number::from(at),
        };
        // "rewritten" was found with 9000 but has been written since.
        let outcomes = group(
            &mut writer,
            vec![WriteOp::Expire {
                table: TABLE.into(),
                attribute: "expires".into(),
                items: vec![found("found", 9_000), found("rewritten", 9_000)],
            }],
        );
        assert!(
            matches!(outcomes[..], [Ok(WriteReply::Expired(1))]),
            "{outcomes:?}"
        );
        assert_eq!(read(&writer, "found"), Ok(None));
        assert_eq!(
            read(&writer, "rewritten"),
            Ok(Some(expiring("rewritten", 9_500)))
        );

        let txn = writer.db.begin_read().expect("a read transaction");
        let stream = txn
            .open_table(crate::stream_table(&table.stream_table))
            .expect("the stream");
        let records: Vec<StoredRecord> = stream
            .iter()
            .expect("records")
            .map(|entry| {
                let (_, value) = entry.expect("a record");
                decode_record(value.value()).expect("decodes")
            })
            .collect();
        let last = records.last().expect("a record of the deletion");
        assert_eq!(records.len(), 3);
        assert!(last.removed_by_ttl && last.event == EventName::Remove);
        assert_eq!(last.old_image, Some(expiring("found", 9_000)));
        assert!(records[..2].iter().all(|r| !r.removed_by_ttl));
    }
}

//! `Engine`: opening a store, the `Store` implementation over the reader
//! and the writer thread, and the stream and table API beyond `Store`.
//!
//! Beyond `Store` are what the DynamoDB-compatible endpoint needs and the
//! domain never asks for: UpdateTable (`Engine::update_table` and
//! `Engine::describe_indexes` for indexes, `Engine::update_stream` for the
//! stream), Time to Live, and the `*_with` writes, which hand back what
//! `Store` leaves out: the sizes of the item collections a write touched
//! (`Written`) and, when a condition fails and the caller asks for it
//! (ReturnValuesOnConditionCheckFailure), the item the condition was checked
//! against (`rave_store::WriteFailure`), read in the same transaction, so it
//! is the item that failed the condition. `Store`'s methods never ask, so
//! `StoreError` and the domain stay as they are.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rave_store::{
    AttributeValue, BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput,
    BatchWriteItemOutput, ConsumedCapacity, DeleteItemInput, GetItemInput, GetItemOutput, ItemView,
    ItemVisitor, KeyFilter, Page, PutItemInput, QueryInput, Result,
    ReturnValuesOnConditionCheckFailure, ScanInput, Store, StoreError, TableDefinition,
    TransactWriteItemsInput, TransactWriteItemsOutput, UpdateItemInput, WriteFailure, WriteOutput,
};
use tokio::sync::{oneshot, watch};

use crate::catalog::{Catalog, IndexChange, IndexDescription, TableState};
use crate::clock::Clock;
use crate::database::DATABASE_FILE;
use crate::database::{SharedDatabase, storage};
use crate::layout::{CONSUMERS, consumer_key, stream_table};
use crate::snapshot::Snapshot;
use crate::stream::{self, Checkpoint, StartPosition, StreamRecord, WantedRecords};
use crate::ttl::{TimeToLiveDescription, TimeToLiveSpecification, TimeToLiveStatus};
use crate::usage::StorageUsage;
use crate::write::queue::Written;
use crate::write::queue::{Answer, Job, WriteOp, WriteReply, unexpected};
use crate::write::sweeper::{SweepPass, Sweeper};
use crate::write::writer::Writer;
use crate::write_health::WriteHealth;
use crate::{read, usage, write};

/// How the engine is opened.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Stream records are kept at least this long, and until every
    /// registered consumer has passed them.
    pub stream_retention: Duration,
    /// redb's page cache, in bytes.
    pub cache_size: usize,
    /// Most write requests one commit takes. 1 turns group commit off (one
    /// fsync per request), which only benchmarks should want.
    pub max_commit_group: usize,
    /// Whether each group of requests commits durably (an fsync) before
    /// its replies go out: true but for a bulk load that acknowledges
    /// nothing until it ends (`rave load`). Its groups then commit without
    /// an fsync, and the next durable commit (a catalog change, such as
    /// [`Engine::build_deferred_indexes`]'s) makes every one before it
    /// durable at once; a crash before that loses them all.
    pub durable_groups: bool,
    /// How often Time to Live looks for expired items. DynamoDB promises
    /// deletion within days; a minute keeps expired items few without
    /// scanning all the time.
    pub ttl_sweep_interval: Duration,
    /// The time for stream records, retention and Time to Live.
    pub clock: Clock,
    /// Largest item collection (one partition key value's items and their
    /// local secondary index entries) of a table with local secondary
    /// indexes: a write that would grow one past it fails with
    /// `ItemCollectionSizeLimitExceeded`. DynamoDB's limit, 10 GB, unless
    /// a test wants to reach it.
    pub max_item_collection_bytes: u64,
}

/// DynamoDB's limit on an item collection: 10 GB.
pub const MAX_ITEM_COLLECTION_BYTES: u64 = 10 * 1024 * 1024 * 1024;

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            stream_retention: Duration::from_secs(24 * 60 * 60),
            cache_size: 256 * 1024 * 1024,
            max_commit_group: 1024,
            durable_groups: true,
            ttl_sweep_interval: Duration::from_secs(60),
            clock: Clock::System,
            max_item_collection_bytes: MAX_ITEM_COLLECTION_BYTES,
        }
    }
}

/// An open embedded database. Cheap to clone; all clones share one database.
#[derive(Debug, Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    db: Arc<SharedDatabase>,
    catalog: Arc<Catalog>,
    /// `None` only while shutting down.
    jobs: Option<Sender<Job>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// Dropping it stops the Time to Live sweeper.
    stop_sweeper: Option<Sender<()>>,
    sweeper: Mutex<Option<JoinHandle<()>>>,
    latest_sequence: watch::Receiver<u64>,
    write_health: Arc<WriteHealth>,
    clock: Clock,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The sweeper holds a sender of the writer's queue: stop it first.
        self.stop_sweeper.take();
        if let Ok(mut sweeper) = self.sweeper.lock()
            && let Some(handle) = sweeper.take()
        {
            let _ = handle.join();
        }
        // Closing the queue ends the writer once it has committed what it holds.
        self.jobs.take();
        if let Ok(mut writer) = self.writer.lock()
            && let Some(handle) = writer.take()
        {
            let _ = handle.join();
        }
    }
}

impl Engine {
    /// Opens (or creates) the database in directory `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Engine> {
        Engine::open_with(dir, EngineOptions::default())
    }

    pub fn open_with(dir: impl AsRef<Path>, options: EngineOptions) -> Result<Engine> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| {
            StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
        })?;
        let path = dir.join(DATABASE_FILE);
        let db = SharedDatabase::open(&path, options.cache_size).map_err(|e| match storage(e) {
            StoreError::Unavailable(why) => {
                StoreError::Unavailable(format!("cannot open {}: {why}", path.display()))
            }
            other => other,
        })?;
        let db = Arc::new(db);
        let catalog = Arc::new(Catalog::default());
        let next_sequence = write::startup::load(&db, &catalog)?;
        let (latest_tx, latest_rx) = watch::channel(next_sequence - 1);
        let write_health = Arc::new(WriteHealth::default());
        let (jobs_tx, jobs_rx) = mpsc::channel();
        let writer = Writer {
            db: db.clone(),
            catalog: catalog.clone(),
            next_sequence,
            retention: options.stream_retention,
            latest_sequence: latest_tx,
            last_trim: Instant::now(),
            max_group: options.max_commit_group.max(1),
            durable_groups: options.durable_groups,
            clock: options.clock.clone(),
            max_item_collection_bytes: options.max_item_collection_bytes,
            health: write_health.clone(),
            build_sizes: Default::default(),
        };
        let handle = std::thread::Builder::new()
            .name("rave-writer".into())
            .spawn(move || writer.run(jobs_rx))
            .map_err(|e| StoreError::Unavailable(format!("cannot start the writer thread: {e}")))?;
        let (stop_sweeper, stop) = mpsc::channel();
        let sweeper = Sweeper {
            db: db.clone(),
            catalog: catalog.clone(),
            jobs: jobs_tx.clone(),
            clock: options.clock.clone(),
            interval: options.ttl_sweep_interval,
            stop,
        };
        // Built before the sweeper starts, so that an error below still
        // stops the writer (the Drop of Inner).
        let mut inner = Inner {
            path,
            db,
            catalog,
            jobs: Some(jobs_tx),
            writer: Mutex::new(Some(handle)),
            stop_sweeper: Some(stop_sweeper),
            sweeper: Mutex::new(None),
            latest_sequence: latest_rx,
            write_health,
            clock: options.clock,
        };
        let sweeper = std::thread::Builder::new()
            .name("rave-ttl".into())
            .spawn(move || sweeper.run())
            .map_err(|e| StoreError::Unavailable(format!("cannot start the TTL thread: {e}")))?;
        inner.sweeper = Mutex::new(Some(sweeper));
        Ok(Engine {
            inner: Arc::new(inner),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Names of the tables, sorted.
    pub fn table_names(&self) -> Result<Vec<String>> {
        self.inner.catalog.names()
    }

    pub async fn delete_table(&self, table: &str) -> Result<()> {
        self.submit(WriteOp::DeleteTable(table.to_owned()))
            .await
            .map(|_| ())
    }

    /// Adds or deletes a global secondary index of `table` (UpdateTable).
    /// An added index is CREATING until the writer has backfilled it from
    /// the table's items, then ACTIVE (see [`Engine::describe_indexes`]);
    /// a Query or Scan of it is refused until then. One index is created at
    /// a time per table.
    pub async fn update_table(&self, table: &str, change: IndexChange) -> Result<()> {
        self.submit(WriteOp::UpdateTable {
            table: table.to_owned(),
            change,
        })
        .await
        .map(|_| ())
    }

    /// Leaves `table`'s indexes out of the writes that follow, for a bulk
    /// load that has the store to itself: the indexes are emptied and
    /// CREATING (unreadable) until [`Engine::build_deferred_indexes`]
    /// builds them from the items, each leaf written once. An engine
    /// stopped before that backfills them when it opens again.
    pub async fn defer_indexes(&self, table: &str) -> Result<()> {
        self.submit(WriteOp::DeferIndexes(table.to_owned()))
            .await
            .map(|_| ())
    }

    /// Builds the indexes [`Engine::defer_indexes`] deferred, from the
    /// table's items, and makes them ACTIVE. The writer does nothing else
    /// meanwhile (tens of seconds for a million items).
    pub async fn build_deferred_indexes(&self, table: &str) -> Result<()> {
        self.submit(WriteOp::BuildDeferredIndexes(table.to_owned()))
            .await
            .map(|_| ())
    }

    /// Turns `table`'s change stream on or off (UpdateTable's
    /// StreamSpecification). Records of earlier changes stay readable until
    /// the retention trims them; a table's stream records nothing while off.
    /// Enabling an enabled stream, or disabling one that is off, is refused
    /// with DynamoDB's message.
    pub async fn update_stream(&self, table: &str, enabled: bool) -> Result<()> {
        self.submit(WriteOp::UpdateStream {
            table: table.to_owned(),
            enabled,
        })
        .await
        .map(|_| ())
    }

    /// The global secondary indexes of `table` with their status, as
    /// DescribeTable reports them.
    pub fn describe_indexes(&self, table: &str) -> Result<Vec<IndexDescription>> {
        Ok(self
            .inner
            .catalog
            .get(table)?
            .indexes
            .iter()
            .filter(|i| !i.local)
            .map(|i| IndexDescription {
                index: i.index.clone(),
                status: i.status,
            })
            .collect())
    }

    /// Enables or disables Time to Live on `table` (UpdateTimeToLive), under
    /// DynamoDB's rules: enabling needs TTL disabled, disabling names the
    /// attribute it is enabled on; changing the attribute is a disable and
    /// an enable. Returns the specification applied.
    pub async fn update_time_to_live(
        &self,
        table: &str,
        change: TimeToLiveSpecification,
    ) -> Result<TimeToLiveSpecification> {
        self.submit(WriteOp::UpdateTimeToLive {
            table: table.to_owned(),
            change: change.clone(),
        })
        .await?;
        Ok(change)
    }

    /// Whether Time to Live is enabled on `table`, and on which attribute
    /// (DescribeTimeToLive).
    pub fn describe_time_to_live(&self, table: &str) -> Result<TimeToLiveDescription> {
        let state = self.inner.catalog.get(table)?;
        let attribute_name = state.definition.time_to_live_attribute.clone();
        Ok(TimeToLiveDescription {
            status: match (&attribute_name, state.expiries_filling) {
                (None, _) => TimeToLiveStatus::Disabled,
                (Some(_), true) => TimeToLiveStatus::Enabling,
                (Some(_), false) => TimeToLiveStatus::Enabled,
            },
            attribute_name,
        })
    }

    /// Deletes what Time to Live has expired by now, in one pass over the
    /// tables with TTL enabled, as the background sweeper does every
    /// [`EngineOptions::ttl_sweep_interval`]; returns how many items it
    /// deleted.
    pub async fn sweep_expired(&self) -> Result<u64> {
        let mut pass = SweepPass::new(&self.inner.catalog)?;
        let mut deleted = 0;
        while let Some(op) =
            pass.next_request(&self.inner.db, self.inner.clock.now_ms(), || false)?
        {
            match self.submit(op).await? {
                WriteReply::Expired(count) => deleted += count,
                other => return Err(unexpected(other)),
            }
        }
        Ok(deleted)
    }

    /// The engine's time, in milliseconds since the Unix epoch.
    pub(crate) fn now_ms(&self) -> u64 {
        self.inner.clock.now_ms()
    }

    /// Sequence number of the newest committed stream record (0 when none).
    pub fn latest_sequence(&self) -> u64 {
        *self.inner.latest_sequence.borrow()
    }

    /// A receiver that changes whenever new stream records commit; consumers
    /// wait on it instead of polling. It starts with the current sequence
    /// marked seen: a clone of the stored receiver would inherit that
    /// receiver's last seen version, which never moves, and every
    /// `changed()` after the first commit would be ready at once.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        let mut commits = self.inner.latest_sequence.clone();
        commits.mark_unchanged();
        commits
    }

    /// Whether writes commit now: `Err` with the reason while the last
    /// commit failed for want of disk or through an I/O error and none has
    /// committed since. While writes are refused and none has been tried
    /// for two seconds, a call sends a small probe write, so that the engine
    /// learns on its own when space comes back (see `write_health`).
    pub async fn accepts_writes(&self) -> std::result::Result<(), String> {
        if self.inner.write_health.probe_due() {
            // The writer records the probe's outcome like any commit's.
            let _ = self.submit(WriteOp::Probe).await;
        }
        match self.inner.write_health.refusal() {
            None => Ok(()),
            Some(why) => Err(format!("the store refuses writes: {why}")),
        }
    }

    /// Registers a durable consumer of `table`'s stream (idempotent) and
    /// returns its checkpoint: the last sequence number it has applied.
    pub async fn register_consumer(
        &self,
        table: &str,
        consumer: &str,
        start: StartPosition,
    ) -> Result<u64> {
        match self
            .submit(WriteOp::RegisterConsumer {
                table: table.to_owned(),
                consumer: consumer.to_owned(),
                start,
            })
            .await?
        {
            WriteReply::Position(position) => Ok(position),
            other => Err(unexpected(other)),
        }
    }

    /// The consumer's checkpoint, if it is registered.
    pub fn consumer_position(&self, table: &str, consumer: &str) -> Result<Option<u64>> {
        let txn = self.inner.db.begin_read().map_err(storage)?;
        let consumers = txn.open_table(CONSUMERS).map_err(storage)?;
        Ok(consumers
            .get(consumer_key(table, consumer).as_str())
            .map_err(storage)?
            .map(|v| v.value()))
    }

    /// Up to `limit` stream records of `table` with sequence numbers after `after`.
    pub fn read_stream(&self, table: &str, after: u64, limit: usize) -> Result<Vec<StreamRecord>> {
        let found = self.read_wanted_stream(table, after, limit, |_| true)?;
        Ok(found
            .records
            .into_iter()
            .map(|(_, record)| record)
            .collect())
    }

    /// [`Engine::read_stream`] for a consumer that wants only the records
    /// whose keys pass `wanted`: the others are read past without decoding
    /// their images. `limit` bounds the records read, wanted or not.
    pub(crate) fn read_wanted_stream(
        &self,
        table: &str,
        after: u64,
        limit: usize,
        wanted: KeyFilter,
    ) -> Result<WantedRecords> {
        let state = self.inner.catalog.get(table)?;
        let txn = self.inner.db.begin_read().map_err(storage)?;
        let stream = txn
            .open_table(stream_table(&state.stream_table))
            .map_err(storage)?;
        stream::read_wanted(&stream, after, limit, wanted, &|sequence, why| {
            state.corrupt_record(sequence, why)
        })
    }

    /// Moves a consumer's checkpoint from `expected` to `sequence`.
    pub async fn checkpoint(&self, checkpoint: Checkpoint) -> Result<()> {
        self.submit(WriteOp::Checkpoint(checkpoint))
            .await
            .map(|_| ())
    }

    /// A transaction that also moves a consumer's checkpoint, atomically:
    /// either both the writes and the checkpoint commit, or neither. It is
    /// not bound by TransactWriteItems' 100 actions. If the
    /// stored checkpoint is not `checkpoint.expected` (the batch was applied
    /// already), nothing is written and `ConditionalCheckFailed` is returned.
    pub async fn transact_with_checkpoint(
        &self,
        input: TransactWriteItemsInput,
        checkpoint: Checkpoint,
    ) -> Result<TransactWriteItemsOutput> {
        match self
            .submit(WriteOp::Transact(input, Some(checkpoint), Vec::new()))
            .await?
        {
            WriteReply::Transact(written) => Ok(written.output),
            other => Err(unexpected(other)),
        }
    }

    async fn submit(&self, op: WriteOp) -> Result<WriteReply> {
        let (reply, response) = oneshot::channel();
        let jobs = self
            .inner
            .jobs
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("the engine is shut down".into()))?;
        jobs.send(Job { op, reply })
            .map_err(|_| StoreError::Unavailable("the writer thread has stopped".into()))?;
        let Answer { outcome, request } = response
            .await
            .map_err(|_| StoreError::Unavailable("the writer thread has stopped".into()))?;
        // Freed here, on the thread that built it (see `Answer`).
        drop(request);
        outcome
    }

    /// PutItem, handing back the item a failed condition was checked
    /// against when `on_failure` asks for it (DynamoDB's
    /// `ReturnValuesOnConditionCheckFailure`); [`Store::put_item`] never asks.
    pub async fn put_item_with(
        &self,
        input: PutItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> std::result::Result<Written<WriteOutput>, WriteFailure> {
        self.write(WriteOp::Put(input, on_failure)).await
    }

    /// UpdateItem, as [`Engine::put_item_with`].
    pub async fn update_item_with(
        &self,
        input: UpdateItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> std::result::Result<Written<WriteOutput>, WriteFailure> {
        self.write(WriteOp::Update(input, on_failure)).await
    }

    /// DeleteItem, as [`Engine::put_item_with`].
    pub async fn delete_item_with(
        &self,
        input: DeleteItemInput,
        on_failure: ReturnValuesOnConditionCheckFailure,
    ) -> std::result::Result<Written<WriteOutput>, WriteFailure> {
        self.write(WriteOp::Delete(input, on_failure)).await
    }

    /// BatchWriteItem with the item collections it wrote to.
    pub async fn batch_write_item_with(
        &self,
        input: BatchWriteItemInput,
    ) -> Result<Written<BatchWriteItemOutput>> {
        match self.submit(WriteOp::BatchWrite(input)).await? {
            WriteReply::Batch(written) => Ok(written),
            other => Err(unexpected(other)),
        }
    }

    /// TransactWriteItems where `on_failure[i]` says what action `i` hands
    /// back if its condition fails (missing entries: nothing); the items
    /// come back in [`WriteFailure::old_items`], one per action.
    pub async fn transact_write_items_with(
        &self,
        input: TransactWriteItemsInput,
        on_failure: Vec<ReturnValuesOnConditionCheckFailure>,
    ) -> std::result::Result<Written<TransactWriteItemsOutput>, WriteFailure> {
        match self
            .submit(WriteOp::Transact(input, None, on_failure))
            .await?
        {
            WriteReply::Transact(written) => Ok(written),
            WriteReply::Refused(failure) => Err(failure),
            other => Err(unexpected(other).into()),
        }
    }

    async fn write(&self, op: WriteOp) -> std::result::Result<Written<WriteOutput>, WriteFailure> {
        match self.submit(op).await? {
            WriteReply::Write(written) => Ok(written),
            WriteReply::Refused(failure) => Err(failure),
            other => Err(unexpected(other).into()),
        }
    }

    /// A GetItem whose item, if there is one, `view` is shown as it is
    /// stored, never built: what an answer written straight from the item
    /// needs. Returns the capacity consumed and what `view` returned.
    pub fn get_item_viewed<R>(
        &self,
        input: &GetItemInput,
        view: impl FnOnce(&dyn ItemView) -> R,
    ) -> Result<(ConsumedCapacity, Option<R>)> {
        let table = self.inner.catalog.get(&input.table)?;
        read::get_item_viewed(&*self.snapshot()?, &table, input, view)
    }

    /// Reads the first `limit` stored entries of `partition` of `table` (or
    /// of its `index`), newest or oldest first, and decodes nothing: the
    /// floor under a Query of that page, which the benchmark harness times
    /// beside it. Returns the entries' stored bytes.
    pub fn read_raw_partition(
        &self,
        table: &str,
        index: Option<&str>,
        partition: &AttributeValue,
        forward: bool,
        limit: usize,
    ) -> Result<usize> {
        let table = self.inner.catalog.get(table)?;
        read::raw_partition(&*self.snapshot()?, &table, index, partition, forward, limit)
    }

    /// What each table takes on disk, part by part, as of now.
    pub fn storage_usage(&self) -> Result<StorageUsage> {
        usage::storage_usage(&self.inner.path, &self.inner.db, &self.inner.catalog)
    }

    /// The snapshot a read reads from: shared by reads until the next
    /// commit (`snapshot.rs`).
    fn snapshot(&self) -> Result<Arc<Snapshot>> {
        self.inner.db.snapshot()
    }
}

/// Reads of at most this many items run on the caller's thread: a page of
/// 20 takes microseconds, less than handing it to another thread would.
/// Longer ones (export and reconcile pages, scans, large batches) take
/// milliseconds and run on tokio's blocking pool, so they never hold up an
/// async worker that other requests are waiting on.
const SHORT_READ_ITEMS: usize = 100;

impl Engine {
    /// Runs `read` on a snapshot: inline when it is `long == false` or no
    /// tokio runtime is running, else on the blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        long: bool,
        read: impl FnOnce(&Snapshot) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let snapshot = self.snapshot()?;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if long => runtime
                .spawn_blocking(move || read(&snapshot))
                .await
                .map_err(|e| StoreError::Internal(format!("a read task failed: {e}")))?,
            _ => read(&snapshot),
        }
    }
}

impl Store for Engine {
    async fn create_table(&self, definition: TableDefinition) -> Result<()> {
        self.submit(WriteOp::CreateTable(definition))
            .await
            .map(|_| ())
    }

    async fn describe_table(&self, table: &str) -> Result<TableDefinition> {
        Ok(self.inner.catalog.get(table)?.definition.clone())
    }

    async fn get_item(&self, input: GetItemInput) -> Result<GetItemOutput> {
        let table = self.inner.catalog.get(&input.table)?;
        read::get_item(&*self.snapshot()?, &table, &input)
    }

    async fn get_item_visiting(
        &self,
        input: GetItemInput,
        mut visit: ItemVisitor,
    ) -> Result<GetItemOutput> {
        let (consumed, _) = self.get_item_viewed(&input, |item| visit(item))?;
        Ok(GetItemOutput {
            item: None,
            consumed,
        })
    }

    async fn put_item(&self, input: PutItemInput) -> Result<WriteOutput> {
        self.put_item_with(input, ReturnValuesOnConditionCheckFailure::None)
            .await
            .map(|written| written.output)
            .map_err(|failure| failure.error)
    }

    async fn update_item(&self, input: UpdateItemInput) -> Result<WriteOutput> {
        self.update_item_with(input, ReturnValuesOnConditionCheckFailure::None)
            .await
            .map(|written| written.output)
            .map_err(|failure| failure.error)
    }

    async fn delete_item(&self, input: DeleteItemInput) -> Result<WriteOutput> {
        self.delete_item_with(input, ReturnValuesOnConditionCheckFailure::None)
            .await
            .map(|written| written.output)
            .map_err(|failure| failure.error)
    }

    async fn query(&self, input: QueryInput) -> Result<Page> {
        let table = self.inner.catalog.get(&input.table)?;
        let long = input.limit.is_none_or(|limit| limit > SHORT_READ_ITEMS);
        self.read(long, move |snapshot| read::query(snapshot, &table, &input))
            .await
    }

    async fn query_visiting(&self, input: QueryInput, mut visit: ItemVisitor) -> Result<Page> {
        let table = self.inner.catalog.get(&input.table)?;
        let long = input.limit.is_none_or(|limit| limit > SHORT_READ_ITEMS);
        self.read(long, move |snapshot| {
            read::query_visiting(snapshot, &table, &input, &mut visit)
        })
        .await
    }

    async fn scan(&self, input: ScanInput) -> Result<Page> {
        let table = self.inner.catalog.get(&input.table)?;
        let long = input.limit.is_none_or(|limit| limit > SHORT_READ_ITEMS);
        self.read(long, move |snapshot| read::scan(snapshot, &table, &input))
            .await
    }

    async fn batch_get_item(&self, input: BatchGetItemInput) -> Result<BatchGetItemOutput> {
        let tables = input
            .requests
            .iter()
            .map(|r| self.inner.catalog.get(&r.table))
            .collect::<Result<Vec<_>>>()?;
        let keys: usize = input.requests.iter().map(|r| r.keys.len()).sum();
        self.read(keys > SHORT_READ_ITEMS, move |snapshot| {
            let refs: Vec<&TableState> = tables.iter().map(Arc::as_ref).collect();
            read::batch_get(snapshot, &refs, &input)
        })
        .await
    }

    async fn batch_write_item(&self, input: BatchWriteItemInput) -> Result<BatchWriteItemOutput> {
        self.batch_write_item_with(input)
            .await
            .map(|written| written.output)
    }

    async fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> Result<TransactWriteItemsOutput> {
        self.transact_write_items_with(input, Vec::new())
            .await
            .map(|written| written.output)
            .map_err(|failure| failure.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a read let another task of a single-threaded runtime run
    /// while it was under way: it waits (boundedly) for that task's signal.
    fn other_tasks_ran_during(long: bool) -> bool {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path()).unwrap();
        let (signal, signalled) = std::sync::mpsc::channel::<()>();
        runtime.block_on(async {
            let other = tokio::spawn(async move { signal.send(()).is_ok() });
            let waited = engine
                .read(long, move |_| {
                    Ok(signalled
                        .recv_timeout(Duration::from_millis(if long { 10_000 } else { 200 }))
                        .is_ok())
                })
                .await
                .unwrap();
            other.await.unwrap();
            waited
        })
    }

    #[test]
    fn long_reads_leave_the_async_worker_free_and_short_ones_run_inline() {
        assert!(other_tasks_ran_during(true), "a long read held the worker");
        assert!(
            !other_tasks_ran_during(false),
            "a short read left its thread"
        );
    }
}

//! The writer thread: it drains the queue, commits a group of requests at
//! a time, and between groups commits catalog changes alone, backfill
//! chunks of an index being created and chunks of a Time to Live queue
//! being filled.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use rave_store::{Result, StoreError, WriteFailure};
use redb::Durability;
use tokio::sync::watch;

use super::backfill;
use super::batch::batch_write;
use super::bulk;
use super::change_stream::trim_streams;
use super::consumers::{checkpoint, register_consumer};
use super::delete::delete;
use super::expire::expire;
use super::expiries;
use super::index_changes::update_table;
use super::put::put;
use super::queue::{Job, WriteOp, WriteReply};
use super::tables::{self, CatalogUpdate};
use super::transact::transact;
use super::tx::{Applied, Failure, Tx};
use super::update::update;
use crate::catalog::Catalog;
use crate::clock::Clock;
use crate::database::{SharedDatabase, storage};
use crate::layout::{META, NEXT_SEQUENCE, WRITE_PROBE, next_sequence};
use crate::write_health::WriteHealth;

/// How often the writer looks for stream records it may drop.
const TRIM_INTERVAL: Duration = Duration::from_secs(1);

pub(crate) struct Writer {
    pub(crate) db: Arc<SharedDatabase>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) next_sequence: u64,
    pub(crate) retention: Duration,
    pub(crate) latest_sequence: watch::Sender<u64>,
    pub(crate) last_trim: Instant,
    pub(crate) max_group: usize,
    /// `EngineOptions::durable_groups`.
    pub(crate) durable_groups: bool,
    pub(crate) clock: Clock,
    pub(crate) max_item_collection_bytes: u64,
    /// Where each group commit's outcome goes, for readiness.
    pub(crate) health: Arc<WriteHealth>,
    /// What a bulk load's index build holds and commits at once.
    pub(crate) build_sizes: bulk::BuildSizes,
}

impl Writer {
    /// Serves jobs until every sender is gone.
    pub(crate) fn run(mut self, jobs: Receiver<Job>) {
        let mut carried: Option<Job> = None;
        loop {
            let first = match carried.take() {
                Some(job) => job,
                // While an index builds or a TTL queue fills, one chunk
                // commits between groups of requests.
                None if backfill::step(&self.db, &self.catalog)
                    || expiries::fill_step(&self.db, &self.catalog) =>
                {
                    match jobs.try_recv() {
                        Ok(job) => job,
                        Err(TryRecvError::Empty) => continue,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
            };
            if first.op.changes_catalog() {
                let outcome = self.change_catalog(&first.op);
                Job::answer(first.op, first.reply, outcome.map(|()| WriteReply::Done));
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

    /// Commits `group` and answers each of its requests.
    pub(crate) fn run_group(&mut self, group: Vec<Job>) {
        if !self.db.is_open() {
            self.reopen();
        }
        let first_sequence = self.next_sequence;
        let (ops, replies): (Vec<WriteOp>, Vec<_>) =
            group.into_iter().map(|j| (j.op, j.reply)).unzip();
        let started = Instant::now();
        let committed = self.commit_group(&ops);
        self.health.committed(committed.as_ref().map(|_| ()));
        tracing::trace!(
            requests = ops.len(),
            micros = started.elapsed().as_micros() as u64,
            "group commit"
        );
        match committed {
            Ok(outcomes) => {
                if self.next_sequence != first_sequence {
                    self.latest_sequence.send_replace(self.next_sequence - 1);
                }
                for ((op, reply), outcome) in ops.into_iter().zip(replies).zip(outcomes) {
                    Job::answer(op, reply, outcome);
                }
            }
            Err(error) => {
                tracing::error!(%error, requests = replies.len(), "group commit failed");
                self.next_sequence = first_sequence;
                for (op, reply) in ops.into_iter().zip(replies) {
                    Job::answer(op, reply, Err(error.clone()));
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
            next_sequence(&txn.open_table(META).map_err(storage)?)
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

    /// Applies `ops` one after another in one transaction and commits it:
    /// each request's outcome, or the error that failed them all.
    fn commit_group(&mut self, ops: &[WriteOp]) -> Result<Vec<Result<WriteReply>>> {
        let mut txn = self.db.begin_write().map_err(storage)?;
        if !self.durable_groups {
            txn.set_durability(Durability::None).map_err(storage)?;
        }
        let mut outcomes = Vec::with_capacity(ops.len());
        {
            let mut tx = Tx::new(
                &txn,
                &self.catalog,
                self.clock.now_ms(),
                self.next_sequence,
                self.max_item_collection_bytes,
            );
            for op in ops {
                match apply(&mut tx, op) {
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
                match trim_streams(&mut tx, self.retention) {
                    Ok(()) => {}
                    // Housekeeping must not fail the group's requests: a
                    // record that does not decode stays, and is reported.
                    Err(Failure::Request(error) | Failure::Refused(WriteFailure { error, .. })) => {
                        tracing::error!(%error, "stream trim skipped");
                    }
                    Err(Failure::Transaction(error)) => return Err(error),
                }
            }
            match tx.apply_entry_writes() {
                Ok(()) => {}
                Err(Failure::Transaction(error)) => return Err(error),
                // Entry writes fail only as the transaction does.
                Err(Failure::Request(error) | Failure::Refused(WriteFailure { error, .. })) => {
                    return Err(error);
                }
            }
            self.next_sequence = tx.next_sequence;
        }
        self.db.commit(txn).map_err(storage)?;
        Ok(outcomes)
    }

    /// Commits a catalog change in a transaction of its own, then shows it
    /// to readers.
    pub(crate) fn change_catalog(&self, op: &WriteOp) -> Result<()> {
        if let WriteOp::BuildDeferredIndexes(table) = op {
            // The entries go first, in commits of their own; the change
            // that makes the indexes ACTIVE commits below like any other.
            bulk::build(&self.db, &self.catalog, table, self.build_sizes)?;
        }
        let txn = self.db.begin_write().map_err(storage)?;
        let catalog = &self.catalog;
        let update = match op {
            WriteOp::CreateTable(definition) => tables::create_table(&txn, catalog, definition)?,
            WriteOp::DeleteTable(name) => tables::delete_table(&txn, catalog, name)?,
            WriteOp::UpdateTimeToLive { table, change } => {
                tables::update_time_to_live(&txn, catalog, table, change)?
            }
            WriteOp::UpdateTable { table, change } => update_table(&txn, catalog, table, change)?,
            WriteOp::UpdateStream { table, enabled } => {
                tables::update_stream(&txn, catalog, table, *enabled)?
            }
            WriteOp::DeferIndexes(table) => bulk::defer(&txn, catalog, table)?,
            WriteOp::BuildDeferredIndexes(table) => bulk::finish(&txn, catalog, table)?,
            _ => return Err(StoreError::Internal("not a catalog change".into())),
        };
        self.db.commit(txn).map_err(storage)?;
        match update {
            CatalogUpdate::Set(state) => self.catalog.insert(*state),
            CatalogUpdate::Remove(name) => self.catalog.remove(&name),
        }
    }
}

/// Applies one request of a group to the group's transaction.
fn apply(tx: &mut Tx<'_>, op: &WriteOp) -> Applied<WriteReply> {
    match op {
        WriteOp::Put(input, on_failure) => put(tx, input, *on_failure).map(WriteReply::Write),
        WriteOp::Update(input, on_failure) => update(tx, input, *on_failure).map(WriteReply::Write),
        WriteOp::Delete(input, on_failure) => delete(tx, input, *on_failure).map(WriteReply::Write),
        WriteOp::BatchWrite(input) => batch_write(tx, input).map(WriteReply::Batch),
        WriteOp::Transact(input, checkpoint, on_failure) => {
            transact(tx, input, checkpoint.as_ref(), on_failure).map(WriteReply::Transact)
        }
        WriteOp::RegisterConsumer {
            table,
            consumer,
            start,
        } => register_consumer(tx, table, consumer, *start).map(WriteReply::Position),
        WriteOp::Checkpoint(moved) => checkpoint(tx, moved).map(|()| WriteReply::Done),
        WriteOp::Expire {
            table,
            attribute,
            items,
        } => expire(tx, table, attribute, items).map(WriteReply::Expired),
        WriteOp::Probe => {
            let mut meta = tx.txn.open_table(META)?;
            meta.insert(WRITE_PROBE, tx.now_ms)?;
            Ok(WriteReply::Done)
        }
        WriteOp::CreateTable(_)
        | WriteOp::DeleteTable(_)
        | WriteOp::UpdateTimeToLive { .. }
        | WriteOp::UpdateTable { .. }
        | WriteOp::UpdateStream { .. }
        | WriteOp::DeferIndexes(_)
        | WriteOp::BuildDeferredIndexes(_) => Err(Failure::Request(StoreError::Internal(
            "catalog change inside a group".into(),
        ))),
    }
}

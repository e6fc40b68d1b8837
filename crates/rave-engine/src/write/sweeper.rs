//! The Time to Live sweeper: a thread that, every sweep interval
//! (`EngineOptions::ttl_sweep_interval`, a minute by default), reads what
//! has expired off the TTL queue of each table with TTL enabled
//! (`expiries`), on read snapshots, and sends it to the writer in batches of at most [`EXPIRE_BATCH`] items, one
//! batch in the queue at a time, so ordinary writes are never stuck behind
//! it for more than one group. The writer deletes an item only if its TTL
//! value is still the one found and still expired at commit time
//! (`expire`): an item rewritten in between stays.
//!
//! The sweeper holds a sender of the writer's queue, so dropping the engine
//! stops the sweeper before the writer.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use rave_store::{Number, Result, StoreError};
use tokio::sync::oneshot;

use super::expiries::queue_bound;
use super::queue::{Job, WriteOp, WriteReply, unexpected};
use crate::catalog::{Catalog, TableState};
use crate::clock::Clock;
use crate::database::{SharedDatabase, storage};
use crate::layout::bytes_table;
use crate::ttl::{Expired, expiry_window};

/// Most items one deletion request of the sweeper carries.
const EXPIRE_BATCH: usize = 100;

/// One pass over every table with TTL enabled, handing out deletion
/// requests of at most [`EXPIRE_BATCH`] items.
pub(crate) struct SweepPass {
    tables: Vec<Arc<TableState>>,
    /// Where the scan of the first table resumes (`None`: from its start).
    resume: Option<Vec<u8>>,
}

impl SweepPass {
    pub(crate) fn new(catalog: &Catalog) -> Result<SweepPass> {
        let mut tables = Vec::new();
        for name in catalog.names()? {
            let table = catalog.get(&name)?;
            if table.definition.time_to_live_attribute.is_some() {
                tables.push(table);
            }
        }
        Ok(SweepPass {
            tables,
            resume: None,
        })
    }

    /// The next deletion request, or `None` when the pass is over or
    /// `stopping` says so (asked between snapshots, so a long table does
    /// not hold up the engine's shutdown).
    pub(crate) fn next_request(
        &mut self,
        db: &SharedDatabase,
        now_ms: u64,
        stopping: impl Fn() -> bool,
    ) -> Result<Option<WriteOp>> {
        while let Some(table) = self.tables.first().cloned() {
            if stopping() {
                return Ok(None);
            }
            let Some(attribute) = table.definition.time_to_live_attribute.clone() else {
                self.tables.remove(0);
                continue;
            };
            let (expired, resume) = find_expired(db, &table, self.resume.as_deref(), now_ms)?;
            self.resume = resume;
            if self.resume.is_none() {
                self.tables.remove(0);
            }
            if !expired.is_empty() {
                return Ok(Some(WriteOp::Expire {
                    table: table.name().to_owned(),
                    attribute,
                    items: expired,
                }));
            }
        }
        Ok(None)
    }
}

/// Reads `table`'s expired items off its Time to Live queue after `after`,
/// on one snapshot: the TTL values from five years before `now_ms` up to
/// it, at most [`EXPIRE_BATCH`] of them. Returns them and where the next
/// read resumes (`None` when none are left).
fn find_expired(
    db: &SharedDatabase,
    table: &TableState,
    after: Option<&[u8]>,
    now_ms: u64,
) -> Result<(Vec<Expired>, Option<Vec<u8>>)> {
    let Some(queue_table) = &table.expiries_table else {
        return Ok((Vec::new(), None));
    };
    let Some((oldest, now)) = expiry_window(now_ms) else {
        return Ok((Vec::new(), None));
    };
    let txn = db.begin_read().map_err(storage)?;
    let queue = txn.open_table(bytes_table(queue_table)).map_err(storage)?;
    let end = queue_bound(&now);
    let start = match after {
        Some(after) => Bound::Excluded(after.to_vec()),
        None => Bound::Included(queue_bound(&oldest)),
    };
    let range = queue
        .range::<&[u8]>((
            start.as_ref().map(Vec::as_slice),
            Bound::Excluded(end.as_slice()),
        ))
        .map_err(storage)?;
    let mut expired = Vec::new();
    for entry in range {
        let (key, value) = entry.map_err(storage)?;
        let found = std::str::from_utf8(value.value())
            .ok()
            .and_then(|text| text.parse::<Number>().ok())
            .and_then(|value| {
                let prefix = queue_bound(&value);
                let item_key = key.value().strip_prefix(prefix.as_slice())?;
                Some(Expired {
                    key: item_key.to_vec(),
                    value,
                })
            });
        match found {
            Some(found) => expired.push(found),
            None => tracing::error!(
                table = table.name(),
                "time to live skipped a queue entry that does not decode"
            ),
        }
        if expired.len() >= EXPIRE_BATCH {
            return Ok((expired, Some(key.value().to_vec())));
        }
    }
    Ok((expired, None))
}

/// The background sweeper: a pass every `interval`, until `stop` closes.
pub(crate) struct Sweeper {
    pub(crate) db: Arc<SharedDatabase>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) jobs: Sender<Job>,
    pub(crate) clock: Clock,
    pub(crate) interval: Duration,
    pub(crate) stop: Receiver<()>,
}

impl Sweeper {
    pub(crate) fn run(self) {
        loop {
            match self.stop.recv_timeout(self.interval) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
            match self.sweep() {
                Ok(0) => {}
                Ok(deleted) => tracing::debug!(deleted, "time to live deleted expired items"),
                Err(error) => {
                    tracing::warn!(%error, "time to live sweep failed; next pass retries")
                }
            }
        }
    }

    /// One pass; stops early when the engine shuts down.
    fn sweep(&self) -> Result<u64> {
        let mut pass = SweepPass::new(&self.catalog)?;
        let mut deleted = 0;
        let stopping = || !matches!(self.stop.try_recv(), Err(TryRecvError::Empty));
        while let Some(op) = pass.next_request(&self.db, self.clock.now_ms(), stopping)? {
            let (reply, response) = oneshot::channel();
            self.jobs
                .send(Job { op, reply })
                .map_err(|_| StoreError::Unavailable("the writer thread has stopped".into()))?;
            // Waiting for each batch keeps at most one of them in the queue.
            match response.blocking_recv().map(|answer| answer.outcome) {
                Ok(Ok(WriteReply::Expired(count))) => deleted += count,
                Ok(Ok(other)) => return Err(unexpected(other)),
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    return Err(StoreError::Unavailable(
                        "the writer thread has stopped".into(),
                    ));
                }
            }
        }
        Ok(deleted)
    }
}

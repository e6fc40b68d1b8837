//! Time to Live, as DynamoDB defines it: an item whose TTL attribute holds
//! a Number of epoch seconds earlier than now has expired, and is deleted
//! in the background, through the writer like any delete, with a REMOVE
//! stream record marked as made by TTL. Until then it is still read,
//! queried and scanned. A TTL attribute that is not a Number, or whose
//! value lies more than five years in the past, never expires the item.
//!
//! The sweeper is a thread that, every sweep interval, scans the tables
//! with TTL enabled on read snapshots and sends what it found expired to
//! the writer in batches of at most [`EXPIRE_BATCH`] items, one batch in
//! the queue at a time, so ordinary writes are never stuck behind it. The
//! writer deletes an item only if its TTL value is still the one found and
//! it is still expired at commit time: an item written in between stays.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use rave_store::{AttributeValue, Item, Number, Result, StoreError, valid_time_to_live_attribute};
use tokio::sync::oneshot;

use crate::catalog::{Catalog, TableState};
use crate::clock::Clock;
use crate::codec::decode_item;
use crate::database::SharedDatabase;
use crate::writer::{Job, WriteOp, WriteReply};
use crate::{bytes_table, storage, unexpected};

/// Most items one deletion request of the sweeper carries.
pub const EXPIRE_BATCH: usize = 100;
/// Most items the sweeper looks at on one read snapshot.
const SCAN_BATCH: usize = 10_000;
/// TTL values further in the past than this never expire an item.
const NEVER_EXPIRES_AFTER_SECONDS: u64 = 5 * 365 * 24 * 60 * 60;

/// Whether Time to Live is on for a table (DescribeTimeToLive's
/// `TimeToLiveStatus`; the engine applies a change at once, so it is never
/// ENABLING or DISABLING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeToLiveStatus {
    Enabled,
    Disabled,
}

/// DescribeTimeToLive's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeToLiveDescription {
    pub status: TimeToLiveStatus,
    /// The TTL attribute while TTL is enabled.
    pub attribute_name: Option<String>,
}

/// UpdateTimeToLive's request (DynamoDB's `TimeToLiveSpecification`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeToLiveSpecification {
    pub attribute_name: String,
    pub enabled: bool,
}

/// The TTL attribute a table has after `change`, under DynamoDB's rules:
/// TTL is enabled only when disabled, and disabled only when enabled on the
/// same attribute, so changing the attribute takes a disable and an enable.
/// (DynamoDB also refuses a second change within the hour the first takes
/// to spread through its fleet; the engine applies a change at once, and
/// has no such delay to wait for.)
pub(crate) fn changed_attribute(
    current: Option<&str>,
    change: &TimeToLiveSpecification,
) -> Result<Option<String>> {
    valid_time_to_live_attribute(&change.attribute_name).map_err(StoreError::Validation)?;
    match (current, change.enabled) {
        (None, true) => Ok(Some(change.attribute_name.clone())),
        (Some(_), true) => Err(StoreError::validation("TimeToLive is already enabled")),
        (None, false) => Err(StoreError::validation("TimeToLive is already disabled")),
        (Some(attribute), false) if attribute == change.attribute_name => Ok(None),
        (Some(attribute), false) => Err(StoreError::validation(format!(
            "TimeToLive is enabled on attribute {attribute}, not {}",
            change.attribute_name
        ))),
    }
}

/// The value of `item`'s TTL attribute if it has expired the item at
/// `now_ms`.
pub(crate) fn expired_value(item: &Item, attribute: &str, now_ms: u64) -> Option<Number> {
    let AttributeValue::N(value) = item.get(attribute)? else {
        return None;
    };
    let now = Number::from_parts(false, u128::from(now_ms), -3).ok()?;
    let oldest_ms = now_ms.saturating_sub(NEVER_EXPIRES_AFTER_SECONDS * 1000);
    let oldest = Number::from_parts(false, u128::from(oldest_ms), -3).ok()?;
    (*value < now && *value >= oldest).then_some(*value)
}

/// An item found expired: its stored key and the TTL value that expired it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expired {
    pub key: Vec<u8>,
    pub value: Number,
}

/// One pass over every table with TTL enabled, handing out deletion
/// requests of at most [`EXPIRE_BATCH`] items.
pub(crate) struct SweepPass {
    tables: Vec<Arc<TableState>>,
    /// Where the scan of the first table resumes (`None`: from its start).
    resume: Option<Vec<u8>>,
}

impl SweepPass {
    pub fn new(catalog: &Catalog) -> Result<SweepPass> {
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
    pub fn next_request(
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
            let (expired, resume) =
                find_expired(db, &table, &attribute, self.resume.as_deref(), now_ms)?;
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

/// Scans `table` after `after` on one snapshot, for at most [`SCAN_BATCH`]
/// items or until [`EXPIRE_BATCH`] expired ones; returns them and where the
/// next scan resumes (`None` at the end of the table). An item that does
/// not decode is reported and skipped: it is not the sweeper's to judge.
fn find_expired(
    db: &SharedDatabase,
    table: &TableState,
    attribute: &str,
    after: Option<&[u8]>,
    now_ms: u64,
) -> Result<(Vec<Expired>, Option<Vec<u8>>)> {
    let txn = db.begin_read().map_err(storage)?;
    let items = txn
        .open_table(bytes_table(&table.items_table))
        .map_err(storage)?;
    let range = match after {
        Some(after) => {
            items.range::<&[u8]>((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded))
        }
        None => items.range::<&[u8]>(..),
    }
    .map_err(storage)?;
    let mut expired = Vec::new();
    let mut scanned = 0;
    for entry in range {
        let (key, value) = entry.map_err(storage)?;
        scanned += 1;
        match decode_item(value.value()) {
            Ok(item) => {
                if let Some(value) = expired_value(&item, attribute, now_ms) {
                    expired.push(Expired {
                        key: key.value().to_vec(),
                        value,
                    });
                }
            }
            Err(why) => {
                let error = table.corrupt_item(key.value(), why);
                tracing::error!(%error, "time to live skipped an item");
            }
        }
        if scanned >= SCAN_BATCH || expired.len() >= EXPIRE_BATCH {
            return Ok((expired, Some(key.value().to_vec())));
        }
    }
    Ok((expired, None))
}

/// The background sweeper: a pass every `interval`, until `stop` closes.
pub(crate) struct Sweeper {
    pub db: Arc<SharedDatabase>,
    pub catalog: Arc<Catalog>,
    pub jobs: Sender<Job>,
    pub clock: Clock,
    pub interval: Duration,
    pub stop: Receiver<()>,
}

impl Sweeper {
    pub fn run(self) {
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
            match response.blocking_recv() {
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

#[cfg(test)]
mod tests {
    use rave_store::item;

    use super::*;

    const NOW_MS: u64 = 1_700_000_000_000;

    fn expired(value: AttributeValue) -> bool {
        expired_value(&item! {"PK" => "a", "ttl" => value}, "ttl", NOW_MS).is_some()
    }

    fn seconds(text: &str) -> AttributeValue {
        AttributeValue::N(text.parse().expect("a number"))
    }

    #[test]
    fn only_numbers_in_the_past_five_years_expire() {
        assert!(expired(seconds("1699999999")));
        assert!(expired(seconds("1699999999.999")));
        assert!(!expired(seconds("1700000000")), "now is not yet expired");
        assert!(!expired(seconds("1700000001")));
        let five_years = NEVER_EXPIRES_AFTER_SECONDS;
        assert!(expired(seconds(&(1_700_000_000 - five_years).to_string())));
        assert!(!expired(seconds(
            &(1_700_000_000 - five_years - 1).to_string()
        )));
        assert!(!expired(AttributeValue::S("1".into())));
        assert!(!expired(AttributeValue::Ns([Number::from(1i64)].into())));
        assert!(
            expired_value(&item! {"PK" => "a"}, "ttl", NOW_MS).is_none(),
            "no attribute, no expiry"
        );
    }

    #[test]
    fn changes_follow_dynamodbs_rules() {
        let enable = |name: &str| TimeToLiveSpecification {
            attribute_name: name.into(),
            enabled: true,
        };
        let disable = |name: &str| TimeToLiveSpecification {
            attribute_name: name.into(),
            enabled: false,
        };
        assert_eq!(
            changed_attribute(None, &enable("ttl")),
            Ok(Some("ttl".into()))
        );
        assert_eq!(changed_attribute(Some("ttl"), &disable("ttl")), Ok(None));
        for refused in [
            changed_attribute(Some("ttl"), &enable("ttl")),
            changed_attribute(Some("ttl"), &enable("other")),
            changed_attribute(Some("ttl"), &disable("other")),
            changed_attribute(None, &disable("ttl")),
            changed_attribute(None, &enable("")),
        ] {
            assert!(
                matches!(refused, Err(StoreError::Validation(_))),
                "{refused:?}"
            );
        }
    }
}

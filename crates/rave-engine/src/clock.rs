//! Where the engine reads the time: commit times of stream records, the
//! stream's retention, and which items Time to Live has expired.
//!
//! The system clock, or a `ManualClock` that tests move
//! (`EngineOptions::clock`), so that expiry and retention are tested
//! without waiting; the stream and Time to Live read the same clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The system clock, or a clock a test sets and moves.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    #[default]
    System,
    Manual(ManualClock),
}

impl Clock {
    /// Milliseconds since the Unix epoch.
    pub(crate) fn now_ms(&self) -> u64 {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            Clock::Manual(clock) => clock.now_ms(),
        }
    }
}

/// A clock that stands still until it is moved; clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock reading `epoch_ms` milliseconds since the Unix epoch.
    pub fn starting_at(epoch_ms: u64) -> ManualClock {
        ManualClock(Arc::new(AtomicU64::new(epoch_ms)))
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as u64, Ordering::AcqRel);
    }
}

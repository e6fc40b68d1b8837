//! Whether the engine accepts writes now, for readiness.
//!
//! A commit that fails for want of disk or through an I/O error leaves the
//! engine refusing writes until one commits again (the writer reopens the
//! database after such a failure: see `database.rs`). A process that is told
//! its store refuses writes stops taking traffic, and then no write arrives
//! to show that space came back: so while the engine refuses, a readiness
//! check sends a probe, a small write of its own, at most once a second.
//!
//! A probe that commits says that *a* write fits, not that every one will: a
//! database with free pages inside its file can take a small write while a
//! large one still fails. The next failure flips the state back.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rave_store::StoreError;

/// How long after the last commit attempt (a write's or a probe's) a probe
/// may be sent.
const PROBE_AFTER: Duration = Duration::from_secs(2);

/// How long a failure keeps the engine refusing, whatever succeeds in the
/// meantime: small writes (the aggregator's counters, a probe) can still fit
/// in the free pages of a full disk's database while comments do not, and a
/// readiness that flipped with each of them would be no signal.
const FAILURE_HOLDS: Duration = Duration::from_secs(5);

/// What the writer last learnt about committing.
#[derive(Debug, Default)]
pub(crate) struct WriteHealth {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Why a commit last failed, and when.
    failure: Option<(String, Instant)>,
    /// Whether the last commit tried succeeded, and when it was tried (or a
    /// probe last sent).
    last_attempt: Option<(bool, Instant)>,
}

impl WriteHealth {
    /// Records the outcome of a commit.
    pub(crate) fn committed(&self, outcome: Result<(), &StoreError>) {
        let now = Instant::now();
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match outcome {
            Ok(()) => state.last_attempt = Some((true, now)),
            Err(StoreError::Unavailable(why)) => {
                state.failure = Some((why.clone(), now));
                state.last_attempt = Some((false, now));
            }
            // A refused request or a bug says nothing about the disk.
            Err(_) => {}
        }
    }

    /// Why writes are refused, if they are: the last commit failed, or one
    /// failed within [`FAILURE_HOLDS`].
    pub(crate) fn refusal(&self) -> Option<String> {
        let state = self.state.lock().ok()?;
        let (why, failed_at) = state.failure.as_ref()?;
        let last_failed = matches!(state.last_attempt, Some((false, _)));
        (last_failed || failed_at.elapsed() < FAILURE_HOLDS).then(|| why.clone())
    }

    /// Whether a probe may be sent now (and, if so, notes that one is): the
    /// last commit failed and none has been tried for [`PROBE_AFTER`].
    pub(crate) fn probe_due(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        let due = matches!(state.last_attempt, Some((false, at)) if at.elapsed() >= PROBE_AFTER);
        if due {
            state.last_attempt = Some((false, Instant::now()));
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moves every time the state holds back by `by`, as if that long had passed.
    fn age(health: &WriteHealth, by: Duration) {
        let mut state = health.state.lock().unwrap();
        let back = |at: Instant| at.checked_sub(by).unwrap();
        if let Some((_, at)) = state.failure.as_mut() {
            *at = back(*at);
        }
        if let Some((_, at)) = state.last_attempt.as_mut() {
            *at = back(*at);
        }
    }

    #[test]
    fn a_failure_refuses_until_a_commit_succeeds_and_the_failure_is_old() {
        let health = WriteHealth::default();
        assert_eq!(health.refusal(), None);
        assert!(!health.probe_due(), "a probe while writes are accepted");

        health.committed(Err(&StoreError::Unavailable("disk full: ENOSPC".into())));
        assert_eq!(health.refusal().as_deref(), Some("disk full: ENOSPC"));
        assert!(!health.probe_due(), "a probe right after a write was tried");
        health.committed(Err(&StoreError::ConditionalCheckFailed));
        assert!(health.refusal().is_some(), "a refused request cleared it");

        age(&health, PROBE_AFTER);
        assert!(health.probe_due());
        assert!(!health.probe_due(), "two probes within the interval");

        // A small commit succeeds at once: the failure still holds a while.
        health.committed(Ok(()));
        assert!(health.refusal().is_some(), "a fresh failure forgotten");
        assert!(!health.probe_due(), "a probe after a successful commit");
        age(&health, FAILURE_HOLDS);
        assert_eq!(health.refusal(), None);

        // An old failure with a failed last attempt still refuses.
        health.committed(Err(&StoreError::Unavailable("I/O error".into())));
        age(&health, FAILURE_HOLDS);
        assert_eq!(health.refusal().as_deref(), Some("I/O error"));
    }
}

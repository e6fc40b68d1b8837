//! What readiness looks at and how a consumer's progress is judged; the
//! `/readyz` handler is in `health`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rave_webhooks::FanOutProgress;
use tokio::sync::watch;

use crate::api::AggregatorStatus;

/// A condition the binary adds to readiness (the embedded store's writes,
/// say), checked on every `/readyz`.
pub trait ReadinessCheck: Send + Sync + 'static {
    /// The name the answer gives the check.
    fn name(&self) -> &'static str;
    /// `Err` with the reason while the process should get no traffic.
    fn check(&self) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>>;
}

/// Where a change-stream consumer of this process stands, as it publishes
/// it after every step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ConsumerProgress {
    /// Age of the oldest change not applied yet, in milliseconds.
    pub(crate) lag_ms: u64,
    /// When the consumer last published this; `None` before its first step.
    pub(crate) published: Option<Instant>,
}

impl From<AggregatorStatus> for ConsumerProgress {
    fn from(status: AggregatorStatus) -> ConsumerProgress {
        ConsumerProgress {
            lag_ms: status.lag_ms,
            published: status.published,
        }
    }
}

impl From<FanOutProgress> for ConsumerProgress {
    fn from(progress: FanOutProgress) -> ConsumerProgress {
        ConsumerProgress {
            lag_ms: progress.lag.millis,
            published: progress.published,
        }
    }
}

/// How far behind a consumer may be before the process stops being ready.
#[derive(Debug, Clone, Copy)]
pub struct ReadinessPolicy {
    /// The most a consumer's oldest pending change may wait.
    pub max_lag: Duration,
    /// The longest a consumer may go without finishing a step (a consumer
    /// that is waiting for changes finishes one every half second).
    pub max_silence: Duration,
}

impl Default for ReadinessPolicy {
    fn default() -> ReadinessPolicy {
        ReadinessPolicy {
            max_lag: Duration::from_secs(60),
            max_silence: Duration::from_secs(60),
        }
    }
}

/// What readiness looks at, beyond the state every handler has.
#[derive(Clone, Default)]
pub(crate) struct Readiness {
    pub(crate) policy: ReadinessPolicy,
    pub(crate) checks: Vec<Arc<dyn ReadinessCheck>>,
    pub(crate) webhooks_fan_out: Option<watch::Receiver<FanOutProgress>>,
    /// Set once the process has been told to stop.
    pub(crate) stopping: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness")
            .field("policy", &self.policy)
            .field(
                "checks",
                &self.checks.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// Whether a consumer that published `progress` keeps up under `policy`.
pub(crate) fn keeps_up(
    progress: ConsumerProgress,
    policy: ReadinessPolicy,
    now: Instant,
) -> Result<(), String> {
    let Some(published) = progress.published else {
        // Not one step yet: a consumer opening a long backlog is lagging,
        // and says so with its first step.
        return Ok(());
    };
    let silent = now.saturating_duration_since(published);
    if silent > policy.max_silence {
        return Err(format!(
            "stuck: no step finished for {} s (more than {} s)",
            silent.as_secs(),
            policy.max_silence.as_secs()
        ));
    }
    if progress.lag_ms > duration_ms(policy.max_lag) {
        return Err(format!(
            "lagging: the oldest pending change is {} s old (more than {} s)",
            progress.lag_ms / 1000,
            policy.max_lag.as_secs()
        ));
    }
    Ok(())
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: ReadinessPolicy = ReadinessPolicy {
        max_lag: Duration::from_secs(60),
        max_silence: Duration::from_secs(30),
    };

    #[test]
    fn a_consumer_keeps_up_until_it_lags_or_falls_silent() {
        let now = Instant::now();
        let at = |ago: u64| now.checked_sub(Duration::from_secs(ago));
        let progress = |lag_ms, published| ConsumerProgress { lag_ms, published };
        assert_eq!(keeps_up(progress(0, None), POLICY, now), Ok(()));
        assert_eq!(keeps_up(progress(59_999, at(1)), POLICY, now), Ok(()));
        assert_eq!(keeps_up(progress(60_000, at(29)), POLICY, now), Ok(()));
        let lagging = keeps_up(progress(60_001, at(1)), POLICY, now).unwrap_err();
        assert!(lagging.starts_with("lagging"), "{lagging}");
        let stuck = keeps_up(progress(0, at(31)), POLICY, now).unwrap_err();
        assert!(stuck.starts_with("stuck"), "{stuck}");
    }
}

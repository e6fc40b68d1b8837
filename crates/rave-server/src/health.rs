//! Liveness and readiness, the two questions a load balancer or an
//! orchestrator asks.
//!
//! `/healthz` answers liveness: the process serves HTTP and the store
//! answers a read. Restarting a process that fails it may help.
//!
//! `/readyz` answers readiness: whether this process should be sent traffic
//! now. It is not ready while it stops (after SIGTERM), while a check the
//! binary registered fails (the embedded store refusing writes after a full
//! disk, say), while the statistics aggregator is stuck or lags past the
//! threshold, or while the webhooks fan-out does. A process that is not
//! ready is usually still alive: it recovers on its own once space is freed
//! or the backlog is worked off, and restarting it would only lose time.
//!
//! A failing webhook *endpoint* does not make the process unready: its
//! deliveries wait on their own retry schedule (see `/v1/admin/webhooks`
//! and the metrics), and taking every server out of the load balancer would
//! not make a shop's endpoint answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rave_webhooks::FanOutProgress;
use serde::Serialize;
use tokio::sync::watch;
use utoipa::ToSchema;

use crate::api::HealthBody;
use crate::error::{ApiError, ApiResult, Problem};
use crate::state::AppState;

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
struct ConsumerProgress {
    /// Age of the oldest change not applied yet, in milliseconds.
    lag_ms: u64,
    /// When the consumer last published this; `None` before its first step.
    published: Option<Instant>,
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

/// One condition of readiness and how it stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadinessCondition {
    /// `stopping`, `store`, `aggregator`, `webhooks`, or a check's name.
    #[schema(example = "aggregator")]
    pub name: String,
    pub ready: bool,
    /// Why it is not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Whether this process should be sent traffic, condition by condition.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadinessBody {
    /// `ready` or `not ready`.
    #[schema(example = "ready")]
    pub status: String,
    pub conditions: Vec<ReadinessCondition>,
}

impl ReadinessCondition {
    fn of(name: &str, outcome: Result<(), String>) -> ReadinessCondition {
        ReadinessCondition {
            name: name.to_owned(),
            ready: outcome.is_ok(),
            detail: outcome.err(),
        }
    }
}

/// Whether a consumer that published `progress` keeps up under `policy`.
fn keeps_up(
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

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Liveness: 200 when the process serves and the store answers a read",
    responses(
        (status = 200, description = "Healthy", body = HealthBody),
        (status = 503, description = "The store does not answer", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn healthz(State(state): State<AppState>) -> ApiResult<Json<HealthBody>> {
    match state.comments.health().await {
        Ok(()) => Ok(Json(HealthBody {
            status: "ok".into(),
        })),
        Err(error) => {
            tracing::warn!(%error, "health check failed");
            Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store does not answer",
            ))
        }
    }
}

#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    summary = "Readiness: 200 when this process should be sent traffic",
    description = "503 while the process stops, while the store refuses writes (a full disk), or while the statistics aggregator or the webhooks fan-out is stuck or lags past the threshold; the body names each condition.",
    responses(
        (status = 200, description = "Ready", body = ReadinessBody),
        (status = 503, description = "Not ready: the conditions say why", body = ReadinessBody),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let readiness = &state.readiness;
    let now = Instant::now();
    let mut conditions = Vec::new();
    if readiness
        .stopping
        .load(std::sync::atomic::Ordering::Acquire)
    {
        conditions.push(ReadinessCondition::of(
            "stopping",
            Err("the process is stopping".into()),
        ));
    }
    let store = state
        .comments
        .health()
        .await
        .map_err(|error| format!("the store does not answer: {error}"));
    conditions.push(ReadinessCondition::of("store", store));
    for check in &readiness.checks {
        conditions.push(ReadinessCondition::of(check.name(), check.check().await));
    }
    if let Some(status) = &state.aggregator {
        let status = *status.borrow();
        let progress = ConsumerProgress {
            lag_ms: status.lag_ms,
            published: status.published,
        };
        conditions.push(ReadinessCondition::of(
            "aggregator",
            keeps_up(progress, readiness.policy, now),
        ));
    }
    if let Some(progress) = &readiness.webhooks_fan_out {
        let progress = *progress.borrow();
        let progress = ConsumerProgress {
            lag_ms: progress.lag.millis,
            published: progress.published,
        };
        conditions.push(ReadinessCondition::of(
            "webhooks",
            keeps_up(progress, readiness.policy, now),
        ));
    }
    let ready = conditions.iter().all(|c| c.ready);
    for condition in conditions.iter().filter(|c| !c.ready) {
        tracing::debug!(condition = %condition.name, detail = ?condition.detail, "not ready");
    }
    let status = match ready {
        true => StatusCode::OK,
        false => StatusCode::SERVICE_UNAVAILABLE,
    };
    let body = ReadinessBody {
        status: if ready { "ready" } else { "not ready" }.into(),
        conditions,
    };
    (status, Json(body)).into_response()
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

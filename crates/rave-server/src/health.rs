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

use std::time::Instant;

use crate::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::HealthBody;
use crate::error::{ApiError, ApiResult, Problem};
use crate::readiness::{ConsumerProgress, keeps_up};
use crate::state::AppState;

/// One condition of readiness and how it stands.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReadinessCondition {
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
pub(crate) struct ReadinessBody {
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
pub(crate) async fn healthz(State(state): State<AppState>) -> ApiResult<Json<HealthBody>> {
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
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
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
    let consumers = [
        (
            "aggregator",
            state
                .aggregator
                .as_ref()
                .map(|s| ConsumerProgress::from(*s.borrow())),
        ),
        (
            "webhooks",
            readiness
                .webhooks_fan_out
                .as_ref()
                .map(|p| ConsumerProgress::from(*p.borrow())),
        ),
    ];
    for (name, progress) in consumers {
        if let Some(progress) = progress {
            conditions.push(ReadinessCondition::of(
                name,
                keeps_up(progress, readiness.policy, now),
            ));
        }
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

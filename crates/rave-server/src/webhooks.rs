//! The admin API of webhooks: registering endpoints, listing and removing
//! them, an endpoint's recent deliveries and sending a failed one again.
//! The bodies are mirrors of rave-webhooks' types, as `api` mirrors the
//! comments domain's.

use crate::json::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use rave_access::Target;
use rave_webhooks::{Delivery, Endpoint, EventType, WebhookError, Webhooks};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::callers::{Authorized, Webhooks as ManageWebhooks};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::responses::{
    BadRequest, BodyRefused, Conflict, NoSuchWebhook, TokenRefused, Unavailable,
};
use crate::routes::Segment;

impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> ApiError {
        match error {
            WebhookError::Invalid { field, message } => {
                ApiError::bad_request(format!("{field}: {message}"))
            }
            WebhookError::Target(refused) => ApiError::bad_request(format!("url: {refused}")),
            WebhookError::NotFound(what) => ApiError::not_found(format!("no such {what}")),
            WebhookError::Conflict(detail) => ApiError::new(StatusCode::CONFLICT, detail),
            WebhookError::Unavailable {
                detail,
                retry_after,
            } => {
                tracing::warn!(%detail, "store unavailable");
                ApiError::unavailable(retry_after.as_secs().max(1))
            }
            WebhookError::Corrupt { key, what } => {
                tracing::error!(%key, detail = %what, "corrupt stored item");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "a stored item is corrupt; the operator has been told which",
                )
            }
            WebhookError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

fn webhooks(state: &AppState) -> ApiResult<&Webhooks<rave_store::SharedStore>> {
    state
        .webhooks
        .as_deref()
        .ok_or_else(|| ApiError::not_found("webhooks are not enabled on this server"))
}

/// An event a webhook endpoint can subscribe to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
pub enum WebhookEvent {
    #[serde(rename = "comment.created")]
    Created,
    #[serde(rename = "comment.published")]
    Published,
    #[serde(rename = "comment.flagged")]
    Flagged,
    #[serde(rename = "comment.updated")]
    Updated,
    #[serde(rename = "comment.deleted")]
    Deleted,
    #[serde(rename = "comment.replied")]
    Replied,
    #[serde(rename = "comment.voted")]
    Voted,
    /// A review request fell due (shops that send their own mail).
    #[serde(rename = "review.requested")]
    ReviewRequested,
}

impl From<WebhookEvent> for EventType {
    fn from(event: WebhookEvent) -> EventType {
        match event {
            WebhookEvent::Created => EventType::Created,
            WebhookEvent::Published => EventType::Published,
            WebhookEvent::Flagged => EventType::Flagged,
            WebhookEvent::Updated => EventType::Updated,
            WebhookEvent::Deleted => EventType::Deleted,
            WebhookEvent::Replied => EventType::Replied,
            WebhookEvent::Voted => EventType::Voted,
            WebhookEvent::ReviewRequested => EventType::ReviewRequested,
        }
    }
}

impl From<EventType> for WebhookEvent {
    fn from(event: EventType) -> WebhookEvent {
        match event {
            EventType::Created => WebhookEvent::Created,
            EventType::Published => WebhookEvent::Published,
            EventType::Flagged => WebhookEvent::Flagged,
            EventType::Updated => WebhookEvent::Updated,
            EventType::Deleted => WebhookEvent::Deleted,
            EventType::Replied => WebhookEvent::Replied,
            EventType::Voted => WebhookEvent::Voted,
            EventType::ReviewRequested => WebhookEvent::ReviewRequested,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewWebhookBody {
    /// An `http` or `https` URL of a public address (checked after DNS
    /// resolution, so a name that does not resolve is refused too).
    #[schema(
        min_length = 8,
        max_length = 2048,
        pattern = r"^https?://[^\s/?#]+([/?#][^\s]*)?$"
    )]
    pub url: String,
    /// At least one event.
    #[schema(min_items = 1)]
    pub events: Vec<WebhookEvent>,
}

/// A registered endpoint; `secret` only in the answer to its creation.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WebhookBody {
    pub id: String,
    pub url: String,
    pub events: Vec<WebhookEvent>,
    /// The Standard Webhooks signing secret (`whsec_…`), shown once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl WebhookBody {
    fn of(endpoint: &Endpoint, with_secret: bool) -> WebhookBody {
        WebhookBody {
            id: endpoint.id.clone(),
            url: endpoint.url.clone(),
            events: endpoint.events.iter().map(|e| (*e).into()).collect(),
            secret: with_secret.then(|| endpoint.secret.to_string()),
            created_at: endpoint.created_at_ms,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WebhookListBody {
    pub webhooks: Vec<WebhookBody>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum DeliveryStatusBody {
    Pending,
    Delivered,
    Failed,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeliveryBody {
    pub id: String,
    /// The `webhook-id` header, the same on every attempt.
    pub webhook_id: String,
    pub event: WebhookEvent,
    pub status: DeliveryStatusBody,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Milliseconds since the Unix epoch, here and below.
    pub created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
}

impl From<&Delivery> for DeliveryBody {
    fn from(d: &Delivery) -> DeliveryBody {
        let pending = d.status == rave_webhooks::DeliveryStatus::Pending;
        DeliveryBody {
            id: d.id.clone(),
            webhook_id: d.message_id(),
            event: d.event.into(),
            status: match d.status {
                rave_webhooks::DeliveryStatus::Pending => DeliveryStatusBody::Pending,
                rave_webhooks::DeliveryStatus::Delivered => DeliveryStatusBody::Delivered,
                rave_webhooks::DeliveryStatus::Failed => DeliveryStatusBody::Failed,
            },
            attempts: d.attempts,
            last_error: d.last_error.clone(),
            created_at: d.created_at_ms,
            next_attempt_at: pending.then_some(d.next_attempt_at_ms),
            finished_at: d.finished_at_ms,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeliveryListBody {
    pub deliveries: Vec<DeliveryBody>,
}

#[utoipa::path(
    post,
    path = "/v1/admin/webhooks",
    tag = "admin",
    summary = "Register a webhook endpoint (scope webhooks)",
    description = "Events are POSTed to `url`, signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the `secret` of the answer, which is shown only here. The URL must be http or https and resolve to public addresses unless the server runs with `--webhook-allow-private`.",
    request_body = NewWebhookBody,
    security(("access_token" = ["webhooks"])),
    responses(
        (
            status = 201,
            description = "The endpoint, with its secret",
            body = WebhookBody,
            links(
                ("ListDeliveries" = (operation_id = "list_deliveries", parameters(("id" = "$response.body#/id")))),
                ("DeleteWebhook" = (operation_id = "delete_webhook", parameters(("id" = "$response.body#/id")))),
                ("RetryDelivery" = (operation_id = "retry_delivery", parameters(("id" = "$response.body#/id"))))
            )
        ),
        BadRequest,
        TokenRefused,
        Conflict,
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn create_webhook(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<ManageWebhooks>,
    JsonBody(body): JsonBody<NewWebhookBody>,
) -> ApiResult<(StatusCode, Json<WebhookBody>)> {
    let events: Vec<EventType> = body.events.into_iter().map(EventType::from).collect();
    let endpoint = webhooks(&state)?
        .create_endpoint(&body.url, &events)
        .await?;
    staff
        .record(
            &state,
            "webhook.create",
            Target::new("webhook", &endpoint.id),
            Some(format!("url {}", endpoint.url)),
        )
        .await;
    Ok((StatusCode::CREATED, Json(WebhookBody::of(&endpoint, true))))
}

#[utoipa::path(
    get,
    path = "/v1/admin/webhooks",
    tag = "admin",
    summary = "List webhook endpoints (scope webhooks)",
    security(("access_token" = ["webhooks"])),
    responses(
        (status = 200, description = "Every endpoint, oldest first, without secrets", body = WebhookListBody),
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn list_webhooks(
    State(state): State<AppState>,
    _staff: Authorized<ManageWebhooks>,
) -> ApiResult<Json<WebhookListBody>> {
    let endpoints = webhooks(&state)?.endpoints().await?;
    Ok(Json(WebhookListBody {
        webhooks: endpoints
            .iter()
            .map(|e| WebhookBody::of(e, false))
            .collect(),
    }))
}

#[utoipa::path(
    delete,
    path = "/v1/admin/webhooks/{id}",
    tag = "admin",
    summary = "Remove a webhook endpoint (scope webhooks)",
    params(("id" = String, Path, description = "Endpoint id")),
    security(("access_token" = ["webhooks"])),
    responses(
        (status = 204, description = "Removed, with its deliveries; nothing more is sent to it"),
        BadRequest,
        TokenRefused,
        NoSuchWebhook,
        Unavailable,
    )
)]
pub(crate) async fn delete_webhook(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<ManageWebhooks>,
    Segment(id): Segment,
) -> ApiResult<StatusCode> {
    webhooks(&state)?.delete_endpoint(&id).await?;
    staff
        .record(&state, "webhook.delete", Target::new("webhook", &id), None)
        .await;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/admin/webhooks/{id}/deliveries",
    tag = "admin",
    summary = "An endpoint's recent deliveries (scope webhooks)",
    params(("id" = String, Path, description = "Endpoint id")),
    security(("access_token" = ["webhooks"])),
    responses(
        (status = 200, description = "Up to 100 deliveries, newest first", body = DeliveryListBody),
        BadRequest,
        TokenRefused,
        NoSuchWebhook,
        Unavailable,
    )
)]
pub(crate) async fn list_deliveries(
    State(state): State<AppState>,
    _staff: Authorized<ManageWebhooks>,
    Segment(id): Segment,
) -> ApiResult<Json<DeliveryListBody>> {
    let deliveries = webhooks(&state)?
        .deliveries(&id, rave_webhooks::MAX_LISTED_DELIVERIES)
        .await?;
    Ok(Json(DeliveryListBody {
        deliveries: deliveries.iter().map(DeliveryBody::from).collect(),
    }))
}

#[utoipa::path(
    post,
    path = "/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry",
    tag = "admin",
    summary = "Send a failed delivery again (scope webhooks)",
    description = "The delivery becomes pending with a new retry deadline and keeps its `webhook-id`.",
    params(
        ("id" = String, Path, description = "Endpoint id"),
        ("delivery_id" = String, Path, description = "Delivery id")
    ),
    security(("access_token" = ["webhooks"])),
    responses(
        (status = 200, description = "The delivery, pending again", body = DeliveryBody),
        BadRequest,
        TokenRefused,
        NoSuchWebhook,
        Conflict,
        Unavailable,
    )
)]
pub(crate) async fn retry_delivery(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<ManageWebhooks>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> ApiResult<Json<DeliveryBody>> {
    let Path((id, delivery_id)) = path.map_err(|e| ApiError::bad_request(format!("path: {e}")))?;
    let delivery = webhooks(&state)?.retry_delivery(&id, &delivery_id).await?;
    staff
        .record(
            &state,
            "delivery.retry",
            Target::new("delivery", &delivery_id),
            Some(format!("webhook {id}")),
        )
        .await;
    Ok(Json(DeliveryBody::from(&delivery)))
}

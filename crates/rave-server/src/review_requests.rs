//! Review requests over HTTP: orders in (`/v1/admin/orders`, scope
//! `import`), what the schedule holds and what it achieved
//! (`/v1/admin/requests`, scope `admin`). The review form and unsubscribe
//! pages the requests link to are in `pages::review`.
//!
//! An order's address and name go to rave-requests' own table and come
//! back in no answer but the order's own (`GET` is not offered at all):
//! the admin listing shows order ids, statuses and times only.

use crate::json::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rave_access::Target;
use rave_comments::Timestamp;
use rave_requests::{Order, OrderPut, Request, RequestKind, RequestStatus, RequestsError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::rfc3339;
use crate::callers::{Admin, Authorized, Import};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::responses::{BadRequest, BodyRefused, TokenRefused, Unavailable};
use crate::routes::Segment;
use crate::routes::query::{Dialect, Params};
use crate::state::{AppState, ReviewRequests};

pub(crate) fn enabled(state: &AppState) -> ApiResult<&ReviewRequests> {
    state.review_requests.as_ref().ok_or_else(|| {
        ApiError::not_found(
            "review requests are not enabled on this server (start it with --public-url)",
        )
    })
}

impl From<RequestsError> for ApiError {
    fn from(error: RequestsError) -> ApiError {
        match error {
            RequestsError::Invalid { field, message } => {
                ApiError::bad_request(format!("{field}: {message}"))
            }
            RequestsError::NotFound(what) => ApiError::not_found(format!("no such {what}")),
            RequestsError::BadLink(why) => {
                ApiError::not_found(format!("the link is not valid: {why}"))
            }
            RequestsError::Unavailable {
                detail,
                retry_after,
            } => {
                tracing::warn!(%detail, "store unavailable");
                ApiError::unavailable(retry_after.as_secs().max(1))
            }
            RequestsError::Corrupt { key, what } => {
                tracing::error!(%key, detail = %what, "corrupt stored item");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "a stored item is corrupt; the operator has been told which",
                )
            }
            RequestsError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OrderBody {
    /// The shop's order id; putting the same id again changes the order.
    #[schema(min_length = 1, max_length = 128)]
    pub order_id: String,
    /// Where the requests go. Kept apart from comments; never shown,
    /// logged or sent in a webhook.
    #[schema(min_length = 3, max_length = 254)]
    pub email: String,
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// A language tag (en, de, fr-CA); rave writes en, de, fr and es, and
    /// English for the rest.
    #[schema(
        min_length = 2,
        max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
    )]
    pub locale: String,
    /// Within the last 90 days.
    #[schema(value_type = crate::api::UtcTime)]
    pub delivered_at: String,
    /// Products with a product record (`PUT /v1/products/{id}`).
    #[schema(min_items = 1, max_items = 50)]
    pub products: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct OrderAnswer {
    pub order_id: String,
    /// `created`, `rescheduled` (the delivery or products changed: what was
    /// not sent is due anew) or `unchanged`.
    pub outcome: String,
}

#[utoipa::path(
    post,
    path = "/v1/admin/orders",
    tag = "admin",
    summary = "Report a delivered order (scope import)",
    description = "Idempotent per `order_id`. The first review request falls due the configured delay after `delivered_at`, one reminder later if nothing was reviewed. An unknown product, a bad address or a delivery outside the last 90 days is a 400 and stores nothing.",
    request_body = OrderBody,
    security(("access_token" = ["import"])),
    responses(
        (status = 201, description = "The order is new", body = OrderAnswer),
        (status = 200, description = "The order was known: rescheduled or unchanged", body = OrderAnswer),
        BadRequest,
        TokenRefused,
        (status = 404, description = "Review requests are not enabled", body = crate::error::Problem, content_type = "application/problem+json"),
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn put_order(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Import>,
    JsonBody(body): JsonBody<OrderBody>,
) -> ApiResult<(StatusCode, Json<OrderAnswer>)> {
    let review_requests = enabled(&state)?;
    let delivered_at = Timestamp::parse(&body.delivered_at).map_err(|_| {
        ApiError::bad_request(
            "delivered_at: must be an RFC 3339 time in UTC such as 2026-11-20T10:00:00Z",
        )
    })?;
    for product in &body.products {
        let known = rave_comments::ProductId::parse(product).is_ok()
            && state
                .comments
                .product_overview(product)
                .await?
                .record
                .is_some();
        if !known {
            return Err(ApiError::bad_request(format!(
                "products: {product:?} has no product record (PUT /v1/products/{{id}} first)"
            )));
        }
    }
    let order = Order {
        id: body.order_id,
        email: body.email,
        name: body.name,
        locale: body.locale,
        delivered_at_ms: u64::try_from(delivered_at.millis()).unwrap_or_default(),
        products: body.products,
    };
    let order_id = order.id.clone();
    let outcome = review_requests.requests.put_order(order).await?;
    let (status, outcome) = match outcome {
        OrderPut::Created => (StatusCode::CREATED, "created"),
        OrderPut::Rescheduled => (StatusCode::OK, "rescheduled"),
        OrderPut::Unchanged => (StatusCode::OK, "unchanged"),
    };
    if status != StatusCode::OK || outcome == "rescheduled" {
        staff
            .record(
                &state,
                "order.put",
                Target::new("order", &order_id),
                Some(outcome.into()),
            )
            .await;
    }
    Ok((
        status,
        Json(OrderAnswer {
            order_id,
            outcome: outcome.into(),
        }),
    ))
}

#[utoipa::path(
    delete,
    path = "/v1/admin/orders/{order_id}",
    tag = "admin",
    summary = "Cancel an order (scope import)",
    description = "The order, its address and its requests are deleted: nothing more is sent for it.",
    params(("order_id" = String, Path, description = "The shop's order id")),
    security(("access_token" = ["import"])),
    responses(
        (status = 204, description = "Cancelled"),
        TokenRefused,
        (status = 404, description = "No such order, or review requests are not enabled", body = crate::error::Problem, content_type = "application/problem+json"),
        Unavailable,
    )
)]
pub(crate) async fn cancel_order(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Import>,
    Segment(order_id): Segment,
) -> ApiResult<StatusCode> {
    enabled(&state)?.requests.cancel_order(&order_id).await?;
    staff
        .record(
            &state,
            "order.cancel",
            Target::new("order", &order_id),
            None,
        )
        .await;
    Ok(StatusCode::NO_CONTENT)
}

/// A request as the admin listing shows it: no address, no name.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RequestBody {
    pub order_id: String,
    /// `first` or `reminder`.
    pub kind: String,
    /// `scheduled`, `sent`, `failed` or `skipped`.
    pub status: String,
    /// RFC 3339: when it is (or was) due.
    pub due_at: String,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<String>,
    /// The last refusal of the SMTP server or webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_because: Option<String>,
}

impl From<&Request> for RequestBody {
    fn from(request: &Request) -> RequestBody {
        RequestBody {
            order_id: request.order_id.clone(),
            kind: request.kind.as_str().into(),
            status: request.status.as_str().into(),
            due_at: rfc3339(request.due_at_ms),
            attempts: request.attempts,
            sent_at: request.sent_at_ms.map(rfc3339),
            last_error: request.last_error.clone(),
            skipped_because: request.skipped_because.clone(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RequestPageBody {
    pub requests: Vec<RequestBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A page's cursor: the last request's place in its status listing.
#[derive(Debug, Serialize, Deserialize)]
struct RequestCursor {
    order_id: String,
    kind: String,
    due_at_ms: u64,
}

fn cursor_of(request: &Request) -> String {
    let cursor = RequestCursor {
        order_id: request.order_id.clone(),
        kind: request.kind.as_str().into(),
        due_at_ms: request.due_at_ms,
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
}

fn request_at(cursor: &str, status: RequestStatus) -> ApiResult<Request> {
    let bad = || ApiError::bad_request("cursor: is not a cursor this listing gave");
    let cursor: RequestCursor = URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(bad)?;
    let kind: RequestKind = cursor.kind.parse().map_err(|()| bad())?;
    Ok(Request {
        order_id: cursor.order_id,
        kind,
        status,
        due_at_ms: cursor.due_at_ms,
        attempts: 0,
        first_attempt_ms: None,
        sent_at_ms: None,
        last_error: None,
        skipped_because: None,
    })
}

#[utoipa::path(
    get,
    path = "/v1/admin/requests",
    tag = "admin",
    summary = "Review requests by status, in due order (scope admin)",
    params(
        ("status" = Option<String>, Query, description = "scheduled (default), sent, failed or skipped"),
        ("limit" = Option<crate::api::PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<String>, Query, description = "The next_cursor of the previous page, for the same status"),
    ),
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "A page of requests", body = RequestPageBody),
        BadRequest,
        TokenRefused,
        (status = 404, description = "Review requests are not enabled", body = crate::error::Problem, content_type = "application/problem+json"),
        Unavailable,
    )
)]
pub(crate) async fn list_requests(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<RequestPageBody>> {
    let review_requests = enabled(&state)?;
    let params = Params::new(raw.as_deref(), &["status", "limit", "cursor"], Dialect::Api)?;
    let status = match params.value("status")? {
        None => RequestStatus::Scheduled,
        Some(status) => status.parse().map_err(|()| {
            ApiError::bad_request("status: must be scheduled, sent, failed or skipped")
        })?,
    };
    let after = params
        .value("cursor")?
        .map(|cursor| request_at(cursor, status))
        .transpose()?;
    let page = review_requests
        .requests
        .requests(
            status,
            params.limit(rave_comments::DEFAULT_PAGE_SIZE)?,
            after.as_ref(),
        )
        .await?;
    Ok(Json(RequestPageBody {
        requests: page.requests.iter().map(RequestBody::from).collect(),
        next_cursor: page.next.as_ref().map(cursor_of),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProductConversionBody {
    pub product_id: String,
    /// Orders with this product whose first request was sent.
    pub requested: u64,
    /// Reviews of it posted through a request's link.
    pub reviewed: u64,
    /// reviewed ÷ requested (0 before any request).
    pub conversion: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConversionBody {
    pub products: Vec<ProductConversionBody>,
}

#[utoipa::path(
    get,
    path = "/v1/admin/requests/products",
    tag = "admin",
    summary = "Requests sent and reviews received per product (scope admin)",
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "Every product asked about", body = ConversionBody),
        TokenRefused,
        (status = 404, description = "Review requests are not enabled", body = crate::error::Problem, content_type = "application/problem+json"),
        Unavailable,
    )
)]
pub(crate) async fn conversion(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
) -> ApiResult<Json<ConversionBody>> {
    let figures = enabled(&state)?.requests.figures().await?;
    Ok(Json(ConversionBody {
        products: figures
            .into_iter()
            .map(|f| ProductConversionBody {
                conversion: if f.requested == 0 {
                    0.0
                } else {
                    f.reviewed as f64 / f.requested as f64
                },
                product_id: f.product,
                requested: f.requested,
                reviewed: f.reviewed,
            })
            .collect(),
    }))
}

//! rave's HTTP service: the contract of API.md on axum, over the comments
//! domain. The service holds no state of its own beyond the rate limiter and
//! metrics; everything lives in the store.
//!
//! * `routes` — the handlers, annotated for the OpenAPI document;
//! * `pages` — server-rendered product pages, fragments, the embed script
//!   and product records;
//! * `caching` — ETags, Cache-Control and 304s;
//! * `cors` — cross-origin use of the public API by allowed origins;
//! * `api` — request and response bodies;
//! * `extract` — strict JSON bodies and the admin token;
//! * `json` — JSON answers, written into one buffer;
//! * `client_addr` — the client's address, behind trusted proxies too;
//! * `limiter` — the per-client rate limit, in bounded memory;
//! * `error` — problem documents;
//! * `metrics` — Prometheus metrics;
//! * `webhooks` — the admin API of webhook endpoints and deliveries;
//! * `moderation_hook` — the moderation hook over HTTP;
//! * `purchase` — purchase proofs (signed JWTs) checked on posts;
//! * `media` — photos served from the media store (rave-media);
//! * `uploads` — photos posted with a comment (multipart), checked, stored,
//!   then the comment.

#![warn(unreachable_pub)]

mod access;
mod answers;
mod api;
mod attributes;
mod caching;
mod callers;
mod client_addr;
mod comment_json;
mod cors;
mod error;
mod extract;
pub mod feeds;
mod groups;
mod health;
mod imports;
mod json;
mod limiter;
mod media;
mod metrics;
mod middleware;
mod moderation;
mod moderation_hook;
mod moves;
mod page_policy;
mod pages;
mod purchase;
mod readiness;
mod responses;
mod review_requests;
mod routes;
mod sort_labels;
mod state;
mod uploads;
mod webhooks;

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::client_addr::ClientAddr;

pub use api::AggregatorStatus;
pub use caching::CachePolicy;
pub use client_addr::{InvalidTrustedProxy, TrustedProxies, TrustedProxy};
pub use cors::{AllowedOrigin, InvalidOrigin};
pub use error::{ApiError, Problem};
pub use extract::{ConfiguredToken, MAX_BODY_BYTES};
pub use media::{InvalidMediaUrl, MediaLinks};
pub use metrics::Metrics;
pub use moderation_hook::{HookSetupError, HttpModerationHook};
pub use purchase::PurchaseVerifier;
pub use readiness::{ReadinessCheck, ReadinessPolicy};
pub use state::{AppState, ReviewRequests, ServerConfig, ServerState};
pub use uploads::{DEFAULT_MAX_PHOTO_BYTES, DEFAULT_MAX_PHOTOS, InvalidUploadLimits, UploadLimits};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "rave",
        description = "Product comments and ratings on the DynamoDB single-table design.",
        license(name = "MIT OR Apache-2.0")
    ),
    tags(
        (name = "comments", description = "Reading and posting comments"),
        (name = "statistics", description = "Counts, leaderboards and aggregates, from the change stream"),
        (name = "admin", description = "Moderation and edits; need the admin token"),
        (name = "pages", description = "Product pages, fragments and the embed, for crawlers and shops"),
        (name = "operations", description = "Health, metrics, this document")
    ),
    // The schemas only parameters name: bodies' schemas are collected from
    // the handlers, parameters' are not.
    components(schemas(Problem, api::PageSize, api::Cursor, api::QueueState, api::LanguageFilter, api::PageCursor, api::PageScope, api::VoterId, api::ListingSort))
)]
struct ApiDoc;

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    summary = "This OpenAPI 3.1 document",
    responses((status = 200, description = "The document", content_type = "application/json"))
)]
async fn openapi_json(State(state): State<AppState>) -> impl IntoResponse {
    let text = state.openapi.get().cloned().unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], text)
}

/// The router with every endpoint, and the OpenAPI document generated from it.
pub fn router(state: AppState) -> (Router, utoipa::openapi::OpenApi) {
    let (router, mut openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(routes::list_comments, routes::create_comment))
        .routes(routes!(
            routes::get_comment,
            routes::edit_comment,
            routes::delete_comment
        ))
        .routes(routes!(routes::flag_comment))
        .routes(routes!(routes::set_incentivized))
        .routes(routes!(routes::approve_comment))
        .routes(routes!(routes::reject_comment))
        .routes(routes!(media::moderation::approve_photo))
        .routes(routes!(media::moderation::reject_photo))
        .routes(routes!(routes::set_reply, routes::delete_reply))
        .routes(routes!(routes::put_vote, routes::delete_vote))
        .routes(routes!(routes::moderation_queue))
        .routes(routes!(routes::moderation_figures))
        .routes(routes!(routes::author_comments, routes::erase_author))
        .routes(routes!(routes::product_stats))
        .routes(routes!(groups::group_comments))
        .routes(routes!(groups::group_stats))
        .routes(routes!(moves::list_moves))
        .routes(routes!(routes::leaderboard))
        .routes(routes!(routes::global_stats))
        .routes(routes!(routes::aggregator_status))
        .routes(routes!(webhooks::create_webhook, webhooks::list_webhooks))
        .routes(routes!(webhooks::delete_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(webhooks::retry_delivery))
        .routes(routes!(
            access::tokens::create_token,
            access::tokens::list_tokens
        ))
        .routes(routes!(access::tokens::revoke_token))
        .routes(routes!(access::audit::list_audit))
        .routes(routes!(review_requests::put_order))
        .routes(routes!(review_requests::cancel_order))
        .routes(routes!(review_requests::list_requests))
        .routes(routes!(review_requests::conversion))
        .routes(routes!(
            pages::review::review_form,
            pages::review::post_review
        ))
        .routes(routes!(
            pages::review::unsubscribe_form,
            pages::review::unsubscribe
        ))
        .routes(routes!(imports::start_import))
        .routes(routes!(imports::import_progress))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(routes::metrics))
        .routes(routes!(openapi_json))
        .routes(routes!(routes::page))
        .routes(routes!(pages::get_product, pages::put_product))
        .routes(routes!(pages::product_page))
        .routes(routes!(pages::product_fragment))
        .routes(routes!(pages::embed_js))
        .routes(routes!(feeds::google_product_reviews))
        .routes(routes!(media::get_media))
        .split_for_parts();
    if let Some(components) = openapi.components.as_mut() {
        components.add_security_scheme(
            "access_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
    let _ = state
        .openapi
        .set(serde_json::to_string_pretty(&openapi).unwrap_or_default());
    let cors = cors::layer(&state.allowed_origins);
    let page_text = routes::page_text();
    let page_policy = std::sync::Arc::new(page_policy::PagePolicy::new(
        &page_policy::inline_elements(page_text, "script"),
        &[
            page_policy::inline_elements(page_text, "style"),
            vec![pages::STYLE],
        ]
        .concat(),
        &state.frame_ancestors,
        state.media_links.origin(),
    ));
    let router = router
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::json_routes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::after_writes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            page_policy,
            middleware::page_headers,
        ))
        .layer(cors)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::track,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::resolve_client,
        ))
        .with_state(state);
    (router, openapi)
}

/// The span each request's log lines belong to, naming the client.
fn request_span(request: &axum::extract::Request) -> tracing::Span {
    let client = request.extensions().get::<ClientAddr>();
    tracing::info_span!(
        "request",
        method = %request.method(),
        uri = %request.uri(),
        version = ?request.version(),
        client = client.map(tracing::field::display),
    )
}

/// How long requests in flight may take to finish once the server is told
/// to stop, unless the binary says otherwise.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(8);

/// Serves until `shutdown` resolves, then lets requests in flight finish
/// for at most `drain`; past it, their connections are closed unanswered
/// (a write the store had committed stays committed, and one it had not is
/// not). From the moment `shutdown` resolves, `/readyz` answers 503.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    drain: Duration,
) -> std::io::Result<()> {
    let pruning = state.limiter().map(|limiter| {
        // Forget clients whose buckets have refilled, often enough that a
        // flood which filled the limiter leaves it soon after it stops.
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(10));
            loop {
                tick.tick().await;
                limiter.prune();
            }
        })
    });
    // Products' moves between families resume at start-up.
    let moving = tokio::spawn(moves::run_worker(state.comments.clone()));
    let stopping = state.readiness.stopping.clone();
    let (told, told_to_stop) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        stopping.store(true, Ordering::Release);
        let _ = told.send(());
    };
    let (app, _) = router(state);
    let serving = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .into_future();
    tokio::pin!(serving);
    let served = tokio::select! {
        served = &mut serving => served,
        _ = told_to_stop => match tokio::time::timeout(drain, &mut serving).await {
            Ok(served) => served,
            Err(_) => {
                tracing::warn!(
                    drain_seconds = drain.as_secs_f64(),
                    "requests still in flight after the drain time: closing their connections"
                );
                Ok(())
            }
        },
    };
    if let Some(task) = pruning {
        task.abort();
    }
    // A job stopped mid-move leaves its marker: the next start finishes it.
    moving.abort();
    served
}

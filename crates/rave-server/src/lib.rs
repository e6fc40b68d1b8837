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
//! * `client_addr` — the client's address, behind trusted proxies too;
//! * `limiter` — the per-client rate limit, in bounded memory;
//! * `error` — problem documents;
//! * `metrics` — Prometheus metrics;
//! * `webhooks` — the admin API of webhook endpoints and deliveries;
//! * `moderation_hook` — the moderation hook over HTTP;
//! * `purchase` — purchase proofs (signed JWTs) checked on posts.

mod answers;
mod api;
mod caching;
mod client_addr;
mod cors;
mod error;
mod extract;
mod limiter;
mod metrics;
mod moderation_hook;
mod pages;
mod purchase;
mod responses;
mod routes;
mod sort_labels;
mod webhooks;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use rave_comments::Comments;
use rave_store::SharedStore;
use rave_webhooks::Webhooks;
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::client_addr::ClientAddr;
use crate::limiter::{ClientLimiter, MAX_TRACKED_CLIENTS};

pub use api::AggregatorStatus;
pub use caching::CachePolicy;
pub use client_addr::{InvalidTrustedProxy, TrustedProxies, TrustedProxy};
pub use cors::{AllowedOrigin, InvalidOrigin};
pub use error::{ApiError, Problem};
pub use extract::{AdminToken, MAX_BODY_BYTES};
pub use metrics::Metrics;
pub use moderation_hook::{HookSetupError, HttpModerationHook};
pub use purchase::PurchaseVerifier;

/// How the service is configured beyond the domain.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The token admin endpoints require; `None` disables them (403).
    pub admin_token: Option<String>,
    /// Public POSTs allowed per client address and minute; 0 turns the
    /// limit off.
    pub rate_limit_per_minute: u32,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            admin_token: None,
            rate_limit_per_minute: 600,
        }
    }
}

/// What every handler shares, behind one `Arc`: each middleware and
/// handler takes its own copy per request, which is then a counter
/// increment.
#[derive(Clone, Debug)]
pub struct AppState(Arc<ServerState>);

impl std::ops::Deref for AppState {
    type Target = ServerState;

    fn deref(&self) -> &ServerState {
        &self.0
    }
}

/// The state behind [`AppState`].
#[derive(Clone, Debug)]
pub struct ServerState {
    pub comments: Arc<Comments<SharedStore>>,
    pub admin: AdminToken,
    pub metrics: Arc<Metrics>,
    limiter: Option<Arc<ClientLimiter>>,
    trusted_proxies: TrustedProxies,
    openapi: Arc<OnceLock<String>>,
    /// The in-process aggregator's status, when one runs here.
    aggregator: Option<tokio::sync::watch::Receiver<AggregatorStatus>>,
    cache_policy: CachePolicy,
    /// Origins whose pages may call the public API; none by default.
    allowed_origins: Vec<AllowedOrigin>,
    /// Webhook endpoints and deliveries; `None` answers their routes 404.
    webhooks: Option<Arc<Webhooks<SharedStore>>>,
    /// Checks purchase proofs; `None`: a post with one is refused.
    purchases: Option<PurchaseVerifier>,
    /// Listing answers nothing has changed since (`answers`).
    answers: Arc<answers::Answers>,
}

impl AppState {
    pub fn new(comments: Arc<Comments<SharedStore>>, config: &ServerConfig) -> AppState {
        let metrics = Arc::new(Metrics::default());
        let limiter = NonZeroU32::new(config.rate_limit_per_minute).map(|per_minute| {
            Arc::new(ClientLimiter::new(
                per_minute,
                MAX_TRACKED_CLIENTS,
                metrics.rate_limited_clients(),
            ))
        });
        AppState(Arc::new(ServerState {
            comments,
            admin: AdminToken::new(config.admin_token.as_deref()),
            metrics,
            limiter,
            trusted_proxies: TrustedProxies::default(),
            openapi: Arc::new(OnceLock::new()),
            aggregator: None,
            cache_policy: CachePolicy::default(),
            allowed_origins: Vec::new(),
            webhooks: None,
            purchases: None,
            answers: Arc::default(),
        }))
    }

    /// The state to change while the server is being set up (it is not
    /// shared yet, so nothing is copied).
    fn setting_up(&mut self) -> &mut ServerState {
        Arc::make_mut(&mut self.0)
    }

    /// Verifies purchase proofs signed with `secret` (the shop's); without
    /// it a post that carries a proof is refused.
    pub fn with_purchase_secret(mut self, secret: &[u8]) -> AppState {
        self.setting_up().purchases = Some(PurchaseVerifier::new(secret));
        self
    }

    /// How long caches may keep pages, listings and statistics.
    pub fn with_cache_policy(mut self, policy: CachePolicy) -> AppState {
        self.setting_up().cache_policy = policy;
        self
    }

    /// Lets pages from these origins call the public API (CORS).
    pub fn with_allowed_origins(mut self, origins: Vec<AllowedOrigin>) -> AppState {
        self.setting_up().allowed_origins = origins;
        self
    }

    /// Reports the status an in-process aggregator publishes.
    pub fn with_aggregator(
        mut self,
        status: tokio::sync::watch::Receiver<AggregatorStatus>,
    ) -> AppState {
        self.setting_up().aggregator = Some(status);
        self
    }

    /// Serves the webhooks admin API over `webhooks`.
    pub fn with_webhooks(mut self, webhooks: Arc<Webhooks<SharedStore>>) -> AppState {
        self.setting_up().webhooks = Some(webhooks);
        self
    }

    /// Believes the forwarding headers of requests from these proxies: the
    /// client is then the address they name (see `client_addr`).
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> AppState {
        self.setting_up().trusted_proxies = proxies;
        self
    }

    /// Refuses a public write from `client` once it is over the rate limit.
    fn check_rate(&self, client: IpAddr) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check(client).map_err(|wait| {
            ApiError::too_many_requests(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }
}

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
    components(schemas(Problem, api::PageSize, api::Cursor, api::QueueState, api::LanguageFilter, api::PageCursor, api::VoterId, api::ListingSort))
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
        .routes(routes!(routes::approve_comment))
        .routes(routes!(routes::reject_comment))
        .routes(routes!(routes::set_reply, routes::delete_reply))
        .routes(routes!(routes::put_vote, routes::delete_vote))
        .routes(routes!(routes::moderation_queue))
        .routes(routes!(routes::author_comments, routes::erase_author))
        .routes(routes!(routes::product_stats))
        .routes(routes!(routes::leaderboard))
        .routes(routes!(routes::global_stats))
        .routes(routes!(routes::aggregator_status))
        .routes(routes!(webhooks::create_webhook, webhooks::list_webhooks))
        .routes(routes!(webhooks::delete_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(webhooks::retry_delivery))
        .routes(routes!(routes::healthz))
        .routes(routes!(routes::metrics))
        .routes(routes!(openapi_json))
        .routes(routes!(routes::page))
        .routes(routes!(pages::get_product, pages::put_product))
        .routes(routes!(pages::product_page))
        .routes(routes!(pages::product_fragment))
        .routes(routes!(pages::embed_js))
        .split_for_parts();
    if let Some(components) = openapi.components.as_mut() {
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
    let _ = state
        .openapi
        .set(serde_json::to_string_pretty(&openapi).unwrap_or_default());
    let cors = cors::layer(&state.allowed_origins);
    let router = router
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            caching::json_routes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            answers::after_writes,
        ))
        .layer(cors)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            client_addr::resolve,
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

/// Serves until `shutdown` resolves, then lets requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Some(limiter) = state.limiter.clone() {
        // Forget clients whose buckets have refilled, often enough that a
        // flood which filled the limiter leaves it soon after it stops.
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(10));
            loop {
                tick.tick().await;
                limiter.prune();
            }
        });
    }
    let (app, _) = router(state);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

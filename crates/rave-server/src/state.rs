//! The state every handler shares, and how the binary sets it up.
//!
//! The server is not generic over the backend: it holds
//! `Comments<SharedStore>`, where `SharedStore` (rave-store) erases the
//! backend behind one trait object, so the backend is picked at run time
//! and the server is compiled once.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, OnceLock};

use rave_access::Access;
use rave_comments::Comments;
use rave_store::SharedStore;
use rave_webhooks::Webhooks;

use crate::answers;
use crate::api::AggregatorStatus;
use crate::caching::CachePolicy;
use crate::client_addr::TrustedProxies;
use crate::cors::AllowedOrigin;
use crate::error::ApiError;
use crate::extract::ConfiguredToken;
use crate::feeds::FeedSite;
use crate::limiter::{ClientLimiter, MAX_TRACKED_CLIENTS};
use crate::media::{MediaLinks, PhotoLocks};
use crate::metrics::Metrics;
use crate::purchase::PurchaseVerifier;
use crate::readiness::{Readiness, ReadinessCheck, ReadinessPolicy};
use crate::uploads::{DEFAULT_CONCURRENT_PROCESSING, UploadLimits, Uploads};

/// What the review-request routes and pages share: the orders and their
/// schedule, and the links requests carry.
#[derive(Debug, Clone)]
pub struct ReviewRequests {
    pub requests: Arc<rave_requests::Requests<SharedStore>>,
    pub links: rave_requests::Links,
}

/// How the service is configured beyond the domain.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The operator's token, holding every scope; `None`: only tokens from
    /// the access table are accepted.
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
    /// Scoped tokens and the audit trail.
    pub access: Arc<Access<SharedStore>>,
    pub admin: ConfiguredToken,
    /// `--feed-token`: the scope `feed` only, for Merchant Center.
    pub(crate) feed_token: ConfiguredToken,
    pub metrics: Arc<Metrics>,
    pub(crate) limiter: Option<Arc<ClientLimiter>>,
    pub(crate) trusted_proxies: TrustedProxies,
    pub(crate) openapi: Arc<OnceLock<String>>,
    /// The in-process aggregator's status, when one runs here.
    pub(crate) aggregator: Option<tokio::sync::watch::Receiver<AggregatorStatus>>,
    pub(crate) cache_policy: CachePolicy,
    /// Origins whose pages may call the public API; none by default.
    pub(crate) allowed_origins: Vec<AllowedOrigin>,
    /// Webhook endpoints and deliveries; `None` answers their routes 404.
    pub(crate) webhooks: Option<Arc<Webhooks<SharedStore>>>,
    /// Checks purchase proofs; `None`: a post with one is refused.
    pub(crate) purchases: Option<PurchaseVerifier>,
    /// Listing answers nothing has changed since (`answers`).
    pub(crate) answers: Arc<answers::Answers>,
    /// The CSV imports uploaded to this process (`imports`).
    pub(crate) imports: Arc<crate::imports::Imports>,
    /// Origins whose pages may frame rave's pages; none by default.
    pub(crate) frame_ancestors: Vec<AllowedOrigin>,
    /// What `/readyz` looks at beyond the store and the aggregator.
    pub(crate) readiness: Readiness,
    /// Orders and review requests; `None` answers their routes 404.
    pub(crate) review_requests: Option<ReviewRequests>,
    /// What this process's review-request scheduler did, for `/metrics`.
    pub(crate) request_counters: Option<Arc<rave_requests::Counters>>,
    /// Where the public reaches rave; `None` answers the feeds 404.
    pub(crate) feed_site: Option<FeedSite>,
    /// Where photos are kept; `None` answers `/media/…` 404.
    pub(crate) media: Option<rave_media::MediaStore>,
    /// Where the photos' renditions are reached from outside.
    pub(crate) media_links: MediaLinks,
    /// How many photos a post may carry, how large, and how many are
    /// processed at once.
    pub(crate) uploads: Uploads,
    /// One lock per photo id: an upload's "put the blob … write the
    /// comment" and a deletion's "no reference left … delete the blob"
    /// of the same photo take it (`media::locks`).
    pub(crate) photo_locks: Arc<PhotoLocks>,
}

impl AppState {
    pub fn new(
        comments: Arc<Comments<SharedStore>>,
        access: Arc<Access<SharedStore>>,
        config: &ServerConfig,
    ) -> AppState {
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
            access,
            admin: ConfiguredToken::new(config.admin_token.as_deref()),
            feed_token: ConfiguredToken::new(None),
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
            imports: Arc::default(),
            frame_ancestors: Vec::new(),
            readiness: Readiness::default(),
            review_requests: None,
            request_counters: None,
            feed_site: None,
            media: None,
            media_links: MediaLinks::default(),
            uploads: Uploads::default(),
            photo_locks: Arc::default(),
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

    /// Lets `token` read the feeds, and nothing else.
    pub fn with_feed_token(mut self, token: &str) -> AppState {
        self.setting_up().feed_token = ConfiguredToken::new(Some(token));
        self
    }

    /// Takes orders and serves the pages review requests link to.
    pub fn with_review_requests(mut self, review_requests: ReviewRequests) -> AppState {
        self.setting_up().review_requests = Some(review_requests);
        self
    }

    /// How the admin import endpoint fetches rows' image URLs into the
    /// media store (by default: public addresses only, the default limits).
    pub fn with_import_photos(mut self, options: rave_import::PhotoOptions) -> AppState {
        self.setting_up().imports = Arc::new(crate::imports::Imports::fetching(options));
        self
    }

    /// Serves photos from `store` (`GET /media/{hash}/{size}`).
    pub fn with_media(mut self, store: rave_media::MediaStore) -> AppState {
        self.setting_up().media = Some(store);
        self
    }

    /// Gives photos' URLs under `links` (a public URL, a bucket, a CDN).
    pub fn with_media_links(mut self, links: MediaLinks) -> AppState {
        self.setting_up().media_links = links;
        self
    }

    /// Takes at most `limits` of photos per post.
    pub fn with_upload_limits(mut self, limits: UploadLimits) -> AppState {
        self.setting_up().uploads = Uploads::new(limits, DEFAULT_CONCURRENT_PROCESSING);
        self
    }

    /// Reports what the review-request scheduler in this process did.
    pub fn with_request_counters(mut self, counters: Arc<rave_requests::Counters>) -> AppState {
        self.setting_up().request_counters = Some(counters);
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

    /// Lets pages from these origins frame rave's pages (their policy's
    /// `frame-ancestors`); without any, framing is refused.
    pub fn with_frame_ancestors(mut self, origins: Vec<AllowedOrigin>) -> AppState {
        self.setting_up().frame_ancestors = origins;
        self
    }

    /// Serves the feeds (`feeds`), naming rave's pages under `site`.
    pub fn with_feed_site(mut self, site: FeedSite) -> AppState {
        self.setting_up().feed_site = Some(site);
        self
    }

    /// Adds `check` to what `/readyz` requires.
    pub fn with_readiness_check(mut self, check: Arc<dyn ReadinessCheck>) -> AppState {
        self.setting_up().readiness.checks.push(check);
        self
    }

    /// How far behind the aggregator and the webhooks fan-out may fall
    /// before `/readyz` answers 503.
    pub fn with_readiness_policy(mut self, policy: ReadinessPolicy) -> AppState {
        self.setting_up().readiness.policy = policy;
        self
    }

    /// Reports in `/readyz` how the webhooks fan-out keeps up.
    pub fn with_webhooks_fan_out(
        mut self,
        progress: tokio::sync::watch::Receiver<rave_webhooks::FanOutProgress>,
    ) -> AppState {
        self.setting_up().readiness.webhooks_fan_out = Some(progress);
        self
    }

    pub(crate) fn limiter(&self) -> Option<Arc<ClientLimiter>> {
        self.limiter.clone()
    }

    /// Refuses a public write from `client` once it is over the rate limit.
    pub(crate) fn check_rate(&self, client: IpAddr) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check(client).map_err(|wait| {
            ApiError::too_many_requests(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }
}

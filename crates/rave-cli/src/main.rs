//! `rave`: the command line of the rave comments service.
//!
//! Every flag can also be set through an environment variable: `RAVE_` and
//! the flag's name in capitals, with `-` as `_` (`--admin-token` is
//! `RAVE_ADMIN_TOKEN`).
//!
//! The commands: `serve`, `load` (the data sets of
//! `rave_comments::dataset`), `import` / `export` (NDJSON, streaming:
//! `io`; the photos imports fetch, for `import` and `serve`'s import
//! endpoint: `import_photos`), `query`, `aggregate`, `deliver` (`deliver`, which also holds the
//! webhook options of `serve`), `init`, `reconcile`, `dynamodb-api`
//! (`dynamodb_api`, which also runs the DynamoDB API beside `serve
//! --dynamodb-api` on a clone of the engine `serve` opened, and reads
//! `--dynamodb-credentials` for both) and `storage` (`storage`, the report
//! of `Engine::storage_usage`). `moderation` holds `serve`'s moderation
//! rule and hook options; `aggregator` runs the statistics aggregator with
//! as many readers as the feed hands batches to at once
//! (`ChangeFeed::concurrent_readers`: one on the engine, `--stream-readers`
//! on DynamoDB Streams).
//!
//! The binary installs mimalloc as the global allocator and owns the
//! cursor secret: given, or 32 random bytes kept in `<data>/cursor.key`,
//! mode 0600, so cursors survive a restart.
//!
//! A data directory or DynamoDB table made by an older rave may lack an
//! index of today's layout, or have one with other keys or projection
//! (`TableDefinition::index_drift`). `serve` on the engine builds what is
//! missing and deletes and builds again what changed, one index at a time,
//! before it listens, waiting for each to be ACTIVE; a crash midway leaves
//! an index missing or still building, which the next start finishes.
//! `init` does the same on DynamoDB (`DynamoStore::update_indexes`).

mod access;
mod aggregator;
mod deliver;
mod dynamodb_api;
mod feed;
mod import_photos;
mod io;
mod media;
mod moderation;
mod options;
mod photos;
mod progress;
mod readiness;
mod requests;
mod shutdown;
mod storage;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use rave_comments::{
    Comments, Config, CursorKey, DEFAULT_IDEMPOTENCY_TTL, Filter, Language, ListRequest,
    Moderation, Rating, RatingSet,
};
use rave_engine::{
    Engine, EngineFeed, EngineOptions, IndexChange, IndexStatus, StartPosition,
    TimeToLiveSpecification,
};
use rave_server::{AggregatorStatus, AppState, CachePolicy, ReadinessPolicy, ServerConfig};
use rave_store::{ChangeFeed, SharedStore};
use tokio::net::TcpListener;

use crate::options::seconds;
use crate::progress::progress_bar;
use crate::shutdown::Shutdown;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "rave",
    version,
    about = "Product comments and ratings on the DynamoDB single-table design"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log lines as human-readable text or as JSON.
    #[arg(long, env = "RAVE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(Box<ServeArgs>),
    /// Generate a deterministic data set (BENCH.md) into the store.
    Load(LoadArgs),
    /// Import comments from NDJSON (one comment per line, as `export` writes
    /// them) or from a review platform's CSV export (--from, --map).
    Import(ImportArgs),
    /// Export every comment as NDJSON.
    Export(ExportArgs),
    /// List a product's comments, as the API would.
    Query(QueryArgs),
    /// Run the statistics aggregator alone (for a `serve --no-aggregator`).
    Aggregate(AggregateArgs),
    /// Deliver webhooks alone (for a `serve --no-webhook-delivery`).
    Deliver(DeliverArgs),
    /// Create the DynamoDB table, its indexes and its stream (idempotent).
    Init(InitArgs),
    /// Recompute every statistic from the comments and check the photos
    /// against the media store (<data>/media), print the drift, repair it
    /// with --fix. With --store dynamodb: the photos in --media-bucket
    /// only (the statistics' recount runs on the embedded store alone).
    Reconcile(ReconcileArgs),
    /// Serve DynamoDB's API over the embedded store, for the AWS CLI and SDKs.
    DynamodbApi(dynamodb_api::DynamodbApiArgs),
    /// Show what each table's items, indexes and stream take on disk.
    Storage(storage::StorageArgs),
    /// Create, list and revoke scoped access tokens.
    Tokens(access::TokensArgs),
    /// Import delivered orders from CSV, for review requests.
    Orders(OrdersArgs),
}

/// Where the DynamoDB table is.
#[derive(Debug, Args)]
struct DynamoArgs {
    /// An endpoint other than AWS's, such as DynamoDB Local.
    #[arg(long, env = "RAVE_ENDPOINT")]
    endpoint: Option<String>,
    /// The AWS region (default: from the environment or profile).
    #[arg(long, env = "RAVE_REGION")]
    region: Option<String>,
    /// How many shards of the table's stream the aggregator reads and
    /// applies at the same time (a busy table's stream has many).
    #[arg(long, env = "RAVE_STREAM_READERS", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    stream_readers: u16,
}

#[derive(Debug, Args)]
struct InitArgs {
    /// Table name.
    #[arg(long, env = "RAVE_TABLE", default_value = "rave")]
    table: String,
    #[command(flatten)]
    dynamo: DynamoArgs,
    /// How a new table is billed.
    #[arg(long, env = "RAVE_BILLING", value_enum, default_value_t = BillingArg::OnDemand)]
    billing: BillingArg,
    /// With --billing provisioned: read units, for the table and each index.
    #[arg(long, env = "RAVE_READ_CAPACITY", default_value_t = 5)]
    read_capacity: i64,
    /// With --billing provisioned: write units, for the table and each index.
    #[arg(long, env = "RAVE_WRITE_CAPACITY", default_value_t = 5)]
    write_capacity: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BillingArg {
    OnDemand,
    Provisioned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StoreKind {
    /// rave's embedded engine, data in --data.
    Embedded,
    /// Amazon DynamoDB, or an endpoint that speaks its API.
    Dynamodb,
}

#[derive(Debug, Args)]
struct DeliverArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    webhooks: deliver::WebhookArgs,
    /// `--public-url`: payloads name photos under it.
    #[command(flatten)]
    feed: feed::FeedArgs,
    /// Where comments are stored.
    #[arg(long = "store", env = "RAVE_STORE", value_enum, default_value_t = StoreKind::Embedded)]
    store_kind: StoreKind,
    #[command(flatten)]
    dynamo: DynamoArgs,
}

#[derive(Debug, Args)]
struct AggregateArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Where comments are stored.
    #[arg(long = "store", env = "RAVE_STORE", value_enum, default_value_t = StoreKind::Embedded)]
    store_kind: StoreKind,
    #[command(flatten)]
    dynamo: DynamoArgs,
    /// Stop once every change so far is applied, instead of running until stopped.
    #[arg(long, env = "RAVE_UNTIL_CAUGHT_UP")]
    until_caught_up: bool,
}

#[derive(Debug, Args)]
struct ReconcileArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Write the recounted values over the drifted ones.
    #[arg(long, env = "RAVE_FIX")]
    fix: bool,
    /// Segments of the parallel scan.
    #[arg(long, env = "RAVE_SEGMENTS", default_value_t = 4)]
    segments: u32,
    /// A stored photo no comment names is an orphan only once it is this
    /// old: younger, an upload may still be writing the comment naming it.
    #[arg(long, env = "RAVE_ORPHAN_GRACE_MINUTES", default_value_t = 10)]
    orphan_grace_minutes: u64,
    /// Where comments are stored. With dynamodb only the photos are
    /// checked, against --media-bucket: the statistics' recount needs the
    /// aggregator caught up first, which DynamoDB Streams cannot tell.
    #[arg(long = "store", env = "RAVE_STORE", value_enum, default_value_t = StoreKind::Embedded)]
    store_kind: StoreKind,
    #[command(flatten)]
    dynamo: DynamoArgs,
    /// With --store dynamodb: the bucket whose photos are checked.
    #[command(flatten)]
    bucket: media::BucketArgs,
}

impl ReconcileArgs {
    /// How old an unnamed photo must be to be taken for an orphan.
    fn orphan_grace(&self) -> Duration {
        Duration::from_secs(self.orphan_grace_minutes.saturating_mul(60))
    }
}

/// Where the data lives.
#[derive(Debug, Args)]
struct StoreArgs {
    /// Directory of the embedded store.
    #[arg(long, env = "RAVE_DATA", default_value = "./rave-data")]
    data: PathBuf,
    /// Table name.
    #[arg(long, env = "RAVE_TABLE", default_value = "rave")]
    table: String,
    /// Secret that signs pagination cursors, 64 hex digits; by default a
    /// random one is kept in the data directory. Servers sharing a store
    /// must share it.
    #[arg(long, env = "RAVE_CURSOR_SECRET", hide_env_values = true)]
    cursor_secret: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModerationArg {
    Off,
    Pre,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "RAVE_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    #[command(flatten)]
    store: StoreArgs,
    /// The operator's token, holding every scope (more tokens, each with
    /// its scopes: `rave tokens` or /v1/admin/tokens).
    #[arg(long, env = "RAVE_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// A token that reads the feeds and nothing else (scope feed), for
    /// Merchant Center's fetch (as the password of HTTP Basic
    /// authentication).
    #[arg(long, env = "RAVE_FEED_TOKEN", hide_env_values = true)]
    feed_token: Option<String>,
    #[command(flatten)]
    audit: access::AuditArgs,
    #[command(flatten)]
    requests: requests::RequestArgs,
    /// The secret the shop signs purchase proofs with (HS256); without it a
    /// post that carries a proof is refused.
    #[arg(long, env = "RAVE_PURCHASE_SECRET", hide_env_values = true)]
    purchase_secret: Option<String>,
    /// `pre`: new comments wait for approval before they show.
    #[arg(long, env = "RAVE_MODERATION", value_enum, default_value_t = ModerationArg::Off)]
    moderation: ModerationArg,
    #[command(flatten)]
    rules: moderation::ModerationArgs,
    /// Public POSTs allowed per client address and minute (0: no limit).
    #[arg(long, env = "RAVE_RATE_LIMIT_PER_MINUTE", default_value_t = 600)]
    rate_limit_per_minute: u32,
    /// A load balancer, CDN or proxy in front of rave whose forwarding
    /// headers are believed: an address or a CIDR block (repeat, or
    /// separate with commas).
    ///
    /// A request from one of these peers is attributed, for the rate limit
    /// and the log line, to the rightmost address in X-Forwarded-For (or,
    /// without that header, in RFC 7239 Forwarded) that is not itself a
    /// trusted proxy. From any other peer both headers are ignored, so list
    /// only proxies that append to them.
    #[arg(
        long = "trusted-proxy",
        env = "RAVE_TRUSTED_PROXY",
        value_name = "CIDR",
        value_delimiter = ','
    )]
    trusted_proxies: Vec<rave_server::TrustedProxy>,
    /// How long a create's Idempotency-Key is remembered, in hours; after
    /// that the store's Time to Live deletes its record.
    #[arg(long, env = "RAVE_IDEMPOTENCY_TTL_HOURS", default_value_t = 24)]
    idempotency_ttl_hours: u64,
    /// An origin whose pages may call the public API from the browser (the
    /// embed on a shop's pages), as `scheme://host[:port]` (repeat, or
    /// separate with commas). None by default.
    #[arg(
        long = "allowed-origin",
        env = "RAVE_ALLOWED_ORIGIN",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    allowed_origins: Vec<rave_server::AllowedOrigin>,
    /// An origin whose pages may frame rave's pages (the fragment in a
    /// shop's iframe), as `scheme://host[:port]` (repeat, or separate with
    /// commas). None by default: framing is refused.
    #[arg(
        long = "frame-ancestor",
        env = "RAVE_FRAME_ANCESTOR",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    frame_ancestors: Vec<rave_server::AllowedOrigin>,
    #[command(flatten)]
    feed: feed::FeedArgs,
    /// How long caches and CDNs may keep first pages, statistics and the
    /// leaderboard, in seconds.
    #[arg(long, env = "RAVE_CACHE_FIRST_PAGES", default_value_t = 10)]
    cache_first_pages: u64,
    /// How long caches and CDNs may keep keyset pages of older comments,
    /// in seconds.
    #[arg(long, env = "RAVE_CACHE_OLDER_PAGES", default_value_t = 300)]
    cache_older_pages: u64,
    /// Fill an empty store with a small generated data set.
    #[arg(long, env = "RAVE_DEMO")]
    demo: bool,
    /// Do not run the statistics aggregator in this process.
    #[arg(long, env = "RAVE_NO_AGGREGATOR")]
    no_aggregator: bool,
    /// Do not deliver webhooks in this process (the admin API still
    /// registers endpoints; `rave deliver` sends).
    #[arg(long, env = "RAVE_NO_WEBHOOK_DELIVERY")]
    no_webhook_delivery: bool,
    #[command(flatten)]
    webhooks: deliver::WebhookArgs,
    /// Where comments are stored.
    #[arg(long = "store", env = "RAVE_STORE", value_enum, default_value_t = StoreKind::Embedded)]
    store_kind: StoreKind,
    #[command(flatten)]
    dynamo: DynamoArgs,
    #[command(flatten)]
    media: media::MediaArgs,
    /// How the admin import endpoint fetches rows' image URLs.
    #[command(flatten)]
    import_fetch: import_photos::FetchArgs,
    /// With --store dynamodb: do not create the table if it is missing
    /// (for credentials that may not create tables).
    #[arg(long, env = "RAVE_NO_INIT")]
    no_init: bool,
    /// Also serve DynamoDB's API on this address, over the same embedded
    /// store, so the AWS CLI and SDKs can inspect the live data.
    #[arg(long, env = "RAVE_DYNAMODB_API", value_name = "ADDR")]
    dynamodb_api: Option<SocketAddr>,
    /// With --dynamodb-api: verify every request's Signature V4 against the
    /// access keys in this file (one `ACCESS_KEY_ID:SECRET` per line).
    #[arg(long, env = "RAVE_DYNAMODB_CREDENTIALS", value_name = "FILE")]
    dynamodb_credentials: Option<PathBuf>,
    /// With --dynamodb-api: serve it on an address other machines can reach
    /// without --dynamodb-credentials (anyone who reaches it may read and
    /// write the whole store). Refused without this flag; warned about at
    /// every start.
    #[arg(long, env = "RAVE_DYNAMODB_API_INSECURE")]
    dynamodb_api_insecure: bool,
    /// The longest a stop (SIGTERM, Ctrl-C) may take, in seconds: requests
    /// in flight get most of it, then the process exits whatever still runs.
    #[arg(long, env = "RAVE_SHUTDOWN_TIMEOUT", default_value_t = 10.0)]
    shutdown_timeout: f64,
    /// `/readyz` answers 503 while the aggregator's or the webhooks
    /// fan-out's oldest pending change is older than this, in seconds, or
    /// while either has not finished a step for as long.
    #[arg(long, env = "RAVE_READY_MAX_LAG", default_value_t = 60.0)]
    ready_max_lag: f64,
}

impl ServeArgs {
    fn shutdown(&self) -> anyhow::Result<Arc<Shutdown>> {
        let timeout = seconds(self.shutdown_timeout, "--shutdown-timeout")?;
        Ok(Arc::new(Shutdown::new(timeout)))
    }

    fn readiness_policy(&self) -> anyhow::Result<ReadinessPolicy> {
        let max_lag = seconds(self.ready_max_lag, "--ready-max-lag")?;
        Ok(ReadinessPolicy {
            max_lag,
            max_silence: max_lag,
        })
    }

    fn idempotency_ttl(&self) -> Duration {
        Duration::from_secs(self.idempotency_ttl_hours.saturating_mul(3600))
    }
}

#[derive(Debug, Args)]
struct LoadArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Number of products (popularity is Zipf-distributed).
    #[arg(long, env = "RAVE_PRODUCTS", default_value_t = 1_000)]
    products: u64,
    /// Number of comments.
    #[arg(long, env = "RAVE_COMMENTS", default_value_t = 10_000)]
    comments: u64,
    /// Seed: the same seed gives the same data.
    #[arg(long, env = "RAVE_SEED", default_value_t = 42)]
    seed: u64,
    /// Share of comments (0 to 1) carrying one to three photos, drawn from
    /// a few synthetic photos stored in <data>/media first.
    #[arg(long, env = "RAVE_PHOTOS", default_value_t = 0.0, value_parser = share)]
    photos: f64,
}

/// A share between 0 and 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(share) if (0.0..=1.0).contains(&share) => Ok(share),
        _ => Err(format!("{text:?} is not a share between 0 and 1")),
    }
}

#[derive(Debug, Args)]
struct ImportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The file to read (`-` for standard input): rave's NDJSON, or with
    /// --from or --map a CSV export.
    file: PathBuf,
    /// Report bad lines and go on, instead of stopping at the first one.
    #[arg(long, env = "RAVE_SKIP_BAD_LINES")]
    skip_bad_lines: bool,
    /// The platform whose CSV export the file is: okendo, judgeme, yotpo
    /// or shopify (Shopify's Product Reviews app). See docs/moving-to-rave.md.
    #[arg(long, env = "RAVE_IMPORT_FROM")]
    from: Option<String>,
    /// A CSV column and the field it holds, COLUMN=FIELD (repeat): any CSV,
    /// or columns --from's mapping lacks. Fields: author, email, rating,
    /// title, body, date, language, product_id, handle, sku, reply,
    /// reply_date, published, hidden, state, verified, image_urls,
    /// review_id.
    #[arg(long = "map", value_name = "COLUMN=FIELD")]
    map: Vec<String>,
    /// The language of rows that name none and whose text gives none
    /// reliably (a CSV import detects it from the text).
    #[arg(long, env = "RAVE_IMPORT_LANGUAGE")]
    language: Option<String>,
    /// A CSV of `identifier,product_id` lines: the rave product of a
    /// product id, handle or SKU of the export. Not needed for a product id
    /// or handle that is a rave product id, nor for a SKU a product
    /// record lists.
    #[arg(long, env = "RAVE_IMPORT_PRODUCT_MAP")]
    product_map: Option<PathBuf>,
    /// Keep image URLs on the comments as references instead of fetching
    /// them into the media store (as imports did before photos).
    #[arg(long, env = "RAVE_NO_FETCH_IMAGES")]
    no_fetch_images: bool,
    #[command(flatten)]
    fetch: import_photos::FetchArgs,
    #[command(flatten)]
    media: media::MediaArgs,
}

#[derive(Debug, Args)]
struct OrdersArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    requests: requests::RequestArgs,
    /// CSV with a header row: order_id, email, name, locale, delivered_at
    /// (RFC 3339), products (ids separated by ';').
    file: PathBuf,
    /// Report bad rows and go on, instead of stopping at the first one.
    #[arg(long)]
    skip_bad_lines: bool,
}

#[derive(Debug, Args)]
struct ExportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// File to write (standard output by default).
    #[arg(long, short, env = "RAVE_OUTPUT")]
    output: Option<PathBuf>,
    /// Only the comments whose author is exactly this value (any status,
    /// newest first, from the author index): a person's data on request.
    /// NDJSON only.
    #[arg(long, env = "RAVE_EXPORT_AUTHOR")]
    author: Option<String>,
    /// `ndjson`: every comment, one per line, as `import` reads them.
    /// `google-product-reviews`: Google's Product Reviews Feed (schema 2.4)
    /// for Merchant Center, as GET /v1/feeds/google-product-reviews.xml
    /// answers it (needs --public-url).
    #[arg(long, env = "RAVE_EXPORT_FORMAT", value_enum, default_value_t = ExportFormat::Ndjson)]
    format: ExportFormat,
    #[command(flatten)]
    feed: feed::FeedArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    Ndjson,
    GoogleProductReviews,
}

#[derive(Debug, Args)]
struct QueryArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Product id.
    product: String,
    /// One language code.
    #[arg(long)]
    language: Option<String>,
    /// Ratings to include (repeat or separate with commas).
    #[arg(long, value_delimiter = ',')]
    rating: Vec<i64>,
    /// Only verified purchases.
    #[arg(long)]
    verified: bool,
    /// Page size, 1-100.
    #[arg(long, default_value_t = rave_comments::DEFAULT_PAGE_SIZE)]
    limit: usize,
    /// The `next_cursor` of a previous page.
    #[arg(long)]
    cursor: Option<String>,
    /// Show the plan used and what it cost.
    #[arg(long)]
    explain: bool,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging(cli.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(*args).await,
            Command::Load(args) => load(args).await,
            Command::Import(args) => {
                let photos = args.fetch.photos(
                    args.media.store.embedded(&args.store.data)?,
                    !args.no_fetch_images,
                )?;
                let comments = open(&args.store, Moderation::Off)?;
                io::import(
                    &comments,
                    &io::ImportFrom {
                        file: &args.file,
                        platform: args.from.as_deref(),
                        map: &args.map,
                        language: args.language.as_deref(),
                        product_map: args.product_map.as_deref(),
                        skip_bad_lines: args.skip_bad_lines,
                        photos: &photos,
                    },
                )
                .await
            }
            Command::Export(args) => {
                let comments = open(&args.store, Moderation::Off)?;
                match (&args.author, args.format) {
                    (Some(_), ExportFormat::GoogleProductReviews) => {
                        bail!("--author exports NDJSON only: drop --format google-product-reviews")
                    }
                    (None, ExportFormat::GoogleProductReviews) => {
                        feed::export_google_product_reviews(
                            &comments,
                            &args.feed,
                            args.output.as_deref(),
                        )
                        .await
                    }
                    (Some(author), ExportFormat::Ndjson) => {
                        io::export_author(&comments, author, args.output.as_deref()).await
                    }
                    (None, ExportFormat::Ndjson) => {
                        io::export(&comments, args.output.as_deref()).await
                    }
                }
            }
            Command::Query(args) => query(args).await,
            Command::Aggregate(args) => aggregate(args).await,
            Command::Deliver(args) => deliver(args).await,
            Command::Init(args) => init(args).await,
            Command::Reconcile(args) => reconcile(args).await,
            Command::DynamodbApi(args) => dynamodb_api::run(args).await,
            Command::Storage(args) => storage::run(args),
            Command::Tokens(args) => access::run(args).await,
            Command::Orders(args) => import_orders(args).await,
        }
    })
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RAVE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// The key that signs cursors, from the server's secret.
fn cursor_key(store: &StoreArgs) -> anyhow::Result<CursorKey> {
    server_secret(store).map(CursorKey::new)
}

/// The server's secret (`--cursor-secret`): given, or kept in the data
/// directory (made on first use). It signs cursors, and review-request
/// links through a key derived from it.
fn server_secret(store: &StoreArgs) -> anyhow::Result<[u8; 32]> {
    let decode = |hex: &str| -> anyhow::Result<[u8; 32]> {
        let mut key = [0u8; 32];
        match hex::decode_to_slice(hex.trim(), &mut key) {
            Ok(()) => Ok(key),
            Err(_) => bail!("the cursor secret must be 64 hexadecimal digits"),
        }
    };
    if let Some(secret) = &store.cursor_secret {
        return decode(secret);
    }
    let path = store.data.join("cursor.key");
    match std::fs::read_to_string(&path) {
        Ok(text) => decode(&text).with_context(|| format!("{} is damaged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key)
                .map_err(|e| anyhow::anyhow!("no randomness for the cursor secret: {e}"))?;
            std::fs::create_dir_all(&store.data)?;
            write_private(&path, &hex::encode(key))
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(key)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// The domain on the embedded store.
fn open(store: &StoreArgs, moderation: Moderation) -> anyhow::Result<Arc<Comments<SharedStore>>> {
    Ok(Arc::new(
        open_engine(store, moderation, DEFAULT_IDEMPOTENCY_TTL)?.1,
    ))
}

/// The embedded engine and the domain on it. The planner may skip ratings
/// with no comments whenever the aggregator has applied every change.
fn open_engine(
    store: &StoreArgs,
    moderation: Moderation,
    idempotency_ttl: Duration,
) -> anyhow::Result<(Engine, Comments<SharedStore>)> {
    open_engine_with(store, moderation, idempotency_ttl, EngineOptions::default())
}

/// [`open_engine`] with the engine's options set.
fn open_engine_with(
    store: &StoreArgs,
    moderation: Moderation,
    idempotency_ttl: Duration,
    options: EngineOptions,
) -> anyhow::Result<(Engine, Comments<SharedStore>)> {
    let engine = Engine::open_with(&store.data, options).with_context(|| {
        format!(
            "cannot open the store in {} (is another rave using it?)",
            store.data.display()
        )
    })?;
    let fresh = {
        let (engine, table) = (engine.clone(), store.table.clone());
        move || {
            engine
                .consumer_position(&table, aggregator::CONSUMER)
                .ok()
                .flatten()
                == Some(engine.latest_sequence())
        }
    };
    let comments = domain(
        SharedStore::new(engine.clone()),
        store,
        moderation,
        idempotency_ttl,
    )?
    .with_stats_freshness(fresh);
    Ok((engine, comments))
}

/// Turns on the table's Time to Live in a store created before rave let
/// idempotency records expire.
async fn ensure_engine_time_to_live(engine: &Engine, table: &str) -> anyhow::Result<()> {
    let wanted = rave_comments::table_definition(table).time_to_live_attribute;
    let current = engine.describe_time_to_live(table)?.attribute_name;
    if let (None, Some(attribute_name)) = (current, wanted) {
        tracing::info!(%attribute_name, "enabling Time to Live");
        engine
            .update_time_to_live(
                table,
                TimeToLiveSpecification {
                    attribute_name,
                    enabled: true,
                },
            )
            .await?;
    }
    Ok(())
}

/// Brings the indexes of a store created by an older rave up to the
/// current layout: a missing index is added, one whose keys or projected
/// attributes changed is deleted and built again from the table's items.
/// Returns once every index is ACTIVE, so listings served afterwards read
/// complete indexes.
async fn ensure_engine_indexes(engine: &Engine, table: &str) -> anyhow::Result<()> {
    let wanted = rave_comments::table_definition(table);
    let current: Vec<_> = engine
        .describe_indexes(table)?
        .into_iter()
        .map(|description| description.index)
        .collect();
    // One index builds at a time: finish one left building by a crash first.
    wait_for_engine_indexes(engine, table).await?;
    for drift in wanted.index_drift(&current) {
        let index = match drift {
            rave_store::IndexDrift::Missing(index) => index,
            rave_store::IndexDrift::Changed(index) => {
                tracing::info!(index = %index.name, "index layout changed: rebuilding it");
                engine
                    .update_table(table, IndexChange::Delete(index.name.clone()))
                    .await?;
                index
            }
        };
        tracing::info!(index = %index.name, "building index from the table's items");
        engine
            .update_table(table, IndexChange::Create(index))
            .await?;
        wait_for_engine_indexes(engine, table).await?;
    }
    Ok(())
}

/// Waits until no index of `table` is still being built.
async fn wait_for_engine_indexes(engine: &Engine, table: &str) -> anyhow::Result<()> {
    while engine
        .describe_indexes(table)?
        .iter()
        .any(|description| description.status == IndexStatus::Creating)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The domain on `store`, with the table and the cursor secret `args` name.
fn domain(
    store: SharedStore,
    args: &StoreArgs,
    moderation: Moderation,
    idempotency_ttl: Duration,
) -> anyhow::Result<Comments<SharedStore>> {
    Ok(Comments::new(
        store,
        Config {
            table: args.table.clone(),
            cursor_key: cursor_key(args)?,
            moderation,
        },
    )
    .with_idempotency_ttl(idempotency_ttl))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let moderation = match args.moderation {
        ModerationArg::Off => Moderation::Off,
        ModerationArg::Pre => Moderation::Pre,
    };
    if args.dynamodb_credentials.is_some() && args.dynamodb_api.is_none() {
        bail!("--dynamodb-credentials verifies the API --dynamodb-api serves: give both");
    }
    if let Some(addr) = args.dynamodb_api {
        dynamodb_api::check_exposure(
            addr,
            args.dynamodb_credentials.as_deref(),
            args.dynamodb_api_insecure,
            "--dynamodb-api",
        )?;
    }
    if args.store_kind == StoreKind::Dynamodb {
        if args.dynamodb_api.is_some() {
            bail!(
                "--dynamodb-api serves the embedded store; with --store dynamodb, use DynamoDB's own endpoint"
            );
        }
        return serve_dynamodb(args, moderation).await;
    }
    let media = args.media.store.embedded(&args.store.data)?;
    let (engine, comments) = open_engine(&args.store, moderation, args.idempotency_ttl())?;
    let comments = Arc::new(args.rules.apply(comments, &args.media_links()?)?);
    comments
        .ensure_table()
        .await
        .context("cannot create the table")?;
    ensure_engine_time_to_live(&engine, &args.store.table).await?;
    ensure_engine_indexes(&engine, &args.store.table).await?;
    if args.demo {
        load_demo(&comments).await?;
    }
    let dynamodb_api = match args.dynamodb_api {
        Some(addr) => Some(
            dynamodb_api::Beside::start(engine.clone(), addr, args.dynamodb_credentials.as_deref())
                .await?,
        ),
        None => None,
    };
    let feed = match args.no_aggregator {
        true => None,
        false => {
            Some(EngineFeed::open(engine.clone(), &args.store.table, aggregator::CONSUMER).await?)
        }
    };
    let SideTables {
        webhooks,
        access,
        review_requests,
    } = args.side_tables(SharedStore::new(engine.clone())).await?;
    let webhook_feed = match args.no_webhook_delivery {
        true => None,
        false => Some(webhook_feed(engine.clone(), &args.store.table, &webhooks).await?),
    };
    let shutdown = args.shutdown()?;
    let engine_check: Arc<dyn rave_server::ReadinessCheck> =
        Arc::new(readiness::EngineAcceptsWrites(engine));
    let served = run_service(
        &args,
        &shutdown,
        Service {
            comments,
            access,
            feed,
            webhooks,
            webhook_feed,
            store_check: Some(engine_check),
            review_requests,
            media: Some(media),
        },
    )
    .await;
    // The comments API stops on the signal; the DynamoDB API stops with it.
    if let Some(api) = dynamodb_api {
        api.stop().await?;
    }
    served
}

/// The tables beside the comments table that `serve` uses, each opened
/// (and created if missing) by the crate that owns it.
struct SideTables {
    webhooks: Arc<rave_webhooks::Webhooks<SharedStore>>,
    access: Arc<rave_access::Access<SharedStore>>,
    review_requests: Option<rave_server::ReviewRequests>,
}

impl ServeArgs {
    /// Where photo URLs point (`media`).
    fn media_links(&self) -> anyhow::Result<rave_server::MediaLinks> {
        self.media.links(self.feed.site()?.as_ref())
    }

    async fn side_tables(&self, store: SharedStore) -> anyhow::Result<SideTables> {
        let table = &self.store.table;
        Ok(SideTables {
            webhooks: self
                .webhooks
                .webhooks(store.clone(), table, self.feed.media_links()?)
                .await?,
            access: self.audit.open(store.clone(), table).await?,
            review_requests: self
                .requests
                .open(
                    store,
                    table,
                    self.feed.site()?.as_ref(),
                    &server_secret(&self.store)?,
                )
                .await?,
        })
    }
}

/// What `serve` runs, over either backend.
struct Service<F, W> {
    comments: Arc<Comments<SharedStore>>,
    access: Arc<rave_access::Access<SharedStore>>,
    /// The statistics aggregator's feed, when it runs in this process.
    feed: Option<F>,
    webhooks: Arc<rave_webhooks::Webhooks<SharedStore>>,
    /// The webhooks' feed, when deliveries run in this process.
    webhook_feed: Option<W>,
    store_check: Option<Arc<dyn rave_server::ReadinessCheck>>,
    /// Orders and their requests, when the server has a public URL.
    review_requests: Option<rave_server::ReviewRequests>,
    /// Where photos are kept, when anywhere.
    media: Option<rave_media::MediaStore>,
}

/// Serves the comments until SIGTERM or Ctrl-C, with the statistics
/// aggregator and the webhooks running in the same process when their feeds
/// are there; stops within `shutdown`'s bound.
async fn run_service<F: ChangeFeed, W: ChangeFeed>(
    args: &ServeArgs,
    shutdown: &Arc<Shutdown>,
    service: Service<F, W>,
) -> anyhow::Result<()> {
    let Service {
        comments,
        access,
        feed,
        webhooks,
        webhook_feed,
        store_check,
        review_requests,
        media,
    } = service;
    let config = ServerConfig {
        admin_token: args.admin_token.clone(),
        rate_limit_per_minute: args.rate_limit_per_minute,
    };
    if config.admin_token.is_none() {
        tracing::info!(
            "no admin token: staff endpoints take only tokens made with rave tokens (or set --admin-token)"
        );
    }
    let (stop_background, stopped) = tokio::sync::watch::channel(false);
    let mut state = AppState::new(comments.clone(), access, &config)
        .with_trusted_proxies(args.trusted_proxies.iter().copied().collect())
        .with_allowed_origins(args.allowed_origins.clone())
        .with_frame_ancestors(args.frame_ancestors.clone())
        .with_cache_policy(CachePolicy {
            first_pages: Duration::from_secs(args.cache_first_pages),
            older_pages: Duration::from_secs(args.cache_older_pages),
        })
        .with_readiness_policy(args.readiness_policy()?)
        .with_import_photos(args.import_fetch.options(true)?)
        .with_webhooks(webhooks.clone());
    if let Some(site) = args.feed.site()? {
        state = state.with_feed_site(site);
    }
    if let Some(token) = &args.feed_token {
        state = state.with_feed_token(token);
    }
    if let Some(check) = store_check {
        state = state.with_readiness_check(check);
    }
    if let Some(media) = media {
        state = state.with_media(media);
    }
    state = state
        .with_media_links(args.media_links()?)
        .with_upload_limits(args.media.upload_limits()?);
    if let Some(secret) = &args.purchase_secret {
        state = state.with_purchase_secret(secret.as_bytes());
    }
    let requests_task = match (&review_requests, args.feed.site()?) {
        (Some(review_requests), Some(site)) => {
            state = state.with_review_requests(review_requests.clone());
            let spawned = args.requests.spawn(
                review_requests,
                &site,
                comments.clone(),
                webhooks.clone(),
                stopped.clone(),
            )?;
            spawned.map(|(task, counters)| {
                state = state.clone().with_request_counters(counters);
                task
            })
        }
        _ => None,
    };
    let delivery_task = webhook_feed.map(|feed| {
        let (progress, receiver) = tokio::sync::watch::channel(Default::default());
        state = state.clone().with_webhooks_fan_out(receiver);
        args.webhooks
            .spawn(webhooks, feed, stopped.clone(), progress)
    });
    let aggregator_task = feed.map(|feed| {
        let (status, receiver) = tokio::sync::watch::channel(AggregatorStatus::default());
        state = state.clone().with_aggregator(receiver);
        tokio::spawn(aggregator::run(comments, feed, status, stopped))
    });
    let listener = TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, table = %args.store.table, "rave is listening");
    // A plain line on stdout too, for scripts that start rave on port 0.
    println!("rave listening on http://{addr}");
    let signalled = {
        let shutdown = Arc::clone(shutdown);
        async move { shutdown.signalled().await }
    };
    rave_server::serve(listener, state, signalled, shutdown.drain()).await?;
    let _ = stop_background.send(true);
    if let Some(task) = aggregator_task {
        shutdown::join_within(shutdown, "aggregator", task).await;
    }
    if let Some(task) = delivery_task {
        shutdown::join_within(shutdown, "webhook delivery", task).await;
    }
    if let Some(task) = requests_task {
        shutdown::join_within(shutdown, "review requests", task).await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// `rave orders`: past orders into the requests table (the server stopped).
async fn import_orders(args: OrdersArgs) -> anyhow::Result<()> {
    let (engine, comments) = open_engine(&args.store, Moderation::Off, DEFAULT_IDEMPOTENCY_TTL)?;
    comments.ensure_table().await?;
    let requests = args
        .requests
        .requests(SharedStore::new(engine), &args.store.table)
        .await?;
    let done =
        requests::import_orders(&comments, &requests, &args.file, args.skip_bad_lines).await?;
    eprintln!(
        "orders: {} new, {} changed, {} unchanged, {} skipped",
        done.created, done.changed, done.unchanged, done.skipped
    );
    Ok(())
}

/// With `--demo`: a small data set, only into an empty store.
async fn load_demo(comments: &Comments<SharedStore>) -> anyhow::Result<()> {
    let (existing, _) = comments.export_page(0, 1, None).await?;
    if !existing.is_empty() {
        tracing::info!("--demo: the store already has comments; leaving it as it is");
        return Ok(());
    }
    let mut generator = rave_comments::dataset::Generator::new(25, 3_000, 1);
    let batch: Vec<_> = (0..3_000).map(|_| generator.next_comment()).collect();
    comments.import(batch).await?;
    tracing::info!(
        comments = 3_000,
        products = 25,
        "--demo: loaded a generated data set (try product p1)"
    );
    Ok(())
}

/// Batches a load keeps in flight. Each is four BatchWriteItems in flight,
/// so the writer finds up to 2,048 requests queued and commits them as one
/// group ([`LOAD_COMMIT_GROUP`]). Bigger commits write fewer pages: redb
/// copies every leaf a commit touches once, and a comment's eleven entries
/// land in eleven partitions, so a commit of a few hundred comments wrote
/// a leaf per entry (BENCHMARKS.md, "B5: what a bulk load writes").
const LOAD_BATCHES_IN_FLIGHT: usize = 512;
/// The most requests a load's writer commits together (the engine's default
/// suits a server's single writes).
const LOAD_COMMIT_GROUP: usize = 2_048;

async fn load(args: LoadArgs) -> anyhow::Result<()> {
    // The load acknowledges nothing until it ends, and the index build's
    // commits are durable: its groups need no fsync of their own.
    let options = EngineOptions {
        max_commit_group: LOAD_COMMIT_GROUP,
        durable_groups: false,
        ..EngineOptions::default()
    };
    let (engine, comments) = open_engine_with(
        &args.store,
        Moderation::Off,
        DEFAULT_IDEMPOTENCY_TTL,
        options,
    )?;
    let comments = Arc::new(comments);
    comments.ensure_table().await?;
    // The load writes items only; the indexes are built from them after it
    // (`Engine::defer_indexes`).
    engine.defer_indexes(&args.store.table).await?;
    let bar = progress_bar(Some(args.comments), "loading");
    let started = std::time::Instant::now();
    let (sender, receiver) = async_channel(LOAD_BATCHES_IN_FLIGHT);
    let workers: Vec<_> = (0..LOAD_BATCHES_IN_FLIGHT)
        .map(|_| {
            let comments = comments.clone();
            let receiver = receiver.clone();
            let bar = bar.clone();
            tokio::spawn(async move {
                loop {
                    // Take the next batch and let go of the queue before working on it.
                    let next = receiver.lock().await.recv().await;
                    let Some(batch) = next else { break };
                    let n = batch.len() as u64;
                    comments.import(batch).await?;
                    bar.inc(n);
                }
                anyhow::Ok(())
            })
        })
        .collect();
    let mut generator =
        rave_comments::dataset::Generator::new(args.products, args.comments, args.seed);
    if args.photos > 0.0 {
        let photos = media::store_sample_photos(&args.store.data, args.seed).await?;
        generator = generator.with_photos(photos, args.photos);
    }
    let mut remaining = args.comments;
    while remaining > 0 {
        let n = remaining.min(100);
        let batch: Vec<_> = (0..n).map(|_| generator.next_comment()).collect();
        if sender.send(batch).await.is_err() {
            break;
        }
        remaining -= n;
    }
    drop(sender);
    for worker in workers {
        worker.await??;
    }
    bar.finish();
    let building = progress::spinner("building the indexes");
    engine.build_deferred_indexes(&args.store.table).await?;
    building.finish();
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "loaded {} comments on {} products in {:.1} s ({:.0} comments/s)",
        args.comments,
        args.products,
        seconds,
        args.comments as f64 / seconds
    );
    Ok(())
}

type Batch = Vec<rave_comments::ImportComment>;

/// A bounded queue with many consumers.
fn async_channel(
    capacity: usize,
) -> (
    tokio::sync::mpsc::Sender<Batch>,
    Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<Batch>>>,
) {
    let (sender, receiver) = tokio::sync::mpsc::channel(capacity);
    (sender, Arc::new(tokio::sync::Mutex::new(receiver)))
}

async fn query(args: QueryArgs) -> anyhow::Result<()> {
    let comments = open(&args.store, Moderation::Off)?;
    let ratings = args
        .rating
        .iter()
        .map(|r| Rating::new(*r))
        .collect::<Result<Vec<_>, _>>()?;
    let request = ListRequest {
        sort: Default::default(),
        product: &args.product,
        filter: Filter {
            language: args.language.as_deref().map(Language::parse).transpose()?,
            ratings: RatingSet::from_ratings(ratings),
            verified: args.verified,
            incentivized: None,
            has_media: false,
        },
        limit: args.limit,
        cursor: args.cursor.as_deref(),
    };
    let page = comments.list(&request).await?;
    let mut out = serde_json::json!({ "items": page.items, "next_cursor": page.next_cursor });
    if args.explain {
        out["plan"] = serde_json::to_value(&page.plan)?;
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

async fn aggregate(args: AggregateArgs) -> anyhow::Result<()> {
    if args.store_kind == StoreKind::Dynamodb {
        return aggregate_dynamodb(args).await;
    }
    let (engine, comments) = open_engine(&args.store, Moderation::Off, DEFAULT_IDEMPOTENCY_TTL)?;
    let comments = Arc::new(comments);
    comments.ensure_table().await?;
    let feed = EngineFeed::open(engine, &args.store.table, aggregator::CONSUMER).await?;
    if args.until_caught_up {
        let applied = aggregator::catch_up(&comments, &feed.catching_up()).await?;
        println!("applied {applied} changes; the statistics are up to date");
        return Ok(());
    }
    aggregator::run_until_signalled(comments, feed).await;
    Ok(())
}

async fn deliver(args: DeliverArgs) -> anyhow::Result<()> {
    if args.store_kind == StoreKind::Dynamodb {
        return deliver_dynamodb(args).await;
    }
    let (engine, comments) = open_engine(&args.store, Moderation::Off, DEFAULT_IDEMPOTENCY_TTL)?;
    let comments = Arc::new(comments);
    comments.ensure_table().await?;
    let webhooks = args
        .webhooks
        .webhooks(
            SharedStore::new(engine.clone()),
            &args.store.table,
            args.feed.media_links()?,
        )
        .await?;
    let feed = webhook_feed(engine, &args.store.table, &webhooks).await?;
    deliver_until_stopped(&args.webhooks, webhooks, feed).await
}

/// The webhooks consumer of `table`'s stream. Registered while no endpoint
/// exists, it starts at the stream's end: nothing committed before an
/// endpoint is ever delivered to it, so reading the stream kept so far (a
/// day of a busy store's changes) would deliver nothing.
async fn webhook_feed(
    engine: Engine,
    table: &str,
    webhooks: &rave_webhooks::Webhooks<SharedStore>,
) -> anyhow::Result<EngineFeed> {
    let start = match webhooks.endpoints().await?.is_empty() {
        true => StartPosition::Latest,
        false => StartPosition::TrimHorizon,
    };
    Ok(EngineFeed::open_at(engine, table, rave_webhooks::CONSUMER, start).await?)
}

async fn deliver_until_stopped<F: ChangeFeed>(
    args: &deliver::WebhookArgs,
    webhooks: Arc<rave_webhooks::Webhooks<SharedStore>>,
    feed: F,
) -> anyhow::Result<()> {
    let shutdown = Shutdown::new(shutdown::DEFAULT_TIMEOUT);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let (progress, _) = tokio::sync::watch::channel(Default::default());
    let task = args.spawn(webhooks, feed, stopped, progress);
    tracing::info!("delivering webhooks");
    shutdown.signalled().await;
    let _ = stop.send(true);
    shutdown::join_within(&shutdown, "webhook delivery", task).await;
    Ok(())
}

#[cfg(feature = "dynamodb")]
async fn deliver_dynamodb(args: DeliverArgs) -> anyhow::Result<()> {
    let store = connect_dynamodb(&args.dynamo).await;
    let webhooks = args
        .webhooks
        .webhooks(
            SharedStore::new(store.clone()),
            &args.store.table,
            args.feed.media_links()?,
        )
        .await?;
    let feed = store
        .feed(
            &args.store.table,
            rave_webhooks::CONSUMER,
            rave_comments::aggregator_positions(),
        )
        .await?;
    deliver_until_stopped(&args.webhooks, webhooks, feed).await
}

#[cfg(not(feature = "dynamodb"))]
async fn deliver_dynamodb(_args: DeliverArgs) -> anyhow::Result<()> {
    bail!("this rave was built without DynamoDB support: build it with `--features dynamodb`")
}

async fn reconcile(args: ReconcileArgs) -> anyhow::Result<()> {
    if args.store_kind == StoreKind::Dynamodb {
        return reconcile_dynamodb(args).await;
    }
    let media = args.bucket.embedded(&args.store.data)?;
    let (engine, comments) = open_engine(&args.store, Moderation::Off, DEFAULT_IDEMPOTENCY_TTL)?;
    let comments = Arc::new(comments);
    comments.ensure_table().await?;
    // Apply what is pending first, so the recount compares like with like.
    let feed = EngineFeed::open(engine, &args.store.table, aggregator::CONSUMER)
        .await?
        .catching_up();
    let applied = aggregator::catch_up(&comments, &feed).await?;
    if applied > 0 {
        eprintln!("applied {applied} pending changes before recounting");
    }
    // The photos first: the statistics' summary stays the last line.
    photos::reconcile(
        &comments,
        &media,
        args.segments,
        args.orphan_grace(),
        args.fix,
    )
    .await?;
    let bar = progress_bar(None, "scanning items");
    let started = std::time::Instant::now();
    let report = comments
        .reconcile(args.segments, args.fix, &|n| bar.inc(n))
        .await?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    for drift in &report.drift {
        let show = |item: &Option<rave_store::Item>| match item {
            Some(item) => format!("{item:?}"),
            None => "(absent)".to_owned(),
        };
        println!(
            "drift {}: stored {} expected {}",
            drift.key,
            show(&drift.stored),
            show(&drift.expected)
        );
    }
    println!(
        "scanned {} items ({} counted comments) in {:.1} s ({:.0} items/s): {} items drifted{}",
        report.items_scanned,
        report.comments_counted,
        seconds,
        report.items_scanned as f64 / seconds,
        report.drift.len(),
        if report.fixed && !report.drift.is_empty() {
            ", repaired"
        } else {
            ""
        }
    );
    Ok(())
}

/// `reconcile` on DynamoDB: the photos in the bucket against what the
/// comments name, and nothing else. The statistics' recount compares the
/// stored counts with the comments at one moment, so it first lets the
/// aggregator apply every pending change; DynamoDB Streams gives no count of
/// pending records to wait for (`aggregate --until-caught-up` is refused for
/// the same reason), and counts repaired while changes are still pending
/// would have those changes added on top once the aggregator applies them.
/// It can run beside the servers: the grace period keeps in-flight uploads'
/// photos, as on the embedded store.
#[cfg(feature = "dynamodb")]
async fn reconcile_dynamodb(args: ReconcileArgs) -> anyhow::Result<()> {
    let Some(media) = args.bucket.bucket(args.dynamo.region.as_deref()).await? else {
        bail!(
            "with --store dynamodb, reconcile checks the photos in --media-bucket (and --media-endpoint for an S3-compatible server): give the bucket"
        );
    };
    let store = connect_dynamodb(&args.dynamo).await;
    let comments = domain(
        SharedStore::new(store),
        &args.store,
        Moderation::Off,
        DEFAULT_IDEMPOTENCY_TTL,
    )?;
    photos::reconcile(
        &comments,
        &media,
        args.segments,
        args.orphan_grace(),
        args.fix,
    )
    .await?;
    // Said as the last line, where the embedded store's recount reports.
    println!(
        "statistics: not recounted on --store dynamodb (the recount needs every change applied by the aggregator first, and DynamoDB Streams cannot tell when that is); statistics, vote counts, listing copies and families are checked and repaired on the embedded store only"
    );
    Ok(())
}

#[cfg(not(feature = "dynamodb"))]
async fn reconcile_dynamodb(_args: ReconcileArgs) -> anyhow::Result<()> {
    bail!("this rave was built without DynamoDB support: build it with `--features dynamodb`")
}

#[cfg(feature = "dynamodb")]
async fn connect_dynamodb(args: &DynamoArgs) -> rave_dynamodb::DynamoStore {
    rave_dynamodb::DynamoStore::connect(&rave_dynamodb::Connection {
        endpoint: args.endpoint.clone(),
        region: args.region.clone(),
    })
    .await
}

/// Creates the table with its indexes and stream, unless it exists; an
/// existing table gets Time to Live and the indexes of the current layout
/// (missing ones created, changed ones rebuilt). Says what it did.
#[cfg(feature = "dynamodb")]
async fn ensure_dynamodb_table(
    store: &rave_dynamodb::DynamoStore,
    table: &str,
    billing: rave_dynamodb::Billing,
) -> anyhow::Result<String> {
    use rave_store::{Store, StoreError};
    let wanted = rave_comments::table_definition(table);
    match store.describe_table(table).await {
        Ok(existing) => {
            let mut done = Vec::new();
            if let (None, Some(attribute)) = (
                existing.time_to_live_attribute,
                &wanted.time_to_live_attribute,
            ) {
                store
                    .enable_time_to_live(table, attribute)
                    .await
                    .context("cannot enable Time to Live")?;
                done.push(format!("enabled Time to Live on {attribute}"));
            }
            done.extend(
                store
                    .update_indexes(&wanted)
                    .await
                    .context("cannot bring the indexes up to date")?,
            );
            if done.is_empty() {
                Ok(format!("table {table} exists; nothing to do"))
            } else {
                Ok(format!("table {table} exists; {}", done.join("; ")))
            }
        }
        Err(StoreError::ResourceNotFound(_)) => {
            let definition = wanted;
            let expiry = definition
                .time_to_live_attribute
                .clone()
                .map_or_else(String::new, |a| format!(", Time to Live on {a}"));
            let indexes: Vec<String> = definition
                .global_secondary_indexes
                .iter()
                .map(|i| i.name.clone())
                .collect();
            store
                .create_table_with(definition, billing)
                .await
                .context("cannot create the table")?;
            Ok(format!(
                "created table {table} ({}) with indexes {}, a NEW_AND_OLD_IMAGES stream{expiry}; it is ACTIVE",
                match billing {
                    rave_dynamodb::Billing::OnDemand => "on-demand".to_owned(),
                    rave_dynamodb::Billing::Provisioned { read, write } => format!(
                        "provisioned: {read} read and {write} write units per table and index"
                    ),
                },
                indexes.join(", ")
            ))
        }
        Err(e) => Err(e).context("cannot describe the table"),
    }
}

#[cfg(feature = "dynamodb")]
async fn init(args: InitArgs) -> anyhow::Result<()> {
    let store = connect_dynamodb(&args.dynamo).await;
    let billing = match args.billing {
        BillingArg::OnDemand => rave_dynamodb::Billing::OnDemand,
        BillingArg::Provisioned => rave_dynamodb::Billing::Provisioned {
            read: args.read_capacity,
            write: args.write_capacity,
        },
    };
    println!(
        "{}",
        ensure_dynamodb_table(&store, &args.table, billing).await?
    );
    Ok(())
}

#[cfg(not(feature = "dynamodb"))]
async fn init(_args: InitArgs) -> anyhow::Result<()> {
    bail!("this rave was built without DynamoDB support: build it with `--features dynamodb`")
}

#[cfg(feature = "dynamodb")]
async fn serve_dynamodb(args: ServeArgs, moderation: Moderation) -> anyhow::Result<()> {
    let media = args
        .media
        .store
        .bucket(args.dynamo.region.as_deref())
        .await?;
    let store = connect_dynamodb(&args.dynamo).await;
    if !args.no_init {
        let done =
            ensure_dynamodb_table(&store, &args.store.table, rave_dynamodb::Billing::OnDemand)
                .await?;
        tracing::info!("{done}");
    }
    let store_handle = store.clone();
    let comments = Arc::new(args.rules.apply(
        domain(
            SharedStore::new(store),
            &args.store,
            moderation,
            args.idempotency_ttl(),
        )?,
        &args.media_links()?,
    )?);
    if args.demo {
        load_demo(&comments).await?;
    }
    let feed = match args.no_aggregator {
        true => None,
        false => Some(
            store_handle
                .feed(
                    &args.store.table,
                    aggregator::CONSUMER,
                    rave_comments::aggregator_positions(),
                )
                .await?
                .with_concurrent_shards(args.dynamo.stream_readers.into()),
        ),
    };
    let SideTables {
        webhooks,
        access,
        review_requests,
    } = args
        .side_tables(SharedStore::new(store_handle.clone()))
        .await?;
    let webhook_feed = match args.no_webhook_delivery {
        true => None,
        false => Some(
            store_handle
                .feed(
                    &args.store.table,
                    rave_webhooks::CONSUMER,
                    rave_comments::aggregator_positions(),
                )
                .await?,
        ),
    };
    let shutdown = args.shutdown()?;
    run_service(
        &args,
        &shutdown,
        Service {
            comments,
            access,
            feed,
            webhooks,
            webhook_feed,
            store_check: None,
            review_requests,
            media,
        },
    )
    .await
}

#[cfg(not(feature = "dynamodb"))]
async fn serve_dynamodb(_args: ServeArgs, _moderation: Moderation) -> anyhow::Result<()> {
    bail!("this rave was built without DynamoDB support: build it with `--features dynamodb`")
}

#[cfg(feature = "dynamodb")]
async fn aggregate_dynamodb(args: AggregateArgs) -> anyhow::Result<()> {
    if args.until_caught_up {
        bail!(
            "--until-caught-up needs the number of pending records, which DynamoDB Streams does not give"
        );
    }
    let store = connect_dynamodb(&args.dynamo).await;
    let comments = Arc::new(domain(
        SharedStore::new(store.clone()),
        &args.store,
        Moderation::Off,
        DEFAULT_IDEMPOTENCY_TTL,
    )?);
    let feed = store
        .feed(
            &args.store.table,
            aggregator::CONSUMER,
            rave_comments::aggregator_positions(),
        )
        .await?
        .with_concurrent_shards(args.dynamo.stream_readers.into());
    aggregator::run_until_signalled(comments, feed).await;
    Ok(())
}

#[cfg(not(feature = "dynamodb"))]
async fn aggregate_dynamodb(_args: AggregateArgs) -> anyhow::Result<()> {
    bail!("this rave was built without DynamoDB support: build it with `--features dynamodb`")
}

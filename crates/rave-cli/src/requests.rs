//! Review requests in the binary: the options, the requests table and its
//! links for the server, and the scheduler `serve` runs beside the
//! aggregator, sending by email (`--smtp-url`) or as `review.requested`
//! webhooks (`--requests-by-webhook`). Orders are taken once the server has
//! a `--public-url` (the links need it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use rave_comments::Comments;
use rave_requests::{
    Catalog, Channel, Counters, Links, LookupFuture, Order, OrderPut, ProductLine, RequestMessage,
    Requests, Schedule, Scheduler, SendError, SendFuture, SmtpChannel, SystemClock, Templates,
};
use rave_server::ReviewRequests;
use rave_server::feeds::FeedSite;
use rave_store::SharedStore;
use rave_webhooks::{EventType, Webhooks};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const DAY: u64 = 24 * 60 * 60;

#[derive(Debug, Clone, Args)]
pub struct RequestArgs {
    /// Send review requests by email through this SMTP server:
    /// smtp://[user:password@]host[:port] (STARTTLS when offered; add
    /// ?tls=required to insist) or smtps://… (implicit TLS).
    #[arg(
        long,
        env = "RAVE_SMTP_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub smtp_url: Option<String>,
    /// The sender of review requests, such as "Kettle & Co. <reviews@shop.example>".
    #[arg(long, env = "RAVE_SMTP_FROM", value_name = "MAILBOX")]
    pub smtp_from: Option<String>,
    /// Send review requests as signed review.requested webhooks (for shops
    /// that send their own mail) instead of emails.
    #[arg(long, env = "RAVE_REQUESTS_BY_WEBHOOK", conflicts_with = "smtp_url")]
    pub requests_by_webhook: bool,
    /// Days after delivery before the first review request.
    #[arg(long, env = "RAVE_REQUEST_DELAY_DAYS", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(0..=60))]
    pub request_delay_days: u32,
    /// Days after the first request before the one reminder (0: none).
    #[arg(long, env = "RAVE_REQUEST_REMINDER_DAYS", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(0..=60))]
    pub request_reminder_days: u32,
    /// A directory of templates replacing rave's
    /// (<lang>/subject.txt, reminder-subject.txt, body.txt, body.html).
    #[arg(long, env = "RAVE_REQUEST_TEMPLATES", value_name = "DIR")]
    pub request_templates: Option<PathBuf>,
    /// A product never asked about (repeat).
    #[arg(long = "request-block-product", value_name = "PRODUCT")]
    pub blocked_products: Vec<String>,
    /// An address never written to (repeat).
    #[arg(long = "request-block-customer", value_name = "EMAIL")]
    pub blocked_customers: Vec<String>,
    /// How often the scheduler looks for due requests, in seconds.
    #[arg(long, env = "RAVE_REQUEST_POLL_SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_poll_seconds: u64,
}

impl RequestArgs {
    fn schedule(&self) -> Schedule {
        Schedule {
            delay: Duration::from_secs(u64::from(self.request_delay_days) * DAY),
            reminder_after: (self.request_reminder_days > 0)
                .then(|| Duration::from_secs(u64::from(self.request_reminder_days) * DAY)),
            blocked_products: self.blocked_products.clone(),
            blocked_customers: self.blocked_customers.clone(),
            ..Schedule::default()
        }
    }

    /// The orders and requests of the comments table `table` on `store`,
    /// on the system clock (the table is created if missing).
    pub async fn requests(
        &self,
        store: SharedStore,
        table: &str,
    ) -> anyhow::Result<Requests<SharedStore>> {
        let requests = Requests::new(store, table, self.schedule(), Arc::new(SystemClock));
        requests
            .ensure_table()
            .await
            .context("cannot create the requests table")?;
        Ok(requests)
    }

    /// The requests of the comments table `table`, when the server has a
    /// public URL; the table is created if missing.
    pub async fn open(
        &self,
        store: SharedStore,
        table: &str,
        site: Option<&FeedSite>,
        secret: &[u8; 32],
    ) -> anyhow::Result<Option<ReviewRequests>> {
        let Some(site) = site else {
            if self.smtp_url.is_some() || self.requests_by_webhook {
                bail!("review requests link to rave's pages: give --public-url too");
            }
            return Ok(None);
        };
        let requests = self.requests(store, table).await?;
        Ok(Some(ReviewRequests {
            requests: Arc::new(requests),
            links: Links::from_server_secret(secret, site.public_url()),
        }))
    }

    /// The scheduler sending due requests until `stop`, if a channel is
    /// set, and what it counts.
    pub fn spawn(
        &self,
        review_requests: &ReviewRequests,
        site: &FeedSite,
        comments: Arc<Comments<SharedStore>>,
        webhooks: Arc<Webhooks<SharedStore>>,
        stop: watch::Receiver<bool>,
    ) -> anyhow::Result<Option<(JoinHandle<()>, Arc<Counters>)>> {
        let channel: Arc<dyn Channel> = match (&self.smtp_url, self.requests_by_webhook) {
            (Some(url), _) => {
                let from = self.smtp_from.as_deref().context(
                    "--smtp-url sends email from --smtp-from (such as \"Shop <reviews@shop.example>\")",
                )?;
                let templates = match &self.request_templates {
                    Some(dir) => Templates::with_overrides(dir)?,
                    None => Templates::default(),
                };
                Arc::new(SmtpChannel::new(url, from, site.publisher(), templates)?)
            }
            (None, true) => Arc::new(WebhookChannel(webhooks)),
            (None, false) => {
                tracing::warn!(
                    "orders are taken and their requests scheduled, but none is sent: give --smtp-url or --requests-by-webhook"
                );
                return Ok(None);
            }
        };
        let scheduler = Scheduler::new(
            review_requests.requests.clone(),
            channel,
            Arc::new(ProductNames(comments)),
            review_requests.links.clone(),
        );
        let poll = Duration::from_secs(self.request_poll_seconds);
        let counters = scheduler.counters();
        let task = tokio::spawn(async move {
            scheduler.run(poll, stop).await;
        });
        Ok(Some((task, counters)))
    }
}

/// Product names and images from the product records.
#[derive(Debug)]
struct ProductNames(Arc<Comments<SharedStore>>);

impl Catalog for ProductNames {
    fn product<'a>(&'a self, id: &'a str) -> LookupFuture<'a> {
        Box::pin(async move {
            let overview = self.0.product_overview(id).await.ok()?;
            let record = overview.record.as_ref()?;
            Some(ProductLine {
                id: id.to_owned(),
                name: record.name.clone(),
                image_url: record.image.clone(),
            })
        })
    }
}

/// `review.requested` webhooks: the order, its products and the links, but
/// neither address nor name (the shop has them; webhook payloads carry no
/// personal data).
#[derive(Debug)]
struct WebhookChannel(Arc<Webhooks<SharedStore>>);

impl Channel for WebhookChannel {
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            let data = serde_json::json!({
                "order_id": message.order.id,
                "kind": message.kind.as_str(),
                "locale": message.order.locale,
                "products": message.products.iter().map(|p| serde_json::json!({
                    "id": p.id,
                    "name": p.name,
                    "image_url": p.image_url,
                })).collect::<Vec<_>>(),
                "review_url": message.review_url,
                "unsubscribe_url": message.unsubscribe_url,
            });
            match self.0.publish(EventType::ReviewRequested, &data).await {
                Ok(0) => Err(SendError(
                    "no webhook endpoint subscribes to review.requested".into(),
                )),
                Ok(_) => Ok(()),
                Err(e) => Err(SendError(e.to_string())),
            }
        })
    }
}

/// One row of a past-orders CSV (`rave orders import`): a header row names
/// the columns `order_id`, `email`, `name`, `locale`, `delivered_at`
/// (RFC 3339) and `products` (product ids separated by `;`).
#[derive(Debug, serde::Deserialize)]
struct OrderRow {
    order_id: String,
    email: String,
    name: String,
    locale: String,
    delivered_at: String,
    products: String,
}

/// What an orders import did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct OrdersImported {
    pub created: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub skipped: u64,
}

/// Puts every order of a CSV of delivered orders, as `POST
/// /v1/admin/orders` does each; a bad row is reported by its line and
/// stops the import, or is skipped with `skip_bad_lines`. Importing the
/// same file again changes nothing.
pub async fn import_orders(
    comments: &Comments<SharedStore>,
    requests: &Requests<SharedStore>,
    file: &Path,
    skip_bad_lines: bool,
) -> anyhow::Result<OrdersImported> {
    let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    // Cells are trimmed by `put_row`: the reader's own trimming would drop
    // the records' positions, which name the lines.
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_slice());
    // The reader counts records' lines, not the file's (a quoted cell may
    // hold newlines): a row's line is counted from the bytes before it.
    // After a CRLF the reader's record starts at the pending LF, which
    // belongs to the line before: counted too.
    let (mut counted_to, mut newlines) = (0usize, 0u64);
    let mut line_at = |byte: u64| {
        let byte = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .saturating_add(1)
            .min(text.len());
        newlines += text[counted_to.min(byte)..byte]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        counted_to = counted_to.max(byte);
        newlines + 1
    };
    let headers = reader.headers()?.clone();
    let mut done = OrdersImported::default();
    let mut record = csv::StringRecord::new();
    loop {
        let read = reader.read_record(&mut record);
        let line = line_at(record.position().map_or(0, csv::Position::byte));
        let outcome = match read {
            Ok(false) => break,
            Ok(true) => match record.deserialize::<OrderRow>(Some(&headers)) {
                Ok(row) => put_row(comments, requests, row).await,
                Err(e) => Err(anyhow::anyhow!("{e}")),
            },
            Err(e) => Err(anyhow::anyhow!("{e}")),
        };
        match outcome {
            Ok(OrderPut::Created) => done.created += 1,
            Ok(OrderPut::Rescheduled) => done.changed += 1,
            Ok(OrderPut::Unchanged) => done.unchanged += 1,
            Err(e) if skip_bad_lines => {
                eprintln!("{}: line {line}: {e:#} (skipped)", file.display());
                done.skipped += 1;
            }
            Err(e) => bail!("{}: line {line}: {e:#}", file.display()),
        }
    }
    Ok(done)
}

async fn put_row(
    comments: &Comments<SharedStore>,
    requests: &Requests<SharedStore>,
    row: OrderRow,
) -> anyhow::Result<OrderPut> {
    let delivered_at = rave_comments::Timestamp::parse(row.delivered_at.trim())
        .map_err(|_| anyhow::anyhow!("delivered_at: must be an RFC 3339 time in UTC"))?;
    let products: Vec<String> = row
        .products
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    for product in &products {
        let known = rave_comments::ProductId::parse(product).is_ok()
            && comments.product_overview(product).await?.record.is_some();
        if !known {
            bail!("products: {product:?} has no product record");
        }
    }
    let order = Order {
        id: row.order_id.trim().to_owned(),
        email: row.email,
        name: row.name.trim().to_owned(),
        locale: row.locale.trim().to_owned(),
        delivered_at_ms: u64::try_from(delivered_at.millis()).unwrap_or_default(),
        products,
    };
    Ok(requests.put_order(order).await?)
}

//! Review requests in the binary: the options, the requests table and its
//! links for the server, and the scheduler `serve` runs beside the
//! aggregator, sending by email (`--smtp-url`) or as `review.requested`
//! webhooks (`--requests-by-webhook`). Orders are taken once the server has
//! a `--public-url` (the links need it).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use rave_comments::Comments;
use rave_requests::{
    Catalog, Channel, Counters, Links, LookupFuture, ProductLine, RequestMessage, Requests,
    Schedule, Scheduler, SendError, SendFuture, SmtpChannel, SystemClock, Templates,
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
        let requests = Requests::new(store, table, self.schedule(), Arc::new(SystemClock));
        requests
            .ensure_table()
            .await
            .context("cannot create the requests table")?;
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

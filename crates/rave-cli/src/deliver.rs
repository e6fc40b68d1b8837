//! Webhooks in the binary: the options, the `Webhooks` over the store, and
//! the delivery loop that `serve` runs beside the aggregator and `rave
//! deliver` runs alone.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rave_server::MediaLinks;
use rave_store::{ChangeFeed, SharedStore};
use rave_webhooks::{
    FanOutProgress, PhotoLinks, RetryPolicy, TargetPolicy, Timeouts, WebhookConfig, Webhooks,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::options::seconds;

#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// Let webhooks reach loopback, private, link-local and metadata
    /// addresses (for tests and closed networks only).
    #[arg(long, env = "RAVE_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
    /// How long a failing delivery is retried before it is marked failed, in hours.
    #[arg(long, env = "RAVE_WEBHOOK_RETRY_HOURS", default_value_t = 24.0)]
    pub webhook_retry_hours: f64,
    /// The wait after a delivery's first failed attempt, in seconds; it
    /// doubles after each further one, up to an hour.
    #[arg(long, env = "RAVE_WEBHOOK_FIRST_RETRY_SECONDS", default_value_t = 5.0)]
    pub webhook_first_retry_seconds: f64,
    /// Connection timeout of a delivery, in seconds.
    #[arg(long, env = "RAVE_WEBHOOK_CONNECT_TIMEOUT", default_value_t = 5)]
    pub webhook_connect_timeout: u64,
    /// Timeout of a whole delivery attempt (connect, send, response), in seconds.
    #[arg(long, env = "RAVE_WEBHOOK_TIMEOUT", default_value_t = 15)]
    pub webhook_timeout: u64,
}

impl WebhookArgs {
    fn config(
        &self,
        table: &str,
        photo_links: Option<MediaLinks>,
    ) -> anyhow::Result<WebhookConfig> {
        Ok(WebhookConfig {
            photo_links: photo_links.map(|links| Arc::new(links) as Arc<dyn PhotoLinks>),
            comments_table: table.to_owned(),
            targets: TargetPolicy {
                allow_private: self.webhook_allow_private,
            },
            retry: RetryPolicy {
                first_wait: seconds(
                    self.webhook_first_retry_seconds,
                    "--webhook-first-retry-seconds",
                )?,
                retry_for: seconds(self.webhook_retry_hours * 3600.0, "--webhook-retry-hours")?,
                ..RetryPolicy::default()
            },
        })
    }

    fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(self.webhook_connect_timeout),
            response: Duration::from_secs(self.webhook_timeout),
        }
    }

    /// The endpoints and deliveries of `table`, their table created if
    /// missing; payloads name photos by `photo_links` (without, photos
    /// carry no URLs).
    pub async fn webhooks(
        &self,
        store: SharedStore,
        table: &str,
        photo_links: Option<MediaLinks>,
    ) -> anyhow::Result<Arc<Webhooks<SharedStore>>> {
        let webhooks = Webhooks::new(store, self.config(table, photo_links)?);
        webhooks.ensure_table().await?;
        Ok(Arc::new(webhooks))
    }

    /// Delivers from `feed` until `stop`, publishing the fan-out's lag
    /// into `progress`.
    pub fn spawn<F: ChangeFeed>(
        &self,
        webhooks: Arc<Webhooks<SharedStore>>,
        feed: F,
        stop: watch::Receiver<bool>,
        progress: watch::Sender<FanOutProgress>,
    ) -> JoinHandle<()> {
        let timeouts = self.timeouts();
        tokio::spawn(async move {
            if let Err(error) = rave_webhooks::run(webhooks, feed, timeouts, stop, progress).await {
                tracing::error!(%error, "webhook delivery cannot start");
            }
        })
    }
}

//! Sending deliveries: one task per endpoint, each working through its own
//! queue in order, so a slow or dead endpoint holds back only itself.
//!
//! A task takes the oldest pending delivery of its endpoint, waits until
//! its next attempt is due, POSTs it signed, and records the outcome before
//! it looks at the next one. Everything it knows is in the table: killed at
//! any point, it starts again from the oldest pending delivery, which at
//! worst sends one delivery twice with the same `webhook-id`.
//!
//! The queue is the sparse `pending` index of the webhooks table, which
//! makes it the endpoint's durable position. A delivery that fails is
//! retried with exponential backoff until its deadline (24 hours by
//! default), with one last attempt at the deadline, and then marked
//! failed; an admin may send a failed one again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rave_store::{ChangeFeed, FeedLag, Store};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use url::Url;

use crate::delivery::{Delivery, DeliveryStatus};
use crate::endpoint::Endpoint;
use crate::error::WebhookError;
use crate::service::{Webhooks, now_ms};
use rave_outbound::{TargetPolicy, Timeouts};

/// How often an idle task looks for new deliveries when no wake-up came
/// (another process may have written them), and how often the set of
/// endpoints is re-read.
const POLL: Duration = Duration::from_millis(500);
/// How long to wait after a storage error before trying again.
const STORE_BACKOFF: Duration = Duration::from_secs(1);

/// How the fan-out keeps up with the change stream, published after every
/// step (for readiness: a fan-out that falls silent is stuck).
#[derive(Debug, Clone, Copy, Default)]
pub struct FanOutProgress {
    pub lag: FeedLag,
    /// When the fan-out last finished a step; `None` before its first.
    pub published: Option<Instant>,
}

/// Whether `stop` says to stop: it turned true, or its sender is gone (no
/// one is left to say it, and a closed channel would wake every wait at
/// once).
fn told_to_stop(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow() || stop.has_changed().is_err()
}

/// One attempt at delivering `delivery` to `endpoint`: `Err` says why it
/// did not succeed, in words an operator reads in the delivery's history.
pub async fn attempt(
    client: &reqwest::Client,
    policy: TargetPolicy,
    endpoint: &Endpoint,
    delivery: &Delivery,
) -> Result<(), String> {
    let url = Url::parse(&endpoint.url).map_err(|e| format!("invalid url: {e}"))?;
    rave_outbound::check_literal(policy, &url).map_err(|e| e.to_string())?;
    let timestamp = now_ms() / 1000;
    let message_id = delivery.message_id();
    let signature = endpoint
        .secret
        .sign(&message_id, timestamp, delivery.body.as_bytes());
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &message_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(delivery.body.clone())
        .send()
        .await
        .map_err(|e| rave_outbound::describe(&e))?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else if status.is_redirection() {
        Err(format!("HTTP {status}: redirects are not followed"))
    } else {
        Err(format!("HTTP {status}"))
    }
}

/// What the delivery side of the service runs on.
#[derive(Debug)]
pub struct Sender<S> {
    webhooks: Arc<Webhooks<S>>,
    client: reqwest::Client,
    wake: Arc<Notify>,
}

impl<S: Store> Sender<S> {
    pub fn new(webhooks: Arc<Webhooks<S>>, timeouts: Timeouts) -> Result<Sender<S>, WebhookError> {
        let client = rave_outbound::client(webhooks.config().targets, timeouts)?;
        Ok(Sender {
            webhooks,
            client,
            wake: Arc::new(Notify::new()),
        })
    }

    /// Works through one endpoint's queue until `stop`.
    async fn serve_endpoint(&self, endpoint: Endpoint, mut stop: watch::Receiver<bool>) {
        loop {
            if told_to_stop(&stop) {
                return;
            }
            let wait = match self.step(&endpoint).await {
                Ok(Some(wait)) => wait,
                Ok(None) => Duration::ZERO,
                Err(error) => {
                    tracing::warn!(endpoint = %endpoint.id, %error, "webhook delivery step failed");
                    STORE_BACKOFF
                }
            };
            if wait > Duration::ZERO {
                tokio::select! {
                    () = self.wake.notified() => {}
                    () = tokio::time::sleep(wait) => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }

    /// Sends the endpoint's next delivery if it is due; `Some(wait)` when
    /// there is nothing to do for that long.
    async fn step(&self, endpoint: &Endpoint) -> Result<Option<Duration>, WebhookError> {
        let Some(delivery) = self.webhooks.next_pending(&endpoint.id).await? else {
            return Ok(Some(POLL));
        };
        let now = now_ms();
        if delivery.next_attempt_at_ms > now {
            let due = u64::try_from(delivery.next_attempt_at_ms - now).unwrap_or(0);
            return Ok(Some(Duration::from_millis(due).min(POLL)));
        }
        let policy = self.webhooks.config().targets;
        let outcome = attempt(&self.client, policy, endpoint, &delivery).await;
        let now = now_ms();
        let recorded = match outcome {
            Ok(()) => delivery.delivered(now),
            Err(error) => {
                tracing::info!(endpoint = %endpoint.id, delivery = %delivery.id, %error, "webhook attempt failed");
                delivery.attempt_failed(now, error, &self.webhooks.config().retry)
            }
        };
        match self
            .webhooks
            .replace(&recorded, DeliveryStatus::Pending)
            .await
        {
            Ok(()) | Err(WebhookError::Conflict(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Runs a task per endpoint (starting and stopping them as endpoints
    /// come and go) until `stop`.
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut tasks: HashMap<String, (Endpoint, JoinHandle<()>)> = HashMap::new();
        loop {
            match self.webhooks.endpoints().await {
                Ok(endpoints) => {
                    tasks.retain(|id, (_, task)| {
                        let keep = endpoints.iter().any(|e| &e.id == id);
                        if !keep {
                            task.abort();
                        }
                        keep
                    });
                    for endpoint in endpoints {
                        if tasks.contains_key(&endpoint.id) {
                            continue;
                        }
                        let sender = self.clone();
                        let task_stop = stop.clone();
                        let task_endpoint = endpoint.clone();
                        let task = tokio::spawn(async move {
                            sender.serve_endpoint(task_endpoint, task_stop).await;
                        });
                        tasks.insert(endpoint.id.clone(), (endpoint, task));
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot list webhook endpoints"),
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                _ = stop.changed() => {}
            }
            if told_to_stop(&stop) {
                break;
            }
        }
        for (_, (_, task)) in tasks {
            let _ = task.await;
        }
    }

    /// Applies the change stream to the endpoints' queues until `stop`,
    /// waking the endpoint tasks whenever deliveries were written, and
    /// publishes its lag into `progress` after every step.
    pub async fn fan_out<F: ChangeFeed>(
        self: Arc<Self>,
        feed: F,
        mut stop: watch::Receiver<bool>,
        progress: watch::Sender<FanOutProgress>,
    ) {
        let mut endpoints = Vec::new();
        while !told_to_stop(&stop) {
            let step = tokio::select! {
                step = self.webhooks.fan_out_once(&feed, POLL, &mut endpoints) => step,
                _ = stop.changed() => break,
            };
            match step {
                Ok(0) => {}
                Ok(_) => self.wake.notify_waiters(),
                Err(error) => {
                    tracing::warn!(%error, "webhooks: applying the change stream failed; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(STORE_BACKOFF) => {}
                        _ = stop.changed() => {}
                    }
                }
            }
            match feed.lag().await {
                Ok(lag) => {
                    progress.send_replace(FanOutProgress {
                        lag,
                        published: Some(Instant::now()),
                    });
                }
                Err(error) => tracing::warn!(%error, "webhooks: cannot read the fan-out's lag"),
            }
        }
    }
}

/// Fans out `feed` and sends deliveries until `stop` turns true; the
/// fan-out's lag goes to `progress`.
pub async fn run<S: Store, F: ChangeFeed>(
    webhooks: Arc<Webhooks<S>>,
    feed: F,
    timeouts: Timeouts,
    stop: watch::Receiver<bool>,
    progress: watch::Sender<FanOutProgress>,
) -> Result<(), WebhookError> {
    let sender = Arc::new(Sender::new(webhooks, timeouts)?);
    let fan_out = tokio::spawn(sender.clone().fan_out(feed, stop.clone(), progress));
    sender.run(stop).await;
    let _ = fan_out.await;
    Ok(())
}

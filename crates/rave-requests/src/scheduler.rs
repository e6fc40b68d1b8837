//! Sending due requests, once, on any number of servers.
//!
//! A pass reads the `scheduled` requests due by now (`byStatus`), claims
//! each with a conditional write on its `version` (the claim holds for a
//! lease; a server that dies holding one leaves it to be claimed again when
//! the lease ends), decides whether it is still wanted (the order is still
//! there, the address has not opted out or been blocked, a reminder only
//! if nothing was reviewed), sends it, and records the outcome conditional
//! on its own claim. Delivery is at least once: a crash after the SMTP
//! server accepted a message and before the outcome is recorded sends it
//! again when the lease ends — the only window for a duplicate.
//!
//! A failed send is tried again with backoff (a minute, doubling, at most
//! an hour apart) until `Schedule::retry_for` has passed since the first
//! attempt; then the request fails, keeping the last refusal.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rave_store::{PutItemInput, QueryInput, ReturnValues, Store, StoreError};
use tokio::sync::watch;

use crate::channel::{Catalog, Channel, ProductLine, RequestMessage};
use crate::error::Result;
use crate::links::{Links, REVIEW_LINK_LIFETIME_MS};
use crate::model::{RequestKind, RequestStatus, backoff_ms, millis};
use crate::service::Requests;
use crate::table::{self, StoredRequest, requests};

/// How long a claim holds before another server may take the request.
const LEASE: Duration = Duration::from_secs(5 * 60);
/// How often a waiting scheduler looks for due requests.
pub const DEFAULT_POLL: Duration = Duration::from_secs(30);
/// Due requests read per page of a pass.
const PAGE: usize = 100;

/// What passes have done since the scheduler started.
#[derive(Debug, Default)]
pub struct Counters {
    pub sent: AtomicU64,
    pub failed: AtomicU64,
    pub retried: AtomicU64,
    pub skipped: AtomicU64,
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    pub sent: u64,
    /// Failed for good (past the retry period).
    pub failed: u64,
    /// Failed this time, to be tried again.
    pub retried: u64,
    pub skipped: u64,
}

#[derive(Debug)]
pub struct Scheduler<S> {
    requests: Arc<Requests<S>>,
    channel: Arc<dyn Channel>,
    catalog: Arc<dyn Catalog>,
    links: Links,
    counters: Arc<Counters>,
}

/// How a claimed request ended.
enum Outcome {
    /// Sent, asking about these products.
    Sent(Vec<String>),
    Skipped(&'static str),
    Refused(String),
}

impl<S: Store> Scheduler<S> {
    pub fn new(
        requests: Arc<Requests<S>>,
        channel: Arc<dyn Channel>,
        catalog: Arc<dyn Catalog>,
        links: Links,
    ) -> Scheduler<S> {
        Scheduler {
            requests,
            channel,
            catalog,
            links,
            counters: Arc::default(),
        }
    }

    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// Passes until `stop` says so, one every `poll`.
    pub async fn run(&self, poll: Duration, mut stop: watch::Receiver<bool>) {
        loop {
            if let Err(error) = self.run_due().await {
                tracing::warn!(%error, "review requests: a pass failed; trying again later");
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => return,
            }
            if *stop.borrow() {
                return;
            }
        }
    }

    /// Sends every request due now.
    pub async fn run_due(&self) -> Result<Pass> {
        let now = self.requests.now_ms();
        let mut pass = Pass::default();
        let mut start = None;
        loop {
            let mut input = QueryInput::new(
                self.requests.table.clone(),
                Some(table::STATUS_INDEX),
                requests::with_status(RequestStatus::Scheduled, Some(now)),
            );
            input.limit = Some(PAGE);
            input.exclusive_start_key = start;
            let page = self.requests.store.query(input).await?;
            for item in &page.items {
                let (order_id, kind) = requests::key_of(item)?;
                self.handle(&order_id, kind, now, &mut pass).await?;
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(pass),
            }
        }
    }

    async fn handle(
        &self,
        order_id: &str,
        kind: RequestKind,
        now: u64,
        pass: &mut Pass,
    ) -> Result<()> {
        let Some(claimed) = self.claim(order_id, kind, now).await? else {
            return Ok(());
        };
        let outcome = self.send(&claimed).await?;
        let mut request = claimed.request.clone();
        let mut asked_about = Vec::new();
        match outcome {
            Outcome::Sent(products) => {
                if kind == RequestKind::First {
                    asked_about = products;
                }
                request.status = RequestStatus::Sent;
                request.attempts += 1;
                request.first_attempt_ms.get_or_insert(now);
                request.sent_at_ms = Some(now);
                request.last_error = None;
                pass.sent += 1;
                self.counters.sent.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Skipped(reason) => {
                request.status = RequestStatus::Skipped;
                request.skipped_because = Some(reason.to_owned());
                pass.skipped += 1;
                self.counters.skipped.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Refused(error) => {
                request.attempts += 1;
                let first = *request.first_attempt_ms.get_or_insert(now);
                request.last_error = Some(error);
                if now.saturating_sub(first) >= millis(self.requests.schedule.retry_for) {
                    request.status = RequestStatus::Failed;
                    pass.failed += 1;
                    self.counters.failed.fetch_add(1, Ordering::Relaxed);
                } else {
                    request.due_at_ms = now + backoff_ms(request.attempts);
                    pass.retried += 1;
                    self.counters.retried.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let finished = StoredRequest {
            request,
            claim_until_ms: None,
            version: claimed.version + 1,
        };
        if !self.write(&finished, Some(&claimed)).await? {
            tracing::warn!(
                order_id,
                kind = kind.as_str(),
                "review requests: a claim ran out before its outcome was recorded"
            );
        }
        for product in &asked_about {
            self.requests.count(product, table::REQUESTED).await?;
        }
        Ok(())
    }

    /// The request, claimed for this server, if it is due and unclaimed.
    async fn claim(
        &self,
        order_id: &str,
        kind: RequestKind,
        now: u64,
    ) -> Result<Option<StoredRequest>> {
        let Some(stored) = self.requests.request(order_id, kind).await? else {
            return Ok(None);
        };
        let due = stored.request.status == RequestStatus::Scheduled
            && stored.request.due_at_ms <= now
            && stored.claim_until_ms.is_none_or(|until| until <= now);
        if !due {
            return Ok(None);
        }
        let claimed = StoredRequest {
            request: stored.request.clone(),
            claim_until_ms: Some(now + millis(LEASE)),
            version: stored.version + 1,
        };
        Ok(self
            .write(&claimed, Some(&stored))
            .await?
            .then_some(claimed))
    }

    /// Writes `new` if the request is still `old`; false if it changed.
    async fn write(&self, new: &StoredRequest, old: Option<&StoredRequest>) -> Result<bool> {
        match self
            .requests
            .store
            .put_item(PutItemInput {
                table: self.requests.table.clone(),
                item: requests::encode(new),
                condition: Some(requests::unchanged_since(old)),
                return_values: ReturnValues::None,
            })
            .await
        {
            Ok(_) => Ok(true),
            Err(StoreError::ConditionalCheckFailed) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Sends a claimed request unless it is no longer wanted.
    async fn send(&self, claimed: &StoredRequest) -> Result<Outcome> {
        let request = &claimed.request;
        let Some((order, reviewed)) = self.requests.order_with_reviews(&request.order_id).await?
        else {
            return Ok(Outcome::Skipped("the order is gone"));
        };
        if self.requests.opted_out(&order.email).await? {
            return Ok(Outcome::Skipped("the customer unsubscribed"));
        }
        let schedule = &self.requests.schedule;
        if schedule.blocks_customer(&order.email) {
            return Ok(Outcome::Skipped("the customer is blocked"));
        }
        if request.kind == RequestKind::Reminder && !reviewed.is_empty() {
            return Ok(Outcome::Skipped("the customer reviewed"));
        }
        let mut products = Vec::new();
        for id in &order.products {
            if reviewed.contains(id) || schedule.blocked_products.contains(id) {
                continue;
            }
            products.push(
                self.catalog
                    .product(id)
                    .await
                    .unwrap_or_else(|| ProductLine {
                        id: id.clone(),
                        name: id.clone(),
                        image_url: None,
                    }),
            );
        }
        if products.is_empty() {
            return Ok(Outcome::Skipped("nothing left to review"));
        }
        let now = self.requests.now_ms();
        let message = RequestMessage {
            review_url: self
                .links
                .review_url(&order.id, now + REVIEW_LINK_LIFETIME_MS),
            unsubscribe_url: self.links.unsubscribe_url(&order.id),
            order,
            kind: request.kind,
            products,
        };
        Ok(match self.channel.send(&message).await {
            Ok(()) => Outcome::Sent(message.products.into_iter().map(|p| p.id).collect()),
            Err(refused) => Outcome::Refused(refused.0),
        })
    }
}

//! `Webhooks`: the endpoints and their deliveries in the webhooks table.
//! The admin API, the fan-out from the change stream and the senders all
//! go through it.
//!
//! At most 40 endpoints may be registered (`MAX_ENDPOINTS`), so one
//! change's deliveries always fit one commit on DynamoDB. Deleting an
//! endpoint deletes its deliveries too (its pending queue is its
//! position), after the endpoint item, so the fan-out stops making new
//! ones; a batch the fan-out had already read when the endpoint went can
//! still leave deliveries behind, pending for no one.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rave_store::{
    BatchWriteItemInput, DeleteItemInput, GetItemInput, PutItemInput, QueryInput, ReturnValues,
    Store, StoreError, WriteRequest,
};
use ulid::Generator;

use crate::delivery::{Delivery, DeliveryStatus, RetryPolicy};
use crate::endpoint::{Endpoint, MAX_ENDPOINTS};
use crate::error::{Result, WebhookError};
use crate::events::EventType;
use crate::photos::PhotoLinks;
use crate::signing::Secret;
use crate::table::{self, deliveries, endpoints};
use rave_outbound::TargetPolicy;

/// Most deliveries an endpoint's history lists.
pub const MAX_LISTED_DELIVERIES: usize = 100;

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// The comments table whose changes are delivered.
    pub comments_table: String,
    pub targets: TargetPolicy,
    pub retry: RetryPolicy,
    /// Where photos are reached, for the URLs in payloads; `None` gives
    /// photos without URLs.
    pub photo_links: Option<Arc<dyn PhotoLinks>>,
}

#[derive(Debug)]
pub struct Webhooks<S> {
    store: S,
    table: String,
    config: WebhookConfig,
    /// Delivery ids: monotonic within the process, so the deliveries of one
    /// batch sort in stream order even within one millisecond.
    ids: Mutex<Generator>,
}

impl<S: Store> Webhooks<S> {
    pub fn new(store: S, config: WebhookConfig) -> Webhooks<S> {
        Webhooks {
            store,
            table: table::table_name(&config.comments_table),
            config,
            ids: Mutex::new(Generator::new()),
        }
    }

    pub fn config(&self) -> &WebhookConfig {
        &self.config
    }

    /// Creates the webhooks table unless it exists.
    pub async fn ensure_table(&self) -> Result<()> {
        rave_store::ensure_table(&self.store, table::table_definition(&self.table))
            .await
            .map_err(Into::into)
    }

    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    pub(crate) fn next_id(&self) -> Result<String> {
        let mut ids = self
            .ids
            .lock()
            .map_err(|_| WebhookError::Internal("the id generator's lock is poisoned".into()))?;
        ids.generate()
            .map(|id| id.to_string())
            .map_err(|e| WebhookError::Internal(format!("no delivery id: {e}")))
    }

    /// Registers an endpoint after checking its URL (see `target`); the
    /// returned endpoint carries the secret, which is shown only now.
    pub async fn create_endpoint(&self, url: &str, events: &[EventType]) -> Result<Endpoint> {
        if events.is_empty() {
            return Err(WebhookError::Invalid {
                field: "events",
                message: "name at least one event".into(),
            });
        }
        let url = self.config.targets.check_url(url).await?;
        if self.endpoints().await?.len() >= MAX_ENDPOINTS {
            return Err(WebhookError::Conflict(format!(
                "at most {MAX_ENDPOINTS} webhook endpoints may be registered"
            )));
        }
        let mut wanted = events.to_vec();
        wanted.sort();
        wanted.dedup();
        let endpoint = Endpoint {
            id: self.next_id()?,
            url: url.to_string(),
            events: wanted,
            secret: Secret::generate().map_err(|e| WebhookError::Internal(e.to_string()))?,
            created_at_ms: now_ms(),
        };
        self.store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: endpoints::encode(&endpoint),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        Ok(endpoint)
    }

    /// Every endpoint, oldest first.
    pub async fn endpoints(&self) -> Result<Vec<Endpoint>> {
        let mut found = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .store
                .query(QueryInput {
                    table: self.table.clone(),
                    index: None,
                    key_condition: endpoints::partition(),
                    filter: None,
                    limit: None,
                    scan_index_forward: true,
                    exclusive_start_key: start,
                    consistent_read: true,
                    projection: None,
                    select: None,
                })
                .await?;
            for item in &page.items {
                found.push(endpoints::decode(item)?);
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(found),
            }
        }
    }

    pub async fn endpoint(&self, id: &str) -> Result<Endpoint> {
        let item = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: endpoints::key(id),
                consistent_read: true,
            })
            .await?
            .item
            .ok_or(WebhookError::NotFound("webhook endpoint"))?;
        Ok(endpoints::decode(&item)?)
    }

    /// Removes an endpoint and its deliveries (its queue, which is its
    /// position, included): nothing more is delivered to it.
    pub async fn delete_endpoint(&self, id: &str) -> Result<()> {
        self.delete_endpoint_item(id).await?;
        self.delete_deliveries(id).await
    }

    /// Deletes every delivery of `endpoint_id`, 25 at a time (a batch
    /// write's most). Run after the endpoint is gone, so the fan-out, which
    /// reads the endpoints first, makes no more for it after its current
    /// batch.
    async fn delete_deliveries(&self, endpoint_id: &str) -> Result<()> {
        loop {
            let page = self
                .store
                .query(QueryInput {
                    table: self.table.clone(),
                    index: None,
                    key_condition: deliveries::partition(endpoint_id),
                    filter: None,
                    limit: Some(25),
                    scan_index_forward: true,
                    exclusive_start_key: None,
                    consistent_read: true,
                    projection: None,
                    select: None,
                })
                .await?;
            if page.items.is_empty() {
                return Ok(());
            }
            let mut requests = page
                .items
                .iter()
                .map(|item| {
                    let id = deliveries::id_of(item)?;
                    Ok((
                        self.table.clone(),
                        WriteRequest::Delete(deliveries::key(endpoint_id, id)),
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            while !requests.is_empty() {
                requests = self
                    .store
                    .batch_write_item(BatchWriteItemInput { requests })
                    .await?
                    .unprocessed;
            }
        }
    }

    async fn delete_endpoint_item(&self, id: &str) -> Result<()> {
        let outcome = self
            .store
            .delete_item(DeleteItemInput {
                table: self.table.clone(),
                key: endpoints::key(id),
                condition: Some(endpoints::stored()),
                return_values: ReturnValues::None,
            })
            .await;
        match outcome {
            Ok(_) => Ok(()),
            Err(StoreError::ConditionalCheckFailed) => {
                Err(WebhookError::NotFound("webhook endpoint"))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// An endpoint's most recent deliveries, newest first.
    pub async fn deliveries(&self, endpoint_id: &str, limit: usize) -> Result<Vec<Delivery>> {
        self.endpoint(endpoint_id).await?;
        let page = self
            .store
            .query(QueryInput {
                table: self.table.clone(),
                index: None,
                key_condition: deliveries::partition(endpoint_id),
                filter: None,
                limit: Some(limit.clamp(1, MAX_LISTED_DELIVERIES)),
                scan_index_forward: false,
                exclusive_start_key: None,
                consistent_read: true,
                projection: None,
                select: None,
            })
            .await?;
        page.items
            .iter()
            .map(|item| Ok(deliveries::decode(item)?))
            .collect()
    }

    pub(crate) async fn delivery(&self, endpoint_id: &str, id: &str) -> Result<Option<Delivery>> {
        let item = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: deliveries::key(endpoint_id, id),
                consistent_read: true,
            })
            .await?
            .item;
        Ok(item.as_ref().map(deliveries::decode).transpose()?)
    }

    /// Delivers an event that does not come from the change stream (a
    /// review request falling due) to every endpoint subscribed to it: one
    /// pending delivery each, signed and sent by the endpoint's sender like
    /// any other. Returns how many deliveries were written.
    pub async fn publish(&self, kind: EventType, data: &serde_json::Value) -> Result<usize> {
        let now = now_ms();
        let timestamp = rave_comments::Timestamp::from_millis(now)
            .map_err(|e| WebhookError::Internal(format!("the clock: {e}")))?;
        let body = serde_json::json!({
            "type": kind.as_str(),
            "timestamp": timestamp.to_string(),
            "data": data,
        })
        .to_string();
        let mut written = 0;
        for endpoint in self.endpoints().await?.iter().filter(|e| e.wants(kind)) {
            let delivery = Delivery {
                endpoint_id: endpoint.id.clone(),
                id: self.next_id()?,
                event: kind,
                body: body.clone(),
                status: DeliveryStatus::Pending,
                attempts: 0,
                last_error: None,
                created_at_ms: now,
                next_attempt_at_ms: now,
                give_up_at_ms: now.saturating_add(self.config.retry.retry_for_ms()),
                finished_at_ms: None,
            };
            self.store
                .put_item(PutItemInput {
                    table: self.table.clone(),
                    item: deliveries::encode(&delivery),
                    condition: None,
                    return_values: ReturnValues::None,
                })
                .await?;
            written += 1;
        }
        Ok(written)
    }

    /// Sends a failed delivery again, with the same `webhook-id` and body.
    pub async fn retry_delivery(&self, endpoint_id: &str, id: &str) -> Result<Delivery> {
        let delivery = self
            .delivery(endpoint_id, id)
            .await?
            .ok_or(WebhookError::NotFound("delivery"))?;
        if delivery.status != DeliveryStatus::Failed {
            return Err(WebhookError::Conflict(format!(
                "only a failed delivery is sent again; this one is {}",
                delivery.status.as_str()
            )));
        }
        let resent = delivery.resent(now_ms(), &self.config.retry);
        self.replace(&resent, DeliveryStatus::Failed).await?;
        Ok(resent)
    }

    /// Writes `delivery` over the stored one if that one still has status
    /// `expected`: an outcome is recorded once, and a delivery an admin
    /// re-sent in between is not overwritten.
    pub(crate) async fn replace(
        &self,
        delivery: &Delivery,
        expected: DeliveryStatus,
    ) -> Result<()> {
        let outcome = self
            .store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: deliveries::encode(delivery),
                condition: Some(deliveries::still(expected)),
                return_values: ReturnValues::None,
            })
            .await;
        match outcome {
            Ok(_) => Ok(()),
            Err(StoreError::ConditionalCheckFailed) => Err(WebhookError::Conflict(
                "the delivery changed while it was being recorded".into(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// The oldest pending delivery of an endpoint: its durable position.
    pub(crate) async fn next_pending(&self, endpoint_id: &str) -> Result<Option<Delivery>> {
        let page = self
            .store
            .query(QueryInput {
                table: self.table.clone(),
                index: Some(table::QUEUE_INDEX.into()),
                key_condition: deliveries::queue(endpoint_id),
                filter: None,
                limit: Some(1),
                scan_index_forward: true,
                exclusive_start_key: None,
                consistent_read: false,
                projection: None,
                select: None,
            })
            .await?;
        let Some(entry) = page.items.first() else {
            return Ok(None);
        };
        // The index is eventually consistent on DynamoDB: the table says
        // whether the entry is still pending.
        let id = deliveries::id_of(entry)?.to_owned();
        Ok(self
            .delivery(endpoint_id, &id)
            .await?
            .filter(|d| d.status == DeliveryStatus::Pending))
    }
}

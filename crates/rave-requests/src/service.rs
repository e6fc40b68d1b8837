//! `Requests`: orders in, their requests scheduled, reviews and opt-outs
//! recorded, listings for the admin, erasure.

use std::sync::Arc;

use rave_store::{
    BatchWriteItemInput, GetItemInput, Item, Page, PutItemInput, QueryInput, ReturnValues, Store,
    StoreError, TransactWriteAction, TransactWriteItemsInput, Update, UpdateItemInput,
    WriteRequest,
};

use crate::clock::Clock;
use crate::error::{RequestsError, Result};
use crate::model::{Order, Request, RequestKind, RequestStatus, Schedule};
use crate::table::{self, StoredRequest, figures, opt_outs, orders, requests, reviews};

/// What putting an order did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderPut {
    Created,
    /// Its delivery (or products) changed: the requests not yet sent are
    /// due anew.
    Rescheduled,
    Unchanged,
}

/// A page of requests of one status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPage {
    pub requests: Vec<Request>,
    /// Where the next page starts; `None` at the end.
    pub next: Option<Request>,
}

/// Requests made and reviews received for one product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductFigures {
    pub product: String,
    pub requested: u64,
    pub reviewed: u64,
}

#[derive(Debug)]
pub struct Requests<S> {
    pub(crate) store: S,
    pub(crate) table: String,
    pub(crate) schedule: Schedule,
    pub(crate) clock: Arc<dyn Clock>,
}

impl<S: Store> Requests<S> {
    pub fn new(
        store: S,
        comments_table: &str,
        schedule: Schedule,
        clock: Arc<dyn Clock>,
    ) -> Requests<S> {
        Requests {
            store,
            table: table::table_name(comments_table),
            schedule,
            clock,
        }
    }

    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Creates the requests table unless it exists.
    pub async fn ensure_table(&self) -> Result<()> {
        rave_store::ensure_table(&self.store, table::table_definition(&self.table))
            .await
            .map_err(Into::into)
    }

    /// Every item of an order's partition.
    pub(crate) async fn order_items(&self, order_id: &str) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let mut input = QueryInput::new(self.table.clone(), None, table::partition(order_id));
            input.consistent_read = true;
            input.exclusive_start_key = start;
            let Page {
                items: page,
                last_evaluated_key,
                ..
            } = self.store.query(input).await?;
            items.extend(page);
            match last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(items),
            }
        }
    }

    pub async fn order(&self, order_id: &str) -> Result<Option<Order>> {
        let found = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: orders::key(order_id),
                consistent_read: true,
            })
            .await?;
        found.item.as_ref().map(orders::decode).transpose()
    }

    /// Stores an order (idempotent per id) and schedules its requests; a
    /// new delivery time reschedules the requests not sent yet. `order` is
    /// validated against the clock first.
    pub async fn put_order(&self, order: Order) -> Result<OrderPut> {
        let order = order.validate(self.now_ms())?;
        let items = self.order_items(&order.id).await?;
        let old_order = items
            .iter()
            .find(|item| orders::is_order(item))
            .map(orders::decode)
            .transpose()?;
        if old_order.as_ref() == Some(&order) {
            return Ok(OrderPut::Unchanged);
        }
        let mut old_requests = Vec::new();
        for item in items.iter().filter(|item| requests::is_request(item)) {
            old_requests.push(requests::decode(item)?);
        }
        let mut actions = vec![TransactWriteAction::Put {
            table: self.table.clone(),
            item: orders::encode(&order),
            condition: None,
        }];
        for kind in [RequestKind::First, RequestKind::Reminder] {
            let old = old_requests.iter().find(|r| r.request.kind == kind);
            if old.is_some_and(|old| old.request.status != RequestStatus::Scheduled) {
                continue;
            }
            let Some(due_at_ms) = self.schedule.due_at(kind, order.delivered_at_ms) else {
                continue;
            };
            let stored = StoredRequest {
                request: Request {
                    order_id: order.id.clone(),
                    kind,
                    status: RequestStatus::Scheduled,
                    due_at_ms,
                    attempts: 0,
                    first_attempt_ms: None,
                    sent_at_ms: None,
                    last_error: None,
                    skipped_because: None,
                },
                claim_until_ms: None,
                version: old.map_or(1, |old| old.version + 1),
            };
            actions.push(TransactWriteAction::Put {
                table: self.table.clone(),
                item: requests::encode(&stored),
                condition: Some(requests::unchanged_since(old)),
            });
        }
        self.store
            .transact_write_items(TransactWriteItemsInput { actions })
            .await
            .map_err(|e| match e {
                StoreError::TransactionCanceled(_) => RequestsError::Unavailable {
                    detail: "the order changed while it was stored".into(),
                    retry_after: std::time::Duration::from_secs(1),
                },
                other => other.into(),
            })?;
        Ok(match old_order {
            None => OrderPut::Created,
            Some(_) => OrderPut::Rescheduled,
        })
    }

    /// Cancels an order: it and its requests are gone, nothing more is sent.
    pub async fn cancel_order(&self, order_id: &str) -> Result<()> {
        let items = self.order_items(order_id).await?;
        if !items.iter().any(orders::is_order) {
            return Err(RequestsError::NotFound("order"));
        }
        self.delete_items(items).await
    }

    async fn delete_items(&self, items: Vec<Item>) -> Result<()> {
        for chunk in items.chunks(25) {
            let mut pending: Vec<(String, WriteRequest)> = chunk
                .iter()
                .map(|item| {
                    (
                        self.table.clone(),
                        WriteRequest::Delete(table::primary_key(item)),
                    )
                })
                .collect();
            while !pending.is_empty() {
                let output = self
                    .store
                    .batch_write_item(BatchWriteItemInput { requests: pending })
                    .await?;
                pending = output.unprocessed;
            }
        }
        Ok(())
    }

    /// From now on nothing is sent to the address of `order_id`'s order.
    pub async fn unsubscribe(&self, order_id: &str) -> Result<()> {
        let Some(order) = self.order(order_id).await? else {
            // Erased or cancelled: nothing will be sent to it anyway.
            return Ok(());
        };
        self.opt_out(&order.email).await
    }

    /// From now on nothing is sent to `email`.
    pub async fn opt_out(&self, email: &str) -> Result<()> {
        self.store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: opt_outs::encode(email, self.now_ms()),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        Ok(())
    }

    pub(crate) async fn opted_out(&self, email: &str) -> Result<bool> {
        let found = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: opt_outs::key(email),
                consistent_read: true,
            })
            .await?;
        Ok(found.item.is_some())
    }

    /// Records that `product` of `order_id` was reviewed through the
    /// order's link (no reminder then; counted in the product's figures).
    pub async fn record_review(
        &self,
        order_id: &str,
        product: &str,
        author: &str,
        comment_id: &str,
    ) -> Result<()> {
        self.store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: reviews::encode(order_id, product, author, comment_id, self.now_ms()),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        self.count(product, table::REVIEWED).await
    }

    pub(crate) async fn count(&self, product: &str, figure: &str) -> Result<()> {
        self.store
            .update_item(UpdateItemInput {
                table: self.table.clone(),
                key: figures::key(product),
                update: Update::new().add(figure, 1i64),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        Ok(())
    }

    /// An order and the products of it already reviewed through its link,
    /// from one read of the order's partition.
    pub async fn order_with_reviews(&self, order_id: &str) -> Result<Option<(Order, Vec<String>)>> {
        let items = self.order_items(order_id).await?;
        let Some(order) = items.iter().find(|item| orders::is_order(item)) else {
            return Ok(None);
        };
        let reviewed = items
            .iter()
            .filter_map(reviews::product_of)
            .map(str::to_owned)
            .collect();
        Ok(Some((orders::decode(order)?, reviewed)))
    }

    /// Erases every order an author reviewed through (with its address,
    /// requests and reviews); returns how many.
    pub async fn erase_author(&self, author: &str) -> Result<u64> {
        let mut order_ids = Vec::new();
        let mut start = None;
        loop {
            let mut input = QueryInput::new(
                self.table.clone(),
                Some(table::AUTHOR_INDEX),
                reviews::by_author(author),
            );
            input.exclusive_start_key = start;
            let page = self.store.query(input).await?;
            for item in &page.items {
                order_ids.push(table::order_id_of(item)?);
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => break,
            }
        }
        order_ids.sort();
        order_ids.dedup();
        for order_id in &order_ids {
            let items = self.order_items(order_id).await?;
            self.delete_items(items).await?;
        }
        Ok(order_ids.len() as u64)
    }

    /// A page of requests of one status, in due order.
    pub async fn requests(
        &self,
        status: RequestStatus,
        limit: usize,
        after: Option<&Request>,
    ) -> Result<RequestPage> {
        let mut input = QueryInput::new(
            self.table.clone(),
            Some(table::STATUS_INDEX),
            requests::with_status(status, None),
        );
        input.limit = Some(limit);
        input.exclusive_start_key = after.map(requests::start_after);
        let page = self.store.query(input).await?;
        let found: Vec<Request> = page
            .items
            .iter()
            .map(|item| requests::decode(item).map(|stored| stored.request))
            .collect::<Result<_>>()?;
        let next = match page.last_evaluated_key {
            Some(_) => found.last().cloned(),
            None => None,
        };
        Ok(RequestPage {
            requests: found,
            next,
        })
    }

    pub(crate) async fn request(
        &self,
        order_id: &str,
        kind: RequestKind,
    ) -> Result<Option<StoredRequest>> {
        let found = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: requests::key(order_id, kind),
                consistent_read: true,
            })
            .await?;
        found.item.as_ref().map(requests::decode).transpose()
    }

    /// Requests made and reviews received, per product.
    pub async fn figures(&self) -> Result<Vec<ProductFigures>> {
        let mut found = Vec::new();
        let mut start = None;
        loop {
            let mut input = QueryInput::new(self.table.clone(), None, figures::partition());
            input.exclusive_start_key = start;
            let page = self.store.query(input).await?;
            for item in &page.items {
                let (product, requested, reviewed) = figures::decode(item)?;
                found.push(ProductFigures {
                    product,
                    requested,
                    reviewed,
                });
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(found),
            }
        }
    }
}

//! The domain's one door to the store. Every request names the domain's
//! table, is retried (bounded, with jittered backoff) when the store says a
//! later attempt may succeed — throttling, a conflicting transaction,
//! unavailable storage, unprocessed batch items — and has the capacity it
//! consumed counted (`usage`). The retry is `rave_store::Retry`, so the
//! domain retries exactly the kinds the store calls retryable.
//!
//! A retried conditional write can meet its own earlier attempt when that
//! attempt's outcome was unknown (a timeout on DynamoDB): callers treat a
//! failed condition after a retry as they would any failed condition.

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::try_join_all;
use rave_store::{
    BatchGetItemInput, BatchWriteItemInput, CancellationReason, Condition, DeleteItemInput,
    GetItemInput, Item, ItemView, ItemVisitor, MAX_BATCH_GET_KEYS, MAX_BATCH_WRITE_REQUESTS, Page,
    PutItemInput, QueryInput, Result, Retry, ReturnValues, ScanInput, Store, StoreError,
    TableDefinition, TableKeys, TransactWriteAction, TransactWriteItemsInput, WriteRequest,
};

use crate::usage::Usage;

#[derive(Debug)]
pub(crate) struct TableAccess<S> {
    store: S,
    table: String,
    usage: Usage,
    retry: Retry,
}

impl<S: Store> TableAccess<S> {
    pub(crate) fn new(store: S, table: String) -> TableAccess<S> {
        TableAccess {
            store,
            table,
            usage: Usage::default(),
            retry: Retry::default(),
        }
    }

    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    pub(crate) fn usage(&self) -> &Usage {
        &self.usage
    }

    pub(crate) async fn describe(&self) -> Result<TableDefinition> {
        self.retry
            .run(|| self.store.describe_table(&self.table))
            .await
    }

    pub(crate) async fn create(&self, definition: TableDefinition) -> Result<()> {
        self.retry
            .run(|| self.store.create_table(definition.clone()))
            .await
    }

    /// One item by key, and the read units it cost.
    pub(crate) async fn get(
        &self,
        key: Item,
        consistent_read: bool,
    ) -> Result<(Option<Item>, f64)> {
        let input = GetItemInput {
            table: self.table.clone(),
            key,
            consistent_read,
        };
        let out = self
            .retry
            .run(|| self.store.get_item(input.clone()))
            .await?;
        self.usage
            .add_read(out.consumed.read_units, usize::from(out.item.is_some()));
        Ok((out.item, out.consumed.read_units))
    }

    /// A GetItem whose item `read` turns into a `T` as the store shows it
    /// (in place, on the embedded engine): for a read that wants a few
    /// attributes of a large item, and need not build it.
    pub(crate) async fn get_reading<T: Send + 'static>(
        &self,
        key: Item,
        consistent_read: bool,
        read: impl Fn(&dyn ItemView) -> T + Clone + Send + 'static,
    ) -> Result<(Option<T>, f64)> {
        let input = GetItemInput {
            table: self.table.clone(),
            key,
            consistent_read,
        };
        let (out, made) = self
            .retry
            .run(|| {
                let (made, visitor) = collector(read.clone(), 1);
                let input = input.clone();
                async move {
                    let out = self.store.get_item_visiting(input, visitor).await?;
                    Ok((out, made.take().pop()))
                }
            })
            .await?;
        self.usage
            .add_read(out.consumed.read_units, usize::from(made.is_some()));
        Ok((made, out.consumed.read_units))
    }

    pub(crate) async fn put(&self, item: Item, condition: Option<Condition>) -> Result<()> {
        let input = PutItemInput {
            table: self.table.clone(),
            item,
            condition,
            return_values: ReturnValues::None,
        };
        let out = self
            .retry
            .run(|| self.store.put_item(input.clone()))
            .await?;
        self.usage.add_write(&[out.consumed]);
        Ok(())
    }

    pub(crate) async fn delete(&self, key: Item, condition: Option<Condition>) -> Result<()> {
        let input = DeleteItemInput {
            table: self.table.clone(),
            key,
            condition,
            return_values: ReturnValues::None,
        };
        let out = self
            .retry
            .run(|| self.store.delete_item(input.clone()))
            .await?;
        self.usage.add_write(&[out.consumed]);
        Ok(())
    }

    pub(crate) async fn transact(&self, actions: Vec<TransactWriteAction>) -> Result<()> {
        let input = TransactWriteItemsInput { actions };
        let out = self
            .retry
            .run(|| self.store.transact_write_items(input.clone()))
            .await?;
        self.usage.add_write(&out.consumed);
        Ok(())
    }

    /// A put action of a transaction on the domain's table.
    pub(crate) fn put_action(
        &self,
        item: Item,
        condition: Option<Condition>,
    ) -> TransactWriteAction {
        TransactWriteAction::Put {
            table: self.table.clone(),
            item,
            condition,
        }
    }

    /// A delete action of a transaction on the domain's table.
    pub(crate) fn delete_action(
        &self,
        key: Item,
        condition: Option<Condition>,
    ) -> TransactWriteAction {
        TransactWriteAction::Delete {
            table: self.table.clone(),
            key,
            condition,
        }
    }

    /// `writes` as the actions of one transaction, `condition` on the first.
    pub(crate) fn write_actions(
        &self,
        writes: Vec<WriteRequest>,
        mut condition: Option<Condition>,
    ) -> Vec<TransactWriteAction> {
        writes
            .into_iter()
            .map(|write| match write {
                WriteRequest::Put(item) => self.put_action(item, condition.take()),
                WriteRequest::Delete(key) => self.delete_action(key, condition.take()),
            })
            .collect()
    }

    /// `writes` as one store write, `condition` on the first: that write
    /// alone when it is the only one, a transaction otherwise. Either way a
    /// failed `condition` is `ConditionalCheckFailed`.
    pub(crate) async fn write_together(
        &self,
        mut writes: Vec<WriteRequest>,
        condition: Option<Condition>,
    ) -> Result<()> {
        if writes.len() == 1 {
            return match writes.remove(0) {
                WriteRequest::Put(item) => self.put(item, condition).await,
                WriteRequest::Delete(key) => self.delete(key, condition).await,
            };
        }
        match self.transact(self.write_actions(writes, condition)).await {
            Err(StoreError::TransactionCanceled(reasons))
                if reasons.first() == Some(&CancellationReason::ConditionalCheckFailed) =>
            {
                Err(StoreError::ConditionalCheckFailed)
            }
            done => done,
        }
    }

    /// A condition on an item the transaction does not write.
    pub(crate) fn condition_check_action(
        &self,
        key: Item,
        condition: Condition,
    ) -> TransactWriteAction {
        TransactWriteAction::ConditionCheck {
            table: self.table.clone(),
            key,
            condition,
        }
    }

    pub(crate) fn query_input(
        &self,
        index: Option<&str>,
        key_condition: rave_store::KeyCondition,
    ) -> QueryInput {
        QueryInput::new(&self.table, index, key_condition)
    }

    pub(crate) async fn query(&self, input: QueryInput) -> Result<Page> {
        let page = self.retry.run(|| self.store.query(input.clone())).await?;
        self.usage
            .add_read(page.consumed.read_units, page.scanned_count);
        Ok(page)
    }

    /// A Query whose items `read` turns into `T`s, in the page's order, as
    /// the store shows them (in place, on the embedded engine); the page
    /// itself holds no items.
    pub(crate) async fn query_reading<T: Send + 'static>(
        &self,
        input: QueryInput,
        read: impl Fn(&dyn ItemView) -> T + Clone + Send + 'static,
    ) -> Result<(Page, Vec<T>)> {
        let (page, items) = self
            .retry
            .run(|| {
                let input = input.clone();
                // Sized for the page up front: a listing's items are large
                // structs, and growing the vector would copy them.
                let (made, visitor) = collector(read.clone(), input.limit.unwrap_or(0));
                async move {
                    let page = self.store.query_visiting(input, visitor).await?;
                    Ok((page, made.take()))
                }
            })
            .await?;
        self.usage
            .add_read(page.consumed.read_units, page.scanned_count);
        Ok((page, items))
    }

    /// One page of a scan of the whole table, or of one segment of it.
    pub(crate) async fn scan(
        &self,
        segment: rave_store::Segment,
        limit: usize,
        consistent_read: bool,
        exclusive_start_key: Option<Item>,
    ) -> Result<Page> {
        let mut input = ScanInput::new(self.table.clone());
        input.segment = Some(segment);
        input.limit = Some(limit);
        input.consistent_read = consistent_read;
        input.exclusive_start_key = exclusive_start_key;
        let page = self.retry.run(|| self.store.scan(input.clone())).await?;
        self.usage
            .add_read(page.consumed.read_units, page.scanned_count);
        Ok(page)
    }

    /// Every item of `keys` that exists (strongly consistent).
    pub(crate) async fn get_many(&self, keys: &[Item]) -> Result<Vec<Item>> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(MAX_BATCH_GET_KEYS) {
            let requests = vec![TableKeys {
                table: self.table.clone(),
                keys: chunk.to_vec(),
                consistent_read: true,
            }];
            let batch = self
                .retry
                .run_batch(requests, |pending| {
                    let round = self
                        .store
                        .batch_get_item(BatchGetItemInput { requests: pending });
                    async move {
                        let out = round.await?;
                        Ok(((out.responses, out.consumed), out.unprocessed))
                    }
                })
                .await?;
            for (responses, consumed) in batch.outputs {
                let units: f64 = consumed.iter().map(|c| c.read_units).sum();
                let items: Vec<Item> = responses.into_iter().flat_map(|(_, items)| items).collect();
                self.usage.add_read(units, items.len());
                found.extend(items);
            }
            left_over(batch.unprocessed.iter().map(|t| t.keys.len()).sum())?;
        }
        Ok(found)
    }

    /// Writes `requests` in batches of 25, sent together: a store that
    /// groups concurrent writes into one commit (the embedded engine does)
    /// writes them at once.
    pub(crate) async fn write_many(&self, requests: Vec<WriteRequest>) -> Result<()> {
        let batches = requests
            .chunks(MAX_BATCH_WRITE_REQUESTS)
            .map(|chunk| async move {
                let requests: Vec<(String, WriteRequest)> = chunk
                    .iter()
                    .map(|request| (self.table.clone(), request.clone()))
                    .collect();
                let batch = self
                    .retry
                    .run_batch(requests, |pending| {
                        let round = self
                            .store
                            .batch_write_item(BatchWriteItemInput { requests: pending });
                        async move {
                            let out = round.await?;
                            Ok((out.consumed, out.unprocessed))
                        }
                    })
                    .await?;
                for consumed in &batch.outputs {
                    self.usage.add_write(consumed);
                }
                left_over(batch.unprocessed.len())
            });
        try_join_all(batches).await?;
        Ok(())
    }
}

/// What a visiting read's visitor made of the items it was shown, in
/// order.
struct Collected<T>(Arc<Mutex<Vec<T>>>);

impl<T> Collected<T> {
    fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A visitor that keeps what `read` makes of each item it is shown, and
/// where it keeps it.
fn collector<T: Send + 'static>(
    read: impl Fn(&dyn ItemView) -> T + Send + 'static,
    capacity: usize,
) -> (Collected<T>, ItemVisitor) {
    let made = Arc::new(Mutex::new(Vec::with_capacity(capacity)));
    let sink = made.clone();
    let visitor: ItemVisitor = Box::new(move |item| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(read(item));
    });
    (Collected(made), visitor)
}

/// Requests a batch still had unprocessed when its attempts were spent: the
/// store is throttling harder than the retries could wait out.
fn left_over(unprocessed: usize) -> Result<()> {
    match unprocessed {
        0 => Ok(()),
        left => Err(StoreError::Throttled(format!(
            "{left} requests still unprocessed after every retry"
        ))),
    }
}

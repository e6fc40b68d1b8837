//! A type-erased [`Store`], so that code above the storage layer (the HTTP
//! server) can be written once, not once per backend, and the backend can
//! be chosen at run time.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::Result;
use crate::ops::{
    BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput, BatchWriteItemOutput,
    DeleteItemInput, GetItemInput, GetItemOutput, Page, PutItemInput, QueryInput, ScanInput,
    TransactWriteItemsInput, TransactWriteItemsOutput, UpdateItemInput, WriteOutput,
};
use crate::schema::TableDefinition;
use crate::store::Store;
use crate::view::ItemVisitor;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Store`] with boxed futures, which makes it usable as a trait object.
trait DynStore: Send + Sync {
    fn create_table(&self, definition: TableDefinition) -> BoxFuture<'_, Result<()>>;
    fn describe_table(&self, table: String) -> BoxFuture<'_, Result<TableDefinition>>;
    fn get_item(&self, input: GetItemInput) -> BoxFuture<'_, Result<GetItemOutput>>;
    fn get_item_visiting(
        &self,
        input: GetItemInput,
        visit: ItemVisitor,
    ) -> BoxFuture<'_, Result<GetItemOutput>>;
    fn put_item(&self, input: PutItemInput) -> BoxFuture<'_, Result<WriteOutput>>;
    fn update_item(&self, input: UpdateItemInput) -> BoxFuture<'_, Result<WriteOutput>>;
    fn delete_item(&self, input: DeleteItemInput) -> BoxFuture<'_, Result<WriteOutput>>;
    fn query(&self, input: QueryInput) -> BoxFuture<'_, Result<Page>>;
    fn query_visiting(&self, input: QueryInput, visit: ItemVisitor) -> BoxFuture<'_, Result<Page>>;
    fn scan(&self, input: ScanInput) -> BoxFuture<'_, Result<Page>>;
    fn batch_get_item(&self, input: BatchGetItemInput)
    -> BoxFuture<'_, Result<BatchGetItemOutput>>;
    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> BoxFuture<'_, Result<BatchWriteItemOutput>>;
    fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> BoxFuture<'_, Result<TransactWriteItemsOutput>>;
}

impl<S: Store> DynStore for S {
    fn create_table(&self, definition: TableDefinition) -> BoxFuture<'_, Result<()>> {
        Box::pin(Store::create_table(self, definition))
    }
    fn describe_table(&self, table: String) -> BoxFuture<'_, Result<TableDefinition>> {
        Box::pin(async move { Store::describe_table(self, &table).await })
    }
    fn get_item(&self, input: GetItemInput) -> BoxFuture<'_, Result<GetItemOutput>> {
        Box::pin(Store::get_item(self, input))
    }
    fn get_item_visiting(
        &self,
        input: GetItemInput,
        visit: ItemVisitor,
    ) -> BoxFuture<'_, Result<GetItemOutput>> {
        Box::pin(Store::get_item_visiting(self, input, visit))
    }
    fn put_item(&self, input: PutItemInput) -> BoxFuture<'_, Result<WriteOutput>> {
        Box::pin(Store::put_item(self, input))
    }
    fn update_item(&self, input: UpdateItemInput) -> BoxFuture<'_, Result<WriteOutput>> {
        Box::pin(Store::update_item(self, input))
    }
    fn delete_item(&self, input: DeleteItemInput) -> BoxFuture<'_, Result<WriteOutput>> {
        Box::pin(Store::delete_item(self, input))
    }
    fn query(&self, input: QueryInput) -> BoxFuture<'_, Result<Page>> {
        Box::pin(Store::query(self, input))
    }
    fn query_visiting(&self, input: QueryInput, visit: ItemVisitor) -> BoxFuture<'_, Result<Page>> {
        Box::pin(Store::query_visiting(self, input, visit))
    }
    fn scan(&self, input: ScanInput) -> BoxFuture<'_, Result<Page>> {
        Box::pin(Store::scan(self, input))
    }
    fn batch_get_item(
        &self,
        input: BatchGetItemInput,
    ) -> BoxFuture<'_, Result<BatchGetItemOutput>> {
        Box::pin(Store::batch_get_item(self, input))
    }
    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> BoxFuture<'_, Result<BatchWriteItemOutput>> {
        Box::pin(Store::batch_write_item(self, input))
    }
    fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> BoxFuture<'_, Result<TransactWriteItemsOutput>> {
        Box::pin(Store::transact_write_items(self, input))
    }
}

/// Any backend behind one type. Cheap to clone.
#[derive(Clone)]
pub struct SharedStore(Arc<dyn DynStore>);

impl SharedStore {
    pub fn new(store: impl Store) -> SharedStore {
        SharedStore(Arc::new(store))
    }
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedStore")
    }
}

impl Store for SharedStore {
    fn create_table(&self, definition: TableDefinition) -> impl Future<Output = Result<()>> + Send {
        self.0.create_table(definition)
    }
    fn describe_table(&self, table: &str) -> impl Future<Output = Result<TableDefinition>> + Send {
        self.0.describe_table(table.to_owned())
    }
    fn get_item(&self, input: GetItemInput) -> impl Future<Output = Result<GetItemOutput>> + Send {
        self.0.get_item(input)
    }
    fn get_item_visiting(
        &self,
        input: GetItemInput,
        visit: ItemVisitor,
    ) -> impl Future<Output = Result<GetItemOutput>> + Send {
        self.0.get_item_visiting(input, visit)
    }
    fn put_item(&self, input: PutItemInput) -> impl Future<Output = Result<WriteOutput>> + Send {
        self.0.put_item(input)
    }
    fn update_item(
        &self,
        input: UpdateItemInput,
    ) -> impl Future<Output = Result<WriteOutput>> + Send {
        self.0.update_item(input)
    }
    fn delete_item(
        &self,
        input: DeleteItemInput,
    ) -> impl Future<Output = Result<WriteOutput>> + Send {
        self.0.delete_item(input)
    }
    fn query(&self, input: QueryInput) -> impl Future<Output = Result<Page>> + Send {
        self.0.query(input)
    }
    fn query_visiting(
        &self,
        input: QueryInput,
        visit: ItemVisitor,
    ) -> impl Future<Output = Result<Page>> + Send {
        self.0.query_visiting(input, visit)
    }
    fn scan(&self, input: ScanInput) -> impl Future<Output = Result<Page>> + Send {
        self.0.scan(input)
    }
    fn batch_get_item(
        &self,
        input: BatchGetItemInput,
    ) -> impl Future<Output = Result<BatchGetItemOutput>> + Send {
        self.0.batch_get_item(input)
    }
    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> impl Future<Output = Result<BatchWriteItemOutput>> + Send {
        self.0.batch_write_item(input)
    }
    fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> impl Future<Output = Result<TransactWriteItemsOutput>> + Send {
        self.0.transact_write_items(input)
    }
}

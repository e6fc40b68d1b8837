//! The [`Store`] trait: the one interface the comments domain speaks
//! DynamoDB's data model through, implemented by the embedded engine, the
//! AWS SDK client and (type-erased) [`crate::SharedStore`].
//!
//! `query_visiting` is a Query whose items go to a visitor instead of into
//! the page, and `get_item_visiting` the same for a GetItem. Their defaults
//! visit the items of an ordinary answer, which is all a backend that
//! receives items over the wire can do (the DynamoDB backend, dynoxide in
//! the bench). The engine overrides them to show the visitor each stored
//! item in place, so a listing page builds no attribute map per comment,
//! and a product's revision, read on every request for its pages, builds
//! none of its statistics item; `SharedStore` forwards them, so the
//! overrides survive type erasure.

use std::future::Future;

use crate::error::Result;
use crate::ops::{
    BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput, BatchWriteItemOutput,
    DeleteItemInput, GetItemInput, GetItemOutput, Page, PutItemInput, QueryInput, ScanInput,
    TransactWriteItemsInput, TransactWriteItemsOutput, UpdateItemInput, WriteOutput,
};
use crate::schema::TableDefinition;
use crate::view::ItemVisitor;

/// DynamoDB's operations, as the domain uses them.
///
/// Every call reports the capacity it consumed. Implementations must agree
/// on every observable behaviour; the conformance suite runs the same cases
/// against each of them.
pub trait Store: Send + Sync + 'static {
    /// Creates a table; `ResourceInUse` if it exists.
    fn create_table(&self, definition: TableDefinition) -> impl Future<Output = Result<()>> + Send;
    /// The definition of an existing table; `ResourceNotFound` otherwise.
    fn describe_table(&self, table: &str) -> impl Future<Output = Result<TableDefinition>> + Send;
    fn get_item(&self, input: GetItemInput) -> impl Future<Output = Result<GetItemOutput>> + Send;
    /// A GetItem whose item, if there is one, goes to `visit` instead of
    /// into the output (whose `item` is then `None`; the capacity is what
    /// [`Store::get_item`] reports). Overridden as [`Store::query_visiting`]
    /// is.
    fn get_item_visiting(
        &self,
        input: GetItemInput,
        mut visit: ItemVisitor,
    ) -> impl Future<Output = Result<GetItemOutput>> + Send {
        async move {
            let mut output = self.get_item(input).await?;
            if let Some(item) = output.item.take() {
                visit(&item);
            }
            Ok(output)
        }
    }
    fn put_item(&self, input: PutItemInput) -> impl Future<Output = Result<WriteOutput>> + Send;
    fn update_item(
        &self,
        input: UpdateItemInput,
    ) -> impl Future<Output = Result<WriteOutput>> + Send;
    fn delete_item(
        &self,
        input: DeleteItemInput,
    ) -> impl Future<Output = Result<WriteOutput>> + Send;
    fn query(&self, input: QueryInput) -> impl Future<Output = Result<Page>> + Send;
    /// A Query whose kept items go to `visit`, in order, instead of into
    /// the page (whose `items` is then empty; everything else is as
    /// [`Store::query`] returns it). A backend that can show its stored
    /// items without building them overrides this; the others visit the
    /// items of an ordinary page.
    fn query_visiting(
        &self,
        input: QueryInput,
        mut visit: ItemVisitor,
    ) -> impl Future<Output = Result<Page>> + Send {
        async move {
            let mut page = self.query(input).await?;
            for item in page.items.drain(..) {
                visit(&item);
            }
            Ok(page)
        }
    }
    fn scan(&self, input: ScanInput) -> impl Future<Output = Result<Page>> + Send;
    fn batch_get_item(
        &self,
        input: BatchGetItemInput,
    ) -> impl Future<Output = Result<BatchGetItemOutput>> + Send;
    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> impl Future<Output = Result<BatchWriteItemOutput>> + Send;
    fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> impl Future<Output = Result<TransactWriteItemsOutput>> + Send;
}

/// Creates `definition`'s table unless a table of that name exists (made
/// by this process, another one, or an operator): what every owner of a
/// table does at start.
pub async fn ensure_table<S: Store>(store: &S, definition: TableDefinition) -> Result<()> {
    match store.describe_table(&definition.name).await {
        Ok(_) => Ok(()),
        Err(crate::error::StoreError::ResourceNotFound(_)) => {
            match store.create_table(definition).await {
                Ok(()) | Err(crate::error::StoreError::ResourceInUse(_)) => Ok(()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

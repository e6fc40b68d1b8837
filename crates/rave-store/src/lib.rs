//! rave's storage model.
//!
//! The comments domain speaks DynamoDB's data model through the [`Store`]
//! trait, and two backends implement it: rave's embedded engine and the AWS
//! SDK client. This crate holds what they share: attribute values with
//! DynamoDB's number semantics, table definitions, typed expressions with
//! their evaluation rules, request and response types, capacity formulas and
//! the error kinds.

mod bound;
mod capacity;
mod error;
mod expr;
mod feed;
mod number;
mod ops;
mod parse;
mod position;
mod render;
mod retry;
mod schema;
mod shared;
mod value;
mod view;

use std::future::Future;

pub use bound::BoundKeyCondition;
pub use capacity::{
    ConsumedCapacity, READ_UNIT_BYTES, WRITE_UNIT_BYTES, add_by_table, read_units, write_units,
};
pub use error::{CancellationReason, Result, StoreError, WriteFailure};
pub use expr::{
    Comparator, Condition, KeyCondition, Operand, Path, PathElement, SetValue, SortKeyCondition,
    SortOp, Update, UpdateError, UpdateOperand, order, project,
};
pub use feed::{ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, KeyFilter, MAX_EFFECTS_PER_COMMIT};
pub use number::{Number, NumberError};
pub use ops::{
    BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput, BatchWriteItemOutput,
    DeleteItemInput, GetItemInput, GetItemOutput, MAX_BATCH_GET_BYTES, MAX_BATCH_GET_KEYS,
    MAX_BATCH_WRITE_REQUESTS, MAX_PAGE_BYTES, MAX_TRANSACT_ACTIONS, MAX_TRANSACTION_BYTES, Page,
    PutItemInput, QueryInput, ReturnValues, ReturnValuesOnConditionCheckFailure, ScanInput,
    Segment, Select, TableKeys, TransactWriteAction, TransactWriteItemsInput,
    TransactWriteItemsOutput, UpdateItemInput, WriteOutput, WriteRequest,
};
pub use parse::{DocumentPath, ExpressionError, ExpressionKind, ExpressionParser, PlaceholderMap};
pub use position::PositionLayout;
pub use render::{Placeholders, Renderer};
pub use retry::{Batch, Retry};
pub use schema::{
    GlobalSecondaryIndex, IndexDrift, KeyAttribute, KeySchema, KeyType, LocalSecondaryIndex,
    MAX_INDEX_KEY_ATTRIBUTES, MAX_KEY_ATTRIBUTE_NAME_BYTES, MAX_LOCAL_SECONDARY_INDEXES,
    MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, Projection, SORT_KEY_TOO_LONG, TableDefinition,
    empty_key_value, key_value_bytes, valid_time_to_live_attribute,
};
pub use shared::SharedStore;
pub use value::{
    AttributeType, AttributeValue, Item, MAX_ATTRIBUTE_NAME_BYTES, MAX_ITEM_SIZE,
    MAX_NESTING_LEVELS, check_attribute_name, item_size, validate_attributes,
};
pub use view::{AttributeRef, ItemView, ItemVisitor};

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

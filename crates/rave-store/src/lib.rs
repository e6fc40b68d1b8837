//! rave's storage model.
//!
//! The comments domain speaks DynamoDB's data model through the [`Store`]
//! trait, and two backends implement it: rave's embedded engine and the AWS
//! SDK client. This crate holds what they share: attribute values with
//! DynamoDB's number semantics, table definitions, typed expressions with
//! their evaluation rules, request and response types, capacity formulas and
//! the error kinds.
//!
//! It does no I/O: everything here is data and the rules over it, shared
//! by whatever stores or serves the data (the engine evaluates these
//! expressions and charges these units; the DynamoDB-compatible endpoint
//! parses into these trees; the SDK client renders them). The one thing it
//! waits on is `Retry`'s timer.

#![warn(unreachable_pub)]

mod bound;
mod capacity;
mod error;
mod expr;
mod feed;
mod number;
mod ops;
mod parse;
mod partiql;
mod position;
mod render;
mod requests;
mod retry;
mod schema;
mod shared;
mod store;
mod value;
mod view;

pub use bound::BoundKeyCondition;
pub use capacity::{ConsumedCapacity, add_by_table, read_units, write_units};
pub use error::{CancellationReason, Result, StoreError, WriteFailure};
pub use expr::{
    Comparator, Condition, KeyCondition, Operand, Path, PathElement, SetValue, SortKeyCondition,
    SortOp, Update, UpdateError, UpdateOperand, order, project,
};
pub use feed::{ChangeBatch, ChangeFeed, ChangeRecord, FeedLag, KeyFilter};
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
pub use partiql::{PartiqlError, Statement, StatementKind};
pub use position::PositionLayout;
pub use render::Renderer;
pub use requests::RequestExpressions;
pub use retry::{Batch, Retry};
pub use schema::{
    GlobalSecondaryIndex, IndexDrift, KeyAttribute, KeySchema, KeyType, LocalSecondaryIndex,
    MAX_INDEX_KEY_ATTRIBUTES, MAX_KEY_ATTRIBUTE_NAME_BYTES, MAX_LOCAL_SECONDARY_INDEXES,
    MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, Projection, SORT_KEY_TOO_LONG, TableDefinition,
    empty_key_value, key_value_bytes, valid_time_to_live_attribute,
};
pub use shared::SharedStore;
pub use store::{Store, ensure_table};
pub use value::{
    AttributeType, AttributeValue, Item, MAX_ATTRIBUTE_NAME_BYTES, MAX_ITEM_SIZE, item_size,
    validate_attributes,
};
pub use view::{AttributeRef, ItemView, ItemVisitor};

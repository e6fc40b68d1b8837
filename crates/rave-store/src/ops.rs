//! Request and response types, one pair per DynamoDB operation.
//!
//! Field names follow DynamoDB's API so that the DynamoDB backend maps them
//! one to one; expressions are typed trees instead of strings.

use serde::{Deserialize, Serialize};

use crate::capacity::ConsumedCapacity;
use crate::expr::{Condition, KeyCondition, Path, Update};
use crate::value::Item;

/// Which image of the item a write returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReturnValues {
    #[default]
    None,
    AllOld,
    AllNew,
    /// UpdateItem only: the attributes the update wrote, as they were.
    UpdatedOld,
    /// UpdateItem only: the attributes the update wrote, as they are now.
    UpdatedNew,
}

impl ReturnValues {
    /// Whether PutItem and DeleteItem may ask for this: they hand back at
    /// most the item as it was, and DynamoDB refuses any other choice.
    pub fn at_most_the_old_item(self) -> bool {
        matches!(self, ReturnValues::None | ReturnValues::AllOld)
    }
}

/// What a write whose condition fails hands back with the error (DynamoDB's
/// `ReturnValuesOnConditionCheckFailure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReturnValuesOnConditionCheckFailure {
    #[default]
    None,
    /// The item the failed condition was checked against, if there was one.
    AllOld,
}

/// What a Query or Scan returns of each item it keeps (DynamoDB's `Select`).
/// Left unset, a read returns every attribute, or the projected ones on an
/// index, or the paths of its projection when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Select {
    AllAttributes,
    /// Only with an index: what the index projects.
    AllProjectedAttributes,
    /// The paths of the read's projection (which it must have).
    SpecificAttributes,
    /// No items: only [`Page::count`] and [`Page::scanned_count`].
    Count,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GetItemInput {
    pub table: String,
    pub key: Item,
    pub consistent_read: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GetItemOutput {
    pub item: Option<Item>,
    pub consumed: ConsumedCapacity,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PutItemInput {
    pub table: String,
    pub item: Item,
    pub condition: Option<Condition>,
    pub return_values: ReturnValues,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpdateItemInput {
    pub table: String,
    pub key: Item,
    pub update: Update,
    pub condition: Option<Condition>,
    pub return_values: ReturnValues,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeleteItemInput {
    pub table: String,
    pub key: Item,
    pub condition: Option<Condition>,
    pub return_values: ReturnValues,
}

/// What Put, Update and Delete return.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOutput {
    /// The image asked for with [`ReturnValues`], if the item had one.
    pub attributes: Option<Item>,
    pub consumed: ConsumedCapacity,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueryInput {
    pub table: String,
    /// A global secondary index, or `None` for the table itself.
    pub index: Option<String>,
    pub key_condition: KeyCondition,
    /// Applied after reading; what it drops is still charged.
    pub filter: Option<Condition>,
    /// Most items to read (before the filter).
    pub limit: Option<usize>,
    pub scan_index_forward: bool,
    pub exclusive_start_key: Option<Item>,
    pub consistent_read: bool,
    /// The document paths to return of each item (a ProjectionExpression).
    pub projection: Option<Vec<Path>>,
    pub select: Option<Select>,
}

impl QueryInput {
    /// A forward query with no limit on `table` (or `index`).
    pub fn new(
        table: impl Into<String>,
        index: Option<&str>,
        key_condition: KeyCondition,
    ) -> QueryInput {
        QueryInput {
            table: table.into(),
            index: index.map(str::to_owned),
            key_condition,
            filter: None,
            limit: None,
            scan_index_forward: true,
            exclusive_start_key: None,
            consistent_read: false,
            projection: None,
            select: None,
        }
    }
}

/// One segment of a parallel scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub segment: u32,
    pub total_segments: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScanInput {
    pub table: String,
    pub index: Option<String>,
    pub filter: Option<Condition>,
    pub limit: Option<usize>,
    pub exclusive_start_key: Option<Item>,
    pub segment: Option<Segment>,
    pub consistent_read: bool,
    /// The document paths to return of each item (a ProjectionExpression).
    pub projection: Option<Vec<Path>>,
    pub select: Option<Select>,
}

impl ScanInput {
    pub fn new(table: impl Into<String>) -> ScanInput {
        ScanInput {
            table: table.into(),
            index: None,
            filter: None,
            limit: None,
            exclusive_start_key: None,
            segment: None,
            consistent_read: false,
            projection: None,
            select: None,
        }
    }
}

/// A page of a Query or a Scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The items kept, shaped by the projection; empty with [`Select::Count`].
    pub items: Vec<Item>,
    /// Items kept by the filter (`items.len()` unless counting).
    pub count: usize,
    /// Items read before the filter.
    pub scanned_count: usize,
    /// Where the next page starts; `None` when the read reached the end.
    pub last_evaluated_key: Option<Item>,
    pub consumed: ConsumedCapacity,
}

/// The keys to read from one table in a BatchGetItem.
#[derive(Debug, Clone, PartialEq)]
pub struct TableKeys {
    pub table: String,
    pub keys: Vec<Item>,
    pub consistent_read: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchGetItemInput {
    pub requests: Vec<TableKeys>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchGetItemOutput {
    /// Found items per table, in no particular order.
    pub responses: Vec<(String, Vec<Item>)>,
    /// Keys the backend did not get to; retry them.
    pub unprocessed: Vec<TableKeys>,
    pub consumed: Vec<ConsumedCapacity>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WriteRequest {
    Put(Item),
    Delete(Item),
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchWriteItemInput {
    /// `(table, request)` pairs; at most 25.
    pub requests: Vec<(String, WriteRequest)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchWriteItemOutput {
    /// Requests the backend did not get to; retry them.
    pub unprocessed: Vec<(String, WriteRequest)>,
    pub consumed: Vec<ConsumedCapacity>,
}

/// One action of a TransactWriteItems.
#[derive(Debug, Clone, PartialEq)]
pub enum TransactWriteAction {
    Put {
        table: String,
        item: Item,
        condition: Option<Condition>,
    },
    Update {
        table: String,
        key: Item,
        update: Update,
        condition: Option<Condition>,
    },
    Delete {
        table: String,
        key: Item,
        condition: Option<Condition>,
    },
    ConditionCheck {
        table: String,
        key: Item,
        condition: Condition,
    },
}

impl TransactWriteAction {
    pub fn table(&self) -> &str {
        match self {
            TransactWriteAction::Put { table, .. }
            | TransactWriteAction::Update { table, .. }
            | TransactWriteAction::Delete { table, .. }
            | TransactWriteAction::ConditionCheck { table, .. } => table,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransactWriteItemsInput {
    /// At most 100 actions, on distinct items.
    pub actions: Vec<TransactWriteAction>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransactWriteItemsOutput {
    pub consumed: Vec<ConsumedCapacity>,
}

/// Limits DynamoDB puts on batch and transaction sizes.
pub const MAX_BATCH_GET_KEYS: usize = 100;
pub const MAX_BATCH_WRITE_REQUESTS: usize = 25;
pub const MAX_TRANSACT_ACTIONS: usize = 100;
/// Most data one BatchGetItem returns; the keys past it come back
/// unprocessed (API reference, BatchGetItem: "up to 16 MB of data").
pub const MAX_BATCH_GET_BYTES: usize = 16 * 1024 * 1024;
/// Largest aggregate size of the items of one transaction (API reference,
/// TransactWriteItems: "cannot exceed 4 MB").
pub const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;
/// Most data one Query or Scan call reads before it returns a page.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;

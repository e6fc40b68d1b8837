//! What travels through the writer's queue: a request ([`WriteOp`]) with
//! the channel its answer ([`WriteReply`]) goes back on.

use rave_store::{
    BatchWriteItemInput, BatchWriteItemOutput, DeleteItemInput, Item, PutItemInput, Result,
    ReturnValuesOnConditionCheckFailure, StoreError, TableDefinition, TransactWriteItemsInput,
    TransactWriteItemsOutput, UpdateItemInput, WriteFailure, WriteOutput,
};
use tokio::sync::oneshot;

use crate::catalog::IndexChange;
use crate::stream::{Checkpoint, StartPosition};
use crate::ttl::{Expired, TimeToLiveSpecification};

pub(crate) enum WriteOp {
    CreateTable(TableDefinition),
    DeleteTable(String),
    Put(PutItemInput, ReturnValuesOnConditionCheckFailure),
    Update(UpdateItemInput, ReturnValuesOnConditionCheckFailure),
    Delete(DeleteItemInput, ReturnValuesOnConditionCheckFailure),
    BatchWrite(BatchWriteItemInput),
    /// A transaction, the consumer checkpoint it moves, and what each
    /// action hands back if its condition fails (missing entries: nothing).
    Transact(
        TransactWriteItemsInput,
        Option<Checkpoint>,
        Vec<ReturnValuesOnConditionCheckFailure>,
    ),
    RegisterConsumer {
        table: String,
        consumer: String,
        start: StartPosition,
    },
    Checkpoint(Checkpoint),
    UpdateTimeToLive {
        table: String,
        change: TimeToLiveSpecification,
    },
    UpdateTable {
        table: String,
        change: IndexChange,
    },
    /// Turns the table's change stream on or off.
    UpdateStream {
        table: String,
        enabled: bool,
    },
    /// Empties the table's indexes and leaves them to be built after a
    /// bulk load (`bulk`).
    DeferIndexes(String),
    /// Builds the indexes a bulk load deferred, from the table's items.
    BuildDeferredIndexes(String),
    /// The sweeper's deletion of items it found expired by `attribute`.
    Expire {
        table: String,
        attribute: String,
        items: Vec<Expired>,
    },
    /// A small write of the engine's own, to learn whether writes commit
    /// again after a failure (see `write_health`).
    Probe,
}

impl WriteOp {
    /// Whether the request changes the catalog: such a request commits
    /// alone (see `writer`).
    pub(crate) fn changes_catalog(&self) -> bool {
        matches!(
            self,
            WriteOp::CreateTable(_)
                | WriteOp::DeleteTable(_)
                | WriteOp::UpdateTimeToLive { .. }
                | WriteOp::UpdateTable { .. }
                | WriteOp::UpdateStream { .. }
                | WriteOp::DeferIndexes(_)
                | WriteOp::BuildDeferredIndexes(_)
        )
    }
}

#[derive(Debug)]
pub(crate) enum WriteReply {
    Done,
    Write(Written<WriteOutput>),
    Batch(Written<BatchWriteItemOutput>),
    Transact(Written<TransactWriteItemsOutput>),
    Position(u64),
    /// How many items Time to Live deleted.
    Expired(u64),
    /// A write refused by a condition, with the items the request asked
    /// to see: an error, sent as a reply because the items travel with it.
    Refused(WriteFailure),
}

/// The error for a reply of another kind than the request's.
pub(crate) fn unexpected(reply: WriteReply) -> StoreError {
    StoreError::Internal(format!("unexpected writer reply {reply:?}"))
}

pub(crate) struct Job {
    pub(crate) op: WriteOp,
    pub(crate) reply: oneshot::Sender<Answer>,
}

impl Job {
    /// Answers the job with `outcome` and hands its request back.
    pub(crate) fn answer(op: WriteOp, reply: oneshot::Sender<Answer>, outcome: Result<WriteReply>) {
        // The requester may have gone away; the write stands.
        let _ = reply.send(Answer {
            outcome,
            request: op,
        });
    }
}

/// What the writer sends back: the outcome, and the request, so that the
/// task which built the request frees it. mimalloc frees a block another
/// thread allocated on a slower path, and the writer is a bulk load's
/// busiest thread (it spent a tenth of its time freeing the requests).
pub(crate) struct Answer {
    pub(crate) outcome: Result<WriteReply>,
    pub(crate) request: WriteOp,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

/// The size of one item collection after a write: the items of one
/// partition key value in a table with local secondary indexes, plus what
/// those indexes project of them (the API reference's ItemCollectionMetrics).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemCollectionSize {
    pub table: String,
    /// The partition key attribute of the collection.
    pub key: Item,
    pub bytes: u64,
}

/// A write's output with the item collections it wrote to, in the order
/// first written; empty for tables without local secondary indexes.
#[derive(Debug, Clone, PartialEq)]
pub struct Written<T> {
    pub output: T,
    pub item_collections: Vec<ItemCollectionSize>,
}

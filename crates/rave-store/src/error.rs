//! The error kinds both backends report, named after DynamoDB's exceptions
//! where DynamoDB has one.
//!
//! A kind says what failed, and so what a caller may do about it:
//! [`StoreError::is_retryable`] is true exactly for the kinds a later
//! attempt of the same request can cure, and so the ones a retry loop may
//! send again. Besides DynamoDB's exceptions (validation, failed conditions,
//! cancelled transactions, conflicts, throttling, an item collection past its
//! limit) there are three kinds of rave's own:
//!
//! * `Unavailable`: the storage cannot serve now (an I/O error, a full disk,
//!   a stopped writer, a timeout). Retryable.
//! * `Corrupt`: stored data that does not decode, naming what it is (table
//!   and key), so the log line of the failure points at the item. Not
//!   retryable: the same bytes will not decode next time either.
//! * `Internal`: a bug, a broken invariant. Not retryable.

use serde::{Deserialize, Serialize};

use crate::value::Item;

/// Why one action of a cancelled transaction failed (DynamoDB's `Code`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CancellationReason {
    /// The action was fine; another one cancelled the transaction.
    None,
    ConditionalCheckFailed,
    /// The action is invalid: DynamoDB's message, the code being the variant.
    ValidationError(String),
    TransactionConflict,
    /// The action would grow its item collection past the limit (see
    /// [`StoreError::ItemCollectionSizeLimitExceeded`]).
    ItemCollectionSizeLimitExceeded,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The request is malformed or breaks a rule of the data model.
    #[error("ValidationException: {0}")]
    Validation(String),
    /// The condition of a single-item write did not hold; nothing changed.
    #[error("ConditionalCheckFailedException: the conditional request failed")]
    ConditionalCheckFailed,
    /// A transaction was cancelled; one reason per action, in request order.
    #[error("TransactionCanceledException: transaction cancelled, reasons {0:?}")]
    TransactionCanceled(Vec<CancellationReason>),
    #[error("ResourceNotFoundException: {0}")]
    ResourceNotFound(String),
    #[error("ResourceInUseException: {0}")]
    ResourceInUse(String),
    /// A write would grow an item collection (the items of one partition
    /// key value and their entries in the table's local secondary indexes)
    /// past its size limit; nothing changed. Writes that shrink a
    /// collection are still allowed.
    #[error("ItemCollectionSizeLimitExceededException: {0}")]
    ItemCollectionSizeLimitExceeded(String),
    /// Another transaction touched the same item at the same time.
    #[error("TransactionConflictException: {0}")]
    TransactionConflict(String),
    /// The backend refused for lack of capacity (ProvisionedThroughputExceeded,
    /// RequestLimitExceeded, Throttling), after its own retries.
    #[error("throttled: {0}")]
    Throttled(String),
    /// The storage cannot serve now: an I/O error, a full disk, a stopped
    /// writer, an unreachable or unavailable service, a timeout.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Stored data that does not decode. `what` names the item (its table
    /// and key) or the structure that is damaged, so a log line can point
    /// at it; retrying reads the same bytes again.
    #[error("corrupt stored data in {what}: {detail}")]
    Corrupt { what: String, detail: String },
    /// A broken invariant of rave itself (a poisoned lock, an impossible
    /// reply): a bug, not a condition of the storage.
    #[error("internal error: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn validation(msg: impl Into<String>) -> StoreError {
        StoreError::Validation(msg.into())
    }

    pub fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// Whether the same request may succeed if sent again later: the
    /// storage was unavailable or throttled, or another write conflicted
    /// (including a transaction cancelled for conflicts only, which
    /// DynamoDB documents as retryable).
    pub fn is_retryable(&self) -> bool {
        match self {
            StoreError::Unavailable(_)
            | StoreError::Throttled(_)
            | StoreError::TransactionConflict(_) => true,
            StoreError::TransactionCanceled(reasons) => {
                reasons.contains(&CancellationReason::TransactionConflict)
                    && reasons.iter().all(|r| {
                        matches!(
                            r,
                            CancellationReason::None | CancellationReason::TransactionConflict
                        )
                    })
            }
            StoreError::Validation(_)
            | StoreError::ConditionalCheckFailed
            | StoreError::ResourceNotFound(_)
            | StoreError::ResourceInUse(_)
            | StoreError::ItemCollectionSizeLimitExceeded(_)
            | StoreError::Corrupt { .. }
            | StoreError::Internal(_) => false,
        }
    }
}

/// A write's error, with the items its failed conditions were checked
/// against for the actions that asked for them (DynamoDB's
/// `ReturnValuesOnConditionCheckFailure = ALL_OLD`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error}")]
pub struct WriteFailure {
    pub error: StoreError,
    /// One entry per action of the request (one for a single-item write):
    /// the item an action's failed condition saw, when the action asked for
    /// it and the item existed. Empty when no action asked.
    pub old_items: Vec<Option<Item>>,
}

impl From<StoreError> for WriteFailure {
    fn from(error: StoreError) -> WriteFailure {
        WriteFailure {
            error,
            old_items: Vec::new(),
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transient_kinds_are_retryable() {
        assert!(StoreError::Unavailable("disk full".into()).is_retryable());
        assert!(StoreError::Throttled("slow down".into()).is_retryable());
        assert!(StoreError::TransactionConflict("busy".into()).is_retryable());
        assert!(!StoreError::validation("bad").is_retryable());
        assert!(!StoreError::ConditionalCheckFailed.is_retryable());
        assert!(!StoreError::corrupt("item", "truncated").is_retryable());
        assert!(!StoreError::Internal("bug".into()).is_retryable());
        assert!(!StoreError::ResourceNotFound("t".into()).is_retryable());
        assert!(!StoreError::ItemCollectionSizeLimitExceeded("full".into()).is_retryable());
    }

    #[test]
    fn a_transaction_cancelled_by_conflicts_alone_is_retryable() {
        use CancellationReason as R;
        let conflict = StoreError::TransactionCanceled(vec![R::None, R::TransactionConflict]);
        assert!(conflict.is_retryable());
        let condition = StoreError::TransactionCanceled(vec![
            R::TransactionConflict,
            R::ConditionalCheckFailed,
        ]);
        assert!(!condition.is_retryable());
        assert!(!StoreError::TransactionCanceled(vec![R::None]).is_retryable());
    }

    #[test]
    fn corrupt_names_what_is_damaged() {
        let error = StoreError::corrupt("item PK=\"a\" of table t", "truncated");
        assert_eq!(
            error.to_string(),
            "corrupt stored data in item PK=\"a\" of table t: truncated"
        );
    }
}

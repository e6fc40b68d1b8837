//! The error kinds both backends report, named after DynamoDB's exceptions.

use serde::{Deserialize, Serialize};

/// Why one action of a cancelled transaction failed (DynamoDB's `Code`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CancellationReason {
    /// The action was fine; another one cancelled the transaction.
    None,
    ConditionalCheckFailed,
    ValidationError(String),
    TransactionConflict,
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
    /// Another transaction touched the same item at the same time.
    #[error("TransactionConflictException: {0}")]
    TransactionConflict(String),
    /// The backend refused for lack of capacity, after its own retries.
    #[error("throttled: {0}")]
    Throttled(String),
    /// The storage failed (disk, network, service error).
    #[error("storage failure: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn validation(msg: impl Into<String>) -> StoreError {
        StoreError::Validation(msg.into())
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

//! What the comments domain can report. Each variant maps to one HTTP
//! status; storage failures arrive here sorted by what the caller can do
//! about them, and the storage's own error type stays inside the domain.
//!
//! The variants are the caller's options: fix the input (`Invalid`,
//! `Refused` by a moderation rule, `BadCursor`), give up (`NotFound`),
//! reconcile with another write (`Conflict`), retry later (`Unavailable`,
//! which the domain has already retried itself and which carries how long
//! to wait), or report it (`Corrupt`, naming the stored item that does not
//! decode; `Internal`, a bug).

use std::time::Duration;

use rave_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CommentsError {
    /// A field breaks a rule; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// An answer to a product's attributes breaks its declaration; `field`
    /// names it (`attributes.<name>`, or `attributes` for a name that is
    /// not one).
    #[error("{field}: {message}")]
    InvalidAttribute { field: String, message: String },
    #[error("comment not found")]
    NotFound,
    /// A moderation rule refused the comment; `rule` names it.
    #[error("refused by the moderation rule {rule}")]
    Refused { rule: &'static str },
    /// The idempotency key was used before with a different request, or a
    /// comment kept changing under a read-modify-write.
    #[error("{0}")]
    Conflict(String),
    /// The cursor is altered, truncated, foreign or for another query.
    #[error("invalid cursor: {0}")]
    BadCursor(&'static str),
    /// The storage cannot serve now (down, full, throttled, contended, even
    /// after retries); the same request may succeed later.
    #[error("the storage is unavailable: {detail}")]
    Unavailable {
        detail: String,
        retry_after: Duration,
    },
    /// A stored item does not decode; `key` names it.
    #[error("stored item {key} is corrupt: {detail}")]
    Corrupt { key: String, detail: String },
    /// A failure that is not the caller's and not the storage's state: a
    /// request the domain built was refused, or a lock was poisoned.
    #[error("internal error: {0}")]
    Internal(String),
}

/// A stored item that does not decode as the kind its key says it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored item {key} is malformed: {what}")]
pub(crate) struct Malformed {
    /// `PK/SK` of the item, or what is known of it.
    pub(crate) key: String,
    pub(crate) what: String,
}

/// How long a client is told to wait after the storage was unavailable.
const RETRY_AFTER: Duration = Duration::from_secs(1);

impl From<Malformed> for CommentsError {
    fn from(malformed: Malformed) -> CommentsError {
        CommentsError::Corrupt {
            key: malformed.key,
            detail: malformed.what,
        }
    }
}

impl From<StoreError> for CommentsError {
    fn from(error: StoreError) -> CommentsError {
        match error {
            StoreError::Corrupt { what, detail } => CommentsError::Corrupt { key: what, detail },
            retryable if retryable.is_retryable() => CommentsError::Unavailable {
                detail: retryable.to_string(),
                retry_after: RETRY_AFTER,
            },
            other => CommentsError::Internal(other.to_string()),
        }
    }
}

pub type Result<T, E = CommentsError> = std::result::Result<T, E>;

//! What the comments domain can report. Each variant maps to one HTTP status.

use rave_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CommentsError {
    /// A field breaks a rule; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("comment not found")]
    NotFound,
    /// The idempotency key was used before with a different request.
    #[error("{0}")]
    Conflict(String),
    /// The cursor is altered, truncated, foreign or for another query.
    #[error("invalid cursor: {0}")]
    BadCursor(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type Result<T, E = CommentsError> = std::result::Result<T, E>;

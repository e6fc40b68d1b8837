use std::time::Duration;

use rave_store::StoreError;

use rave_outbound::TargetError;

/// A stored webhooks item that does not decode; `key` is its `PK/SK`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored item {key} is malformed: {what}")]
pub struct Malformed {
    pub key: String,
    pub what: String,
}

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// A field of a request breaks a rule; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// The endpoint's URL is not a target webhooks may reach.
    #[error("url: {0}")]
    Target(#[from] TargetError),
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The request does not fit the item's state (retrying a delivery that
    /// has not failed).
    #[error("{0}")]
    Conflict(String),
    #[error("stored item {key} is corrupt: {what}")]
    Corrupt { key: String, what: String },
    /// The storage cannot serve now; the same request may succeed later.
    #[error("the storage is unavailable: {detail}")]
    Unavailable {
        detail: String,
        retry_after: Duration,
    },
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<Malformed> for WebhookError {
    fn from(m: Malformed) -> WebhookError {
        WebhookError::Corrupt {
            key: m.key,
            what: m.what,
        }
    }
}

impl From<StoreError> for WebhookError {
    fn from(error: StoreError) -> WebhookError {
        if error.is_retryable() {
            WebhookError::Unavailable {
                detail: error.to_string(),
                retry_after: Duration::from_secs(1),
            }
        } else {
            WebhookError::Internal(error.to_string())
        }
    }
}

impl From<rave_comments::CommentsError> for WebhookError {
    fn from(error: rave_comments::CommentsError) -> WebhookError {
        match error {
            rave_comments::CommentsError::Corrupt { key, detail } => {
                WebhookError::Corrupt { key, what: detail }
            }
            other => WebhookError::Internal(other.to_string()),
        }
    }
}

pub type Result<T, E = WebhookError> = std::result::Result<T, E>;

use std::time::Duration;

use rave_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RequestsError {
    /// A field of a request breaks a rule; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A review link that is forged, expired, or names another order.
    #[error("the link is not valid: {0}")]
    BadLink(&'static str),
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

impl RequestsError {
    pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> RequestsError {
        RequestsError::Invalid {
            field,
            message: message.into(),
        }
    }
}

impl From<StoreError> for RequestsError {
    fn from(error: StoreError) -> RequestsError {
        if error.is_retryable() {
            RequestsError::Unavailable {
                detail: error.to_string(),
                retry_after: Duration::from_secs(1),
            }
        } else {
            RequestsError::Internal(error.to_string())
        }
    }
}

pub type Result<T, E = RequestsError> = std::result::Result<T, E>;

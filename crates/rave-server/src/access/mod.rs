//! Who may call what, and the trail of what they did.
//!
//! * `tokens` — creating, listing and revoking scoped tokens (scope
//!   `admin`).
//! * `audit` — listing the trail (scope `admin`).
//!
//! Tokens and the trail are kept by rave-access, in their own table;
//! `callers` checks each request's token and records what staff do.

pub(crate) mod audit;
pub(crate) mod tokens;

use axum::http::StatusCode;
use rave_access::AccessError;

use crate::error::ApiError;

impl From<AccessError> for ApiError {
    fn from(error: AccessError) -> ApiError {
        match error {
            AccessError::Invalid { field, message } => {
                ApiError::bad_request(format!("{field}: {message}"))
            }
            AccessError::NotFound(what) => ApiError::not_found(format!("no such {what}")),
            AccessError::Unavailable {
                detail,
                retry_after,
            } => {
                tracing::warn!(%detail, "store unavailable");
                ApiError::unavailable(retry_after.as_secs().max(1))
            }
            AccessError::Corrupt { key, what } => {
                tracing::error!(%key, detail = %what, "corrupt stored item");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "a stored item is corrupt; the operator has been told which",
                )
            }
            AccessError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

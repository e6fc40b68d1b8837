//! Every error leaves as an RFC 9457 problem document
//! (`application/problem+json`), with `detail` naming the offending field.

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_comments::CommentsError;
use serde::Serialize;
use utoipa::ToSchema;

/// An RFC 9457 problem document.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The request field at fault, when one is (an RFC 9457 extension
    /// member): what a form marks, instead of parsing `detail`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "rating")]
    pub field: Option<String>,
}

/// An error on its way to becoming a problem response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: String,
    /// Seconds to wait, for 429 and 503.
    pub retry_after: Option<u64>,
    /// Challenge for 401.
    pub authenticate: bool,
    /// The request field at fault, if one is (`attributes.<name>` is made
    /// from the request, the others are fixed names).
    pub field: Option<Cow<'static, str>>,
}

impl ApiError {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            detail: detail.into(),
            retry_after: None,
            authenticate: false,
            field: None,
        }
    }

    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, detail)
    }

    pub fn unauthorized(detail: impl Into<String>) -> ApiError {
        ApiError {
            authenticate: true,
            ..ApiError::new(StatusCode::UNAUTHORIZED, detail)
        }
    }

    /// 503: the store cannot serve now; the same request may succeed later.
    pub fn unavailable(retry_after: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the store cannot serve now; retry in {retry_after} s"),
            )
        }
    }

    pub fn too_many_requests(retry_after: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many requests from this client; retry in {retry_after} s"),
            )
        }
    }
}

impl From<CommentsError> for ApiError {
    fn from(error: CommentsError) -> ApiError {
        match error {
            CommentsError::Invalid { field, message } => ApiError {
                field: Some(Cow::Borrowed(field)),
                ..ApiError::bad_request(format!("{field}: {message}"))
            },
            CommentsError::InvalidAttribute { field, message } => ApiError {
                detail: format!("{field}: {message}"),
                field: Some(Cow::Owned(field)),
                ..ApiError::bad_request("")
            },
            CommentsError::NotFound => ApiError::not_found("no comment with this id"),
            CommentsError::Refused { rule } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("refused by the moderation rule {rule}"),
            ),
            CommentsError::Conflict(detail) => ApiError::new(StatusCode::CONFLICT, detail),
            CommentsError::BadCursor(why) => ApiError::bad_request(format!("cursor: {why}")),
            CommentsError::Unavailable {
                detail,
                retry_after,
            } => {
                tracing::warn!(%detail, "store unavailable");
                ApiError::unavailable(retry_after.as_secs().max(1))
            }
            CommentsError::Corrupt { key, detail } => {
                tracing::error!(%key, %detail, "corrupt stored item");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "a stored item is corrupt; the operator has been told which",
                )
            }
            CommentsError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = Problem {
            kind: format!("https://rave.dev/problems/{}", self.status.as_u16()),
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            status: self.status.as_u16(),
            detail: self.detail,
            field: self.field.map(Cow::into_owned),
        };
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.authenticate {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

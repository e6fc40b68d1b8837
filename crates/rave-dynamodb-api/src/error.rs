//! DynamoDB's errors: the `__type` a client dispatches on, the HTTP status,
//! and the JSON envelope they travel in.
//!
//! Clients dispatch on the namespace as well as the name, so it is
//! DynamoDB's: `com.amazonaws.dynamodb.v20120810#…` for DynamoDB's own
//! exceptions, `com.amazon.coral.validate#ValidationException`, and
//! `com.amazon.coral.service#…` for an unknown operation, an unreadable body
//! and a signature's refusals. The status is 400, or 500 for
//! InternalServerError, whose cause is logged and not sent. The message
//! travels under `message`, or `Message` for a SerializationException and a
//! TransactionCanceledException, as DynamoDB spells them. A
//! `rave_store::StoreError` maps kind for kind; a write refused with
//! `ReturnValuesOnConditionCheckFailure` = ALL_OLD carries the item the
//! condition saw in the exception's `Item` or the cancellation reason's.

use axum::http::StatusCode;
use rave_store::{CancellationReason, Item, StoreError, WriteFailure};
use serde_json::{Value, json};

use crate::wire::item_to_json;

/// Where DynamoDB's own exception types live.
const DYNAMODB_NAMESPACE: &str = "com.amazonaws.dynamodb.v20120810";
/// Where the AWS front end's exception types live: requests that never
/// reach DynamoDB proper (unknown operation, unreadable body).
const CORAL_NAMESPACE: &str = "com.amazon.coral.service";
/// Where DynamoDB's ValidationException lives (the front end's validator's,
/// not DynamoDB's own namespace).
const VALIDATION_NAMESPACE: &str = "com.amazon.coral.validate";

/// The exceptions rave answers with, named as DynamoDB names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    Validation,
    ResourceNotFound,
    ResourceInUse,
    ConditionalCheckFailed,
    /// A PartiQL INSERT of a key an item already has.
    DuplicateItem,
    TransactionCanceled,
    TransactionConflict,
    TransactionInProgress,
    IdempotentParameterMismatch,
    ProvisionedThroughputExceeded,
    /// A write would grow an item collection past its size limit.
    ItemCollectionSizeLimitExceeded,
    /// Too many tags, or another account quota.
    LimitExceeded,
    /// A shard iterator older than fifteen minutes.
    ExpiredIterator,
    InternalServerError,
    /// The storage cannot serve now (a full disk, a stopped writer).
    ServiceUnavailable,
    /// The `X-Amz-Target` names no operation rave serves.
    UnknownOperation,
    /// The body is not JSON, or a member has the wrong JSON type.
    Serialization,
    /// No Signature V4 `Authorization` header, where one is required.
    MissingAuthenticationToken,
    /// An `Authorization` header that lacks a part of the signature.
    IncompleteSignature,
    /// A signature signed with an access key the server does not know.
    UnrecognizedClient,
    /// A signature that does not match, or a date outside the clock skew.
    InvalidSignature,
    /// A resource of another account or region than rave's.
    AccessDenied,
}

impl ErrorKind {
    fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationException",
            ErrorKind::ResourceNotFound => "ResourceNotFoundException",
            ErrorKind::ResourceInUse => "ResourceInUseException",
            ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailedException",
            ErrorKind::DuplicateItem => "DuplicateItemException",
            ErrorKind::TransactionCanceled => "TransactionCanceledException",
            ErrorKind::TransactionConflict => "TransactionConflictException",
            ErrorKind::TransactionInProgress => "TransactionInProgressException",
            ErrorKind::IdempotentParameterMismatch => "IdempotentParameterMismatchException",
            ErrorKind::ProvisionedThroughputExceeded => "ProvisionedThroughputExceededException",
            ErrorKind::ItemCollectionSizeLimitExceeded => {
                "ItemCollectionSizeLimitExceededException"
            }
            ErrorKind::LimitExceeded => "LimitExceededException",
            ErrorKind::ExpiredIterator => "ExpiredIteratorException",
            ErrorKind::InternalServerError => "InternalServerError",
            ErrorKind::ServiceUnavailable => "ServiceUnavailableException",
            ErrorKind::UnknownOperation => "UnknownOperationException",
            ErrorKind::Serialization => "SerializationException",
            ErrorKind::MissingAuthenticationToken => "MissingAuthenticationTokenException",
            ErrorKind::IncompleteSignature => "IncompleteSignatureException",
            ErrorKind::UnrecognizedClient => "UnrecognizedClientException",
            ErrorKind::InvalidSignature => "InvalidSignatureException",
            ErrorKind::AccessDenied => "AccessDeniedException",
        }
    }

    fn namespace(self) -> &'static str {
        match self {
            ErrorKind::UnknownOperation
            | ErrorKind::Serialization
            | ErrorKind::MissingAuthenticationToken
            | ErrorKind::IncompleteSignature
            | ErrorKind::UnrecognizedClient
            | ErrorKind::InvalidSignature
            | ErrorKind::AccessDenied => CORAL_NAMESPACE,
            ErrorKind::ServiceUnavailable => "com.amazon.coral.availability",
            ErrorKind::Validation => VALIDATION_NAMESPACE,
            _ => DYNAMODB_NAMESPACE,
        }
    }

    /// The code a batch of PartiQL statements gives one statement's error
    /// (the exception's name without `Exception`; ValidationError).
    pub(crate) fn statement_code(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationError",
            other => other.name().trim_end_matches("Exception"),
        }
    }

    pub(crate) fn status(self) -> StatusCode {
        match self {
            ErrorKind::InternalServerError => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorKind::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

/// One failed request, as the client will see it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}", kind.name(), message.as_deref().unwrap_or(""))]
pub(crate) struct ApiError {
    pub(crate) kind: ErrorKind,
    /// DynamoDB leaves the message out of some errors (an unknown operation).
    pub(crate) message: Option<String>,
    /// TransactionCanceledException's per-action reasons.
    cancellation_reasons: Option<Vec<CancellationReason>>,
    /// The items failed conditions saw, for the actions that asked
    /// (ReturnValuesOnConditionCheckFailure = ALL_OLD): the
    /// ConditionalCheckFailedException's `Item`, or each cancellation
    /// reason's.
    old_items: Vec<Option<Item>>,
    /// For a value DynamoDB refuses (a number that does not parse, a set
    /// repeating a member, some enums' members), the words of its current
    /// validation layer, which some operations answer with and others not
    /// yet (see `protocol`); `message` holds the older words.
    pub(crate) current_wording: Option<String>,
    /// A refusal of the request's shape (an expression member without its
    /// expression, an empty map or condition, an undefined value, a legacy
    /// `Expected` entry that contradicts itself), which the item writes now
    /// answer inside the validation framework's envelope and the other
    /// operations bare (captured in several regions in October 2026).
    pub(crate) enveloped_by_item_writes: bool,
    /// A refused value PutItem still answers in the older words, bare,
    /// though it answers other refused values in the current ones: a string
    /// set repeating a member.
    pub(crate) older_words_on_put_item: bool,
}

impl ApiError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: Some(message.into()),
            cancellation_reasons: None,
            old_items: Vec::new(),
            current_wording: None,
            enveloped_by_item_writes: false,
            older_words_on_put_item: false,
        }
    }

    pub(crate) fn validation(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Validation, message)
    }

    /// A refused value, in DynamoDB's older words and in its current ones.
    pub(crate) fn value_fault(older: impl Into<String>, current: impl Into<String>) -> ApiError {
        ApiError {
            current_wording: Some(current.into()),
            ..ApiError::validation(older)
        }
    }

    /// This refused value, answered by PutItem in the older words: see
    /// [`ApiError::older_words_on_put_item`].
    pub(crate) fn in_older_words_on_put_item(self) -> ApiError {
        ApiError {
            older_words_on_put_item: true,
            ..self
        }
    }

    /// A TransactionCanceledException whose reasons `recast` rewrites (given
    /// each action's position), its message listing the codes anew; any
    /// other error unchanged.
    pub(crate) fn recast_cancellation(
        self,
        recast: impl Fn(usize, CancellationReason) -> CancellationReason,
    ) -> ApiError {
        let Some(reasons) = self.cancellation_reasons else {
            return self;
        };
        let reasons: Vec<CancellationReason> = reasons
            .into_iter()
            .enumerate()
            .map(|(position, reason)| recast(position, reason))
            .collect();
        ApiError {
            old_items: self.old_items,
            ..ApiError::from(StoreError::TransactionCanceled(reasons))
        }
    }

    /// A refusal of the request's shape: see
    /// [`ApiError::enveloped_by_item_writes`].
    pub(crate) fn request_fault(message: impl Into<String>) -> ApiError {
        ApiError {
            enveloped_by_item_writes: true,
            ..ApiError::validation(message)
        }
    }

    pub(crate) fn serialization(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Serialization, message)
    }

    /// DynamoDB answers an unknown operation with the bare type, no message.
    pub(crate) fn unknown_operation() -> ApiError {
        ApiError {
            message: None,
            ..ApiError::new(ErrorKind::UnknownOperation, "")
        }
    }

    /// A request member rave does not implement yet: refused, never ignored.
    pub(crate) fn not_supported_yet(parameter: &str) -> ApiError {
        ApiError::validation(format!("rave does not support {parameter} yet"))
    }

    /// The error body: `{"__type": "<namespace>#<name>", "message": ...}`;
    /// DynamoDB capitalises the message's key (`Message`) of a
    /// SerializationException and a TransactionCanceledException only.
    pub(crate) fn envelope(&self) -> Value {
        let mut body = json!({
            "__type": format!("{}#{}", self.kind.namespace(), self.kind.name()),
        });
        if let Some(message) = &self.message {
            let key = match self.kind {
                ErrorKind::Serialization | ErrorKind::TransactionCanceled => "Message",
                _ => "message",
            };
            body[key] = Value::String(message.clone());
        }
        match &self.cancellation_reasons {
            Some(reasons) => {
                body["CancellationReasons"] = reasons
                    .iter()
                    .enumerate()
                    .map(|(action, reason)| {
                        let mut rendered = cancellation_reason(reason);
                        if let Some(Some(item)) = self.old_items.get(action) {
                            rendered["Item"] = item_to_json(item);
                        }
                        rendered
                    })
                    .collect();
            }
            None => {
                if let Some(Some(item)) = self.old_items.first() {
                    body["Item"] = item_to_json(item);
                }
            }
        }
        body
    }
}

fn cancellation_reason(reason: &CancellationReason) -> Value {
    match reason {
        CancellationReason::None => json!({"Code": "None"}),
        CancellationReason::ConditionalCheckFailed => json!({
            "Code": "ConditionalCheckFailed",
            "Message": "The conditional request failed",
        }),
        CancellationReason::ValidationError(message) => json!({
            "Code": "ValidationError",
            "Message": message,
        }),
        CancellationReason::TransactionConflict => json!({
            "Code": "TransactionConflict",
            "Message": "Transaction is ongoing for the item",
        }),
        CancellationReason::ItemCollectionSizeLimitExceeded => json!({
            "Code": "ItemCollectionSizeLimitExceeded",
            "Message": "Collection size exceeded",
        }),
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        match error {
            StoreError::Validation(message) => ApiError::validation(message),
            StoreError::ConditionalCheckFailed => ApiError::new(
                ErrorKind::ConditionalCheckFailed,
                "The conditional request failed",
            ),
            StoreError::TransactionCanceled(reasons) => {
                let codes: Vec<&str> = reasons.iter().map(reason_code).collect();
                ApiError {
                    cancellation_reasons: Some(reasons),
                    ..ApiError::new(
                        ErrorKind::TransactionCanceled,
                        format!(
                            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                            codes.join(", ")
                        ),
                    )
                }
            }
            StoreError::ResourceNotFound(message) => {
                ApiError::new(ErrorKind::ResourceNotFound, message)
            }
            StoreError::ResourceInUse(message) => ApiError::new(ErrorKind::ResourceInUse, message),
            StoreError::ItemCollectionSizeLimitExceeded(message) => {
                ApiError::new(ErrorKind::ItemCollectionSizeLimitExceeded, message)
            }
            StoreError::TransactionConflict(message) => {
                ApiError::new(ErrorKind::TransactionConflict, message)
            }
            StoreError::Throttled(message) => {
                ApiError::new(ErrorKind::ProvisionedThroughputExceeded, message)
            }
            StoreError::Unavailable(message) => {
                tracing::warn!(error = %message, "storage unavailable");
                ApiError::new(ErrorKind::ServiceUnavailable, "Service unavailable")
            }
            StoreError::Corrupt { what, detail } => {
                // The cause stays in the log; the client learns only that it failed.
                tracing::error!(%what, %detail, "corrupt stored data");
                ApiError::new(ErrorKind::InternalServerError, "Internal server error")
            }
            StoreError::Internal(message) => {
                tracing::error!(error = %message, "storage failure");
                ApiError::new(ErrorKind::InternalServerError, "Internal server error")
            }
        }
    }
}

impl From<WriteFailure> for ApiError {
    fn from(failure: WriteFailure) -> ApiError {
        ApiError {
            old_items: failure.old_items,
            ..ApiError::from(failure.error)
        }
    }
}

fn reason_code(reason: &CancellationReason) -> &'static str {
    match reason {
        CancellationReason::None => "None",
        CancellationReason::ConditionalCheckFailed => "ConditionalCheckFailed",
        CancellationReason::ValidationError(_) => "ValidationError",
        CancellationReason::TransactionConflict => "TransactionConflict",
        CancellationReason::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_name_the_namespace_of_each_exception() {
        assert_eq!(
            ApiError::validation("bad").envelope(),
            json!({"__type": "com.amazon.coral.validate#ValidationException", "message": "bad"})
        );
        assert_eq!(
            ApiError::serialization("not JSON").envelope(),
            json!({"__type": "com.amazon.coral.service#SerializationException", "Message": "not JSON"})
        );
        assert_eq!(
            ApiError::from(StoreError::ResourceNotFound("gone".into())).envelope()["message"],
            "gone"
        );
        assert_eq!(
            ApiError::unknown_operation().envelope(),
            json!({"__type": "com.amazon.coral.service#UnknownOperationException"})
        );
    }

    #[test]
    fn store_errors_keep_their_kind_and_status() {
        let not_found = ApiError::from(StoreError::ResourceNotFound("gone".into()));
        assert_eq!(not_found.kind, ErrorKind::ResourceNotFound);
        assert_eq!(not_found.kind.status(), StatusCode::BAD_REQUEST);
        let internal = ApiError::from(StoreError::Internal("disk on fire".into()));
        assert_eq!(internal.kind.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(internal.message.as_deref(), Some("Internal server error"));
        let cancelled = ApiError::from(StoreError::TransactionCanceled(vec![
            CancellationReason::None,
            CancellationReason::ConditionalCheckFailed,
        ]));
        assert_eq!(
            cancelled.envelope()["CancellationReasons"],
            json!([{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}])
        );
    }
}

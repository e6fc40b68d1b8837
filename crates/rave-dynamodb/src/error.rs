//! SDK errors mapped to the kinds both backends share, so a caller's
//! retry and its refusals do not depend on the backend.

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use rave_store::{CancellationReason, StoreError};

/// Maps an SDK error to the kinds both backends share: no answer (a
/// timeout, a connection that failed or broke off) is `Unavailable`;
/// an answer is mapped by its exception name ([`service_error`]).
pub(crate) fn map_error<E: ProvideErrorMetadata + std::error::Error + 'static>(
    error: SdkError<E>,
) -> StoreError {
    match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            StoreError::Unavailable(format!("DynamoDB: {}", DisplayErrorContext(&error)))
        }
        _ => {
            let server_error = error
                .raw_response()
                .is_some_and(|r| r.status().is_server_error());
            let message = error.message().unwrap_or_default().to_owned();
            match error.code() {
                Some(code) => service_error(code, message, server_error),
                None if server_error => {
                    StoreError::Unavailable(format!("DynamoDB: {}", DisplayErrorContext(&error)))
                }
                None => StoreError::Internal(format!("DynamoDB: {}", DisplayErrorContext(&error))),
            }
        }
    }
}

/// The kind of an error DynamoDB answered with, from its exception name;
/// an unknown exception is `Unavailable` when the status was a 5xx (the
/// service failed) and `Internal` otherwise (rave sent what it should not).
pub(crate) fn service_error(code: &str, message: String, server_error: bool) -> StoreError {
    match code {
        "ConditionalCheckFailedException" => StoreError::ConditionalCheckFailed,
        "ValidationException" => StoreError::Validation(message),
        "ResourceNotFoundException" => StoreError::ResourceNotFound(message),
        "ResourceInUseException" => StoreError::ResourceInUse(message),
        "TransactionConflictException" => StoreError::TransactionConflict(message),
        "ItemCollectionSizeLimitExceededException" => {
            StoreError::ItemCollectionSizeLimitExceeded(message)
        }
        "ProvisionedThroughputExceededException"
        | "ThrottlingException"
        | "RequestLimitExceeded"
        | "LimitExceededException" => StoreError::Throttled(format!("{code}: {message}")),
        "InternalServerError" | "ServiceUnavailable" => {
            StoreError::Unavailable(format!("{code}: {message}"))
        }
        _ if server_error => StoreError::Unavailable(format!("{code}: {message}")),
        _ => StoreError::Internal(format!("{code}: {message}")),
    }
}

pub(crate) fn transaction_error(error: SdkError<TransactWriteItemsError>) -> StoreError {
    if let Some(TransactWriteItemsError::TransactionCanceledException(e)) = error.as_service_error()
    {
        let reasons = e
            .cancellation_reasons()
            .iter()
            .map(|r| match r.code() {
                Some("ConditionalCheckFailed") => CancellationReason::ConditionalCheckFailed,
                Some("TransactionConflict") => CancellationReason::TransactionConflict,
                Some("ItemCollectionSizeLimitExceeded") => {
                    CancellationReason::ItemCollectionSizeLimitExceeded
                }
                Some("ValidationError") => {
                    CancellationReason::ValidationError(r.message().unwrap_or_default().to_owned())
                }
                _ => CancellationReason::None,
            })
            .collect();
        return StoreError::TransactionCanceled(reasons);
    }
    map_error(error)
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::error::ConnectorError;
    use aws_sdk_dynamodb::operation::get_item::GetItemError;

    use super::*;

    #[test]
    fn exceptions_map_to_their_kinds() {
        let kind = |code: &str, server_error: bool| service_error(code, "m".into(), server_error);
        for code in [
            "ProvisionedThroughputExceededException",
            "RequestLimitExceeded",
            "ThrottlingException",
        ] {
            assert!(
                matches!(kind(code, false), StoreError::Throttled(_)),
                "{code}"
            );
        }
        assert_eq!(
            kind("TransactionConflictException", false),
            StoreError::TransactionConflict("m".into())
        );
        assert_eq!(
            kind("ConditionalCheckFailedException", false),
            StoreError::ConditionalCheckFailed
        );
        assert_eq!(
            kind("ValidationException", false),
            StoreError::Validation("m".into())
        );
        for code in ["InternalServerError", "ServiceUnavailable"] {
            assert!(
                matches!(kind(code, true), StoreError::Unavailable(_)),
                "{code}"
            );
        }
        assert!(matches!(
            kind("SomethingNew", true),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            kind("SomethingNew", false),
            StoreError::Internal(_)
        ));
    }

    #[test]
    fn no_answer_is_unavailable_and_retryable() {
        let timeout = map_error(SdkError::<GetItemError>::timeout_error("too slow"));
        assert!(matches!(timeout, StoreError::Unavailable(_)), "{timeout:?}");
        let refused = map_error(SdkError::<GetItemError>::dispatch_failure(
            ConnectorError::io("connection refused".into()),
        ));
        assert!(matches!(refused, StoreError::Unavailable(_)), "{refused:?}");
        assert!(refused.is_retryable());
    }
}

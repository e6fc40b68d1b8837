//! The HTTP side of DynamoDB's JSON protocol: every request is a POST whose
//! `X-Amz-Target` header names the operation and whose body is a JSON
//! object; every answer is JSON of type `application/x-amz-json-1.0` with a
//! request id and the body's CRC32, which the AWS SDKs check.
//!
//! Signature V4 `Authorization` headers are accepted and not verified: rave
//! is a local database, and its clients insist on signing.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::ApiError;
use crate::request::Members;
use crate::{DynamoApi, batch, items, pages, tables, transact};

/// The prefix of every DynamoDB operation's target.
const DYNAMODB_TARGET: &str = "DynamoDB_20120810.";
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
const REQUEST_ID: HeaderName = HeaderName::from_static("x-amzn-requestid");
const CRC32: HeaderName = HeaderName::from_static("x-amz-crc32");

/// Answers one request, whatever its path: DynamoDB routes by header only.
pub async fn handle(
    State(api): State<Arc<DynamoApi>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let request_id = ulid::Ulid::generate().to_string();
    let operation = headers
        .get("x-amz-target")
        .and_then(|target| target.to_str().ok())
        .and_then(|target| target.strip_prefix(DYNAMODB_TARGET))
        .unwrap_or_default();
    let outcome = answer(&api, operation, &body).await;
    let elapsed_us = started.elapsed().as_micros() as u64;
    let (status, body) = match outcome {
        Ok(response) => {
            tracing::info!(
                operation,
                request_id,
                status = 200,
                elapsed_us,
                "dynamodb request"
            );
            (StatusCode::OK, response)
        }
        Err(error) => {
            let status = error.kind.status();
            tracing::info!(
                operation,
                request_id,
                status = status.as_u16(),
                elapsed_us,
                error = %error,
                "dynamodb request"
            );
            (status, error.envelope())
        }
    };
    respond(status, &body, &request_id)
}

/// The body is read before the operation is looked up, as DynamoDB does: a
/// body that is not JSON is a SerializationException whatever the target.
async fn answer(api: &DynamoApi, operation: &str, body: &[u8]) -> Result<Value, ApiError> {
    let request: Value = serde_json::from_slice(body).map_err(|error| {
        ApiError::serialization(format!("the request body is not JSON: {error}"))
    })?;
    dispatch(api, operation, Members::of(&request)?).await
}

async fn dispatch(api: &DynamoApi, operation: &str, body: Members<'_>) -> Result<Value, ApiError> {
    match operation {
        "CreateTable" => tables::create_table(api, body).await,
        "DescribeTable" => tables::describe_table(api, body).await,
        "ListTables" => tables::list_tables(api, body).await,
        "DeleteTable" => tables::delete_table(api, body).await,
        "GetItem" => items::get_item(api, body).await,
        "PutItem" => items::put_item(api, body).await,
        "DeleteItem" => items::delete_item(api, body).await,
        "BatchGetItem" => batch::batch_get_item(api, body).await,
        "BatchWriteItem" => batch::batch_write_item(api, body).await,
        "Query" => pages::query(api, body).await,
        "Scan" => pages::scan(api, body).await,
        "UpdateItem" => items::update_item(api, body).await,
        "TransactWriteItems" => transact::transact_write_items(api, body).await,
        _ => Err(ApiError::unknown_operation()),
    }
}

fn respond(status: StatusCode, body: &Value, request_id: &str) -> Response {
    let bytes = body.to_string().into_bytes();
    let crc = crc32fast::hash(&bytes);
    let mut response = (status, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert(REQUEST_ID, id);
    }
    headers.insert(CRC32, HeaderValue::from(crc));
    response
}

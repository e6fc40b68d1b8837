//! The HTTP side of DynamoDB's JSON protocol, and the operation table
//! (`Operation`, `run`): the one index of the operations, each served by
//! its file under `actions/`.
//!
//! Every request is a POST whose
//! `X-Amz-Target` header names the operation and whose body is a JSON
//! object; every answer is JSON of type `application/x-amz-json-1.0` with a
//! request id (`x-amzn-RequestId`, a ULID) and the body's CRC32
//! (`x-amz-crc32`), which the AWS SDKs check. Each service's operations are
//! served only under its own prefix (`DynamoDB_20120810.` or
//! `DynamoDBStreams_20120810.`). DescribeEndpoints is answered here: this
//! endpoint, at the `Host` the client used. One log line per request at
//! the debug level (`RAVE_LOG=rave_dynamodb_api=debug`), at warn for a
//! server error: formatting and writing a line cost as much CPU as
//! answering a GetItem.
//!
//! DynamoDB answers through two validation layers, and clients see which:
//!
//! * Bodies parse up to 512 levels deep, so a value nested past DynamoDB's
//!   32 levels gets DynamoDB's validation errors rather than a parse
//!   failure. The current layer reads a body nested at most 128 levels
//!   (a value about 62 maps deep); the item writes leave a deeper one to
//!   the older layer (`ValidationLayer`), which answers in its own words,
//!   bare.
//! * The item writes' request-level refusals are put in the validation
//!   framework's "1 validation error detected" envelope, as DynamoDB now
//!   answers them. Such a refusal is marked where it is made
//!   (`ApiError::request_fault`, and the expression errors it applies to),
//!   never recognised by its words.
//! * A refused value (a number that does not parse or is out of range, a
//!   set repeating a member) carries both layers' words
//!   (`ApiError::value_fault`): the item writes answer in the current ones
//!   inside the envelope, GetItem, BatchGetItem and Query in them bare, the
//!   other operations in the older ones. Two enum refusals carry both words
//!   too (`Members::choice_in_both_words`): the `ConditionalOperator`
//!   joining a read filter or a write's `Expected`, and UpdateItem's
//!   `ReturnValues`.
//! * An item operation on a missing table says only "Requested resource not
//!   found": DynamoDB names the table in the control plane's answers only.
//!
//! Signature V4 `Authorization` headers are verified when the API has
//! access keys (`DynamoApi::with_credentials`), once the target names an
//! operation rave serves, as DynamoDB checks them; without keys a request
//! must still carry a complete one (DynamoDB, and DynamoDB Local, refuse a
//! request with none or with a part missing), but its signature is not
//! checked: rave is then a local database whose clients sign anyway. The
//! request's content type is not checked: the SDKs send
//! `application/x-amz-json-1.0`, and a hand-made request with another type
//! is answered all the same.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use crate::actions::{
    batch, create_table, delete_table, describe_endpoints, describe_limits, describe_table, items,
    list_tables, partiql, query_scan, streams, tags, time_to_live, transact, update_table,
};
use crate::api::DynamoApi;
use crate::error::{ApiError, ErrorKind};
use crate::request::Members;
use crate::signature::{SignedRequest, require_signature};
use crate::typed;
use crate::wire::Answer;

/// The prefixes of DynamoDB's and DynamoDB Streams' operations' targets.
const DYNAMODB_TARGET: &str = "DynamoDB_20120810.";
const STREAMS_TARGET: &str = "DynamoDBStreams_20120810.";
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
const TARGET: HeaderName = HeaderName::from_static("x-amz-target");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-amzn-requestid");
const CRC32: HeaderName = HeaderName::from_static("x-amz-crc32");

/// Answers one request, whatever its path: DynamoDB routes by header only.
pub(crate) async fn handle(State(api): State<Arc<DynamoApi>>, request: Request) -> Response {
    // The head's parts are moved out, where the `HeaderMap`, `Method` and
    // `Uri` extractors would copy them; the body is read as the `Bytes`
    // extractor reads it (the extensions keep its limit).
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let method = std::mem::take(&mut parts.method);
    let uri = std::mem::take(&mut parts.uri);
    let body = match Bytes::from_request(Request::from_parts(parts, body), &api).await {
        Ok(body) => body,
        Err(rejection) => return rejection.into_response(),
    };
    let started = Instant::now();
    let mut request_id = [0; ulid::ULID_LEN];
    let request_id: &str = ulid::Ulid::generate().array_to_str(&mut request_id);
    let operation = headers
        .get(TARGET)
        .and_then(|target| target.to_str().ok())
        .unwrap_or_default();
    let signed = SignedRequest {
        method: &method,
        uri: &uri,
        headers: &headers,
        body: &body,
    };
    // Where the client reached this endpoint: DescribeEndpoints' answer.
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or_default();
    let outcome = match verify(&api, operation, &signed) {
        Ok(()) => answer(&api, operation, &body, host).await,
        Err(refused) => Err(refused),
    };
    let elapsed_us = started.elapsed().as_micros() as u64;
    let (status, body) = match outcome {
        Ok(answer) => {
            tracing::debug!(
                operation,
                request_id,
                status = 200,
                elapsed_us,
                "dynamodb request"
            );
            (StatusCode::OK, answer.into_bytes())
        }
        Err(error) => {
            let status = error.kind.status();
            if status.is_server_error() {
                tracing::warn!(
                    operation,
                    request_id,
                    status = status.as_u16(),
                    elapsed_us,
                    error = %error,
                    "dynamodb request"
                );
            } else {
                tracing::debug!(
                    operation,
                    request_id,
                    status = status.as_u16(),
                    elapsed_us,
                    error = %error,
                    "dynamodb request"
                );
            }
            (status, Answer::from(error.envelope()).into_bytes())
        }
    };
    respond(status, body, request_id)
}

/// The operations rave serves.
#[derive(Debug, Clone, Copy)]
enum Operation {
    CreateTable,
    DescribeTable,
    UpdateTable,
    ListTables,
    DeleteTable,
    GetItem,
    PutItem,
    UpdateItem,
    DeleteItem,
    BatchGetItem,
    BatchWriteItem,
    Query,
    Scan,
    TransactWriteItems,
    TransactGetItems,
    ExecuteStatement,
    BatchExecuteStatement,
    ExecuteTransaction,
    UpdateTimeToLive,
    DescribeTimeToLive,
    DescribeLimits,
    DescribeEndpoints,
    TagResource,
    UntagResource,
    ListTagsOfResource,
    ListStreams,
    DescribeStream,
    GetShardIterator,
    GetRecords,
}

impl Operation {
    /// The data plane: operations on a table's items.
    fn on_items(self) -> bool {
        matches!(
            self,
            Operation::GetItem
                | Operation::PutItem
                | Operation::UpdateItem
                | Operation::DeleteItem
                | Operation::BatchGetItem
                | Operation::BatchWriteItem
                | Operation::Query
                | Operation::Scan
                | Operation::TransactWriteItems
                | Operation::TransactGetItems
                | Operation::ExecuteStatement
                | Operation::BatchExecuteStatement
                | Operation::ExecuteTransaction
        )
    }

    /// PutItem, UpdateItem and DeleteItem, which DynamoDB's current
    /// validation layer answers inside its envelope.
    fn writes_one_item(self) -> bool {
        matches!(
            self,
            Operation::PutItem | Operation::UpdateItem | Operation::DeleteItem
        )
    }

    /// The operation an `X-Amz-Target` names: each service's operations
    /// only under its own prefix.
    fn targeted(target: &str) -> Option<Operation> {
        if let Some(name) = target.strip_prefix(STREAMS_TARGET) {
            return Some(match name {
                "ListStreams" => Operation::ListStreams,
                "DescribeStream" => Operation::DescribeStream,
                "GetShardIterator" => Operation::GetShardIterator,
                "GetRecords" => Operation::GetRecords,
                _ => return None,
            });
        }
        Some(match target.strip_prefix(DYNAMODB_TARGET)? {
            "CreateTable" => Operation::CreateTable,
            "DescribeTable" => Operation::DescribeTable,
            "UpdateTable" => Operation::UpdateTable,
            "ListTables" => Operation::ListTables,
            "DeleteTable" => Operation::DeleteTable,
            "GetItem" => Operation::GetItem,
            "PutItem" => Operation::PutItem,
            "UpdateItem" => Operation::UpdateItem,
            "DeleteItem" => Operation::DeleteItem,
            "BatchGetItem" => Operation::BatchGetItem,
            "BatchWriteItem" => Operation::BatchWriteItem,
            "Query" => Operation::Query,
            "Scan" => Operation::Scan,
            "TransactWriteItems" => Operation::TransactWriteItems,
            "TransactGetItems" => Operation::TransactGetItems,
            "ExecuteStatement" => Operation::ExecuteStatement,
            "BatchExecuteStatement" => Operation::BatchExecuteStatement,
            "ExecuteTransaction" => Operation::ExecuteTransaction,
            "UpdateTimeToLive" => Operation::UpdateTimeToLive,
            "DescribeTimeToLive" => Operation::DescribeTimeToLive,
            "DescribeLimits" => Operation::DescribeLimits,
            "DescribeEndpoints" => Operation::DescribeEndpoints,
            "TagResource" => Operation::TagResource,
            "UntagResource" => Operation::UntagResource,
            "ListTagsOfResource" => Operation::ListTagsOfResource,
            _ => return None,
        })
    }
}

/// Checks the signature of a request for an operation rave serves: always
/// that there is a complete one, and against the keys when the API has
/// some; an unknown target is answered as such first.
fn verify(api: &DynamoApi, operation: &str, request: &SignedRequest<'_>) -> Result<(), ApiError> {
    if Operation::targeted(operation).is_none() {
        return Ok(());
    }
    match &api.credentials {
        Some(credentials) => credentials.verify(request, std::time::SystemTime::now()),
        None => require_signature(request.headers),
    }
}

/// A body that is not JSON is a SerializationException whatever the
/// target, as DynamoDB answers; only an empty one leaves an unknown target
/// to be reported as such. A plain GetItem or Query is read by `typed`,
/// without the general path's `Value`.
async fn answer(
    api: &DynamoApi,
    operation: &str,
    body: &[u8],
    host: &str,
) -> Result<Answer, ApiError> {
    let operation = Operation::targeted(operation);
    let typed = match operation {
        Some(Operation::GetItem) => match typed::get_item(body) {
            Some(read) => Some(items::read_item(api, read).await),
            None => None,
        },
        Some(Operation::Query) => match typed::query(body) {
            Some((input, detail)) => Some(query_scan::read_page(api, input, detail).await),
            None => None,
        },
        _ => None,
    };
    if let (Some(operation), Some(answer)) = (operation, typed) {
        return reworded(operation, ValidationLayer::Operation, answer);
    }
    let depth = nesting_depth(body);
    let request: Value = match parse_request(body, depth) {
        Ok(request) => request,
        Err(_) if body.is_empty() && operation.is_none() => {
            return Err(ApiError::unknown_operation());
        }
        Err(error) => return Err(ApiError::serialization(error)),
    };
    let operation = operation.ok_or_else(ApiError::unknown_operation)?;
    let layer = ValidationLayer::reading(operation, depth);
    dispatch(api, operation, Members::of(&request)?, host, layer).await
}

/// Deepest a body may nest for DynamoDB's current validation layer to read
/// it (a JSON parser's default limit, which a value nested about 62 levels
/// reaches): the item writes leave a deeper body to the older layer.
const CURRENT_LAYER_MAX_DEPTH: usize = 128;

/// Which of DynamoDB's validation layers answers a request, and so in whose
/// words and order its refusals come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValidationLayer {
    /// The layer the operation runs (see [`in_current_words`]).
    Operation,
    /// The older layer, which an item write falls back to for a body nested
    /// past [`CURRENT_LAYER_MAX_DEPTH`]: its words (rave's checks' own),
    /// bare, and its order (every enum before any value).
    Older,
}

impl ValidationLayer {
    /// The layer that reads a body of `operation` nesting `depth` levels.
    fn reading(operation: Operation, depth: usize) -> ValidationLayer {
        if operation.writes_one_item() && depth > CURRENT_LAYER_MAX_DEPTH {
            ValidationLayer::Older
        } else {
            ValidationLayer::Operation
        }
    }
}

/// `error` in the words DynamoDB's current validation layer answers
/// `operation` with, where they differ from the words rave's checks use.
fn in_current_words(operation: Operation, error: ApiError) -> ApiError {
    let item_write = operation.writes_one_item();
    if error.older_words_on_put_item && matches!(operation, Operation::PutItem) {
        return error;
    }
    // A refused value: the item writes answer in the current words inside
    // the envelope, the single and batch reads and Query in them bare, the
    // other operations still in the older words.
    if let Some(current) = &error.current_wording {
        let reads = matches!(
            operation,
            Operation::GetItem | Operation::BatchGetItem | Operation::Query
        );
        return match (item_write, reads) {
            (true, _) => ApiError::validation(format!("1 validation error detected: {current}")),
            (false, true) => ApiError::validation(current.clone()),
            (false, false) => error,
        };
    }
    match &error.message {
        Some(message) if item_write && error.enveloped_by_item_writes => {
            ApiError::validation(format!("1 validation error detected: {message}"))
        }
        _ => error,
    }
}

/// Deepest JSON nesting a request may have. DynamoDB answers a value
/// nested past its 32 levels, 100 levels deep say, with its own validation
/// errors (in their order), so the body must parse beyond serde_json's
/// default limit of 128; this bound keeps parsing, and dropping, the value
/// within a thread's stack.
const MAX_REQUEST_DEPTH: usize = 512;

/// The request as JSON, or why it is not (a SerializationException's
/// message); `depth` is the body's [`nesting_depth`].
fn parse_request(body: &[u8], depth: usize) -> Result<Value, String> {
    if depth > MAX_REQUEST_DEPTH {
        return Err(format!(
            "the request body nests deeper than {MAX_REQUEST_DEPTH} levels"
        ));
    }
    let not_json = |error: serde_json::Error| format!("the request body is not JSON: {error}");
    let mut parser = serde_json::Deserializer::from_slice(body);
    parser.disable_recursion_limit();
    let request = Value::deserialize(&mut parser).map_err(not_json)?;
    parser.end().map_err(not_json)?;
    Ok(request)
}

/// How deep the arrays and objects of a JSON text nest (brackets inside
/// strings not counted); for a text that is not JSON, whatever its
/// brackets say, which the parser then refuses anyway.
fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in text {
        match (in_string, byte) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

async fn dispatch(
    api: &DynamoApi,
    operation: Operation,
    body: Members<'_>,
    host: &str,
    layer: ValidationLayer,
) -> Result<Answer, ApiError> {
    reworded(operation, layer, run(api, operation, body, host).await)
}

/// An operation's refusal in the words of the validation layer that read
/// its request.
fn reworded(
    operation: Operation,
    layer: ValidationLayer,
    answer: Result<Answer, ApiError>,
) -> Result<Answer, ApiError> {
    let answer = answer.map_err(|error| match layer {
        ValidationLayer::Operation => in_current_words(operation, error),
        ValidationLayer::Older => error,
    });
    match answer {
        // DynamoDB names the missing table in the control plane's answers
        // only: an item operation says no more than this.
        Err(error) if error.kind == ErrorKind::ResourceNotFound && operation.on_items() => Err(
            ApiError::new(ErrorKind::ResourceNotFound, "Requested resource not found"),
        ),
        answer => answer,
    }
}

async fn run(
    api: &DynamoApi,
    operation: Operation,
    body: Members<'_>,
    host: &str,
) -> Result<Answer, ApiError> {
    match operation {
        Operation::CreateTable => create_table::create_table(api, body)
            .await
            .map(Answer::from),
        Operation::DescribeTable => describe_table::describe_table(api, body)
            .await
            .map(Answer::from),
        Operation::UpdateTable => update_table::update_table(api, body)
            .await
            .map(Answer::from),
        Operation::ListTables => list_tables::list_tables(api, body).await.map(Answer::from),
        Operation::DeleteTable => delete_table::delete_table(api, body)
            .await
            .map(Answer::from),
        Operation::GetItem => items::get_item(api, body).await,
        Operation::PutItem => items::put_item(api, body).await.map(Answer::from),
        Operation::UpdateItem => items::update_item(api, body).await.map(Answer::from),
        Operation::DeleteItem => items::delete_item(api, body).await.map(Answer::from),
        Operation::BatchGetItem => batch::batch_get_item(api, body).await.map(Answer::from),
        Operation::BatchWriteItem => batch::batch_write_item(api, body).await.map(Answer::from),
        Operation::Query => query_scan::query(api, body).await,
        Operation::Scan => query_scan::scan(api, body).await,
        Operation::TransactWriteItems => transact::transact_write_items(api, body)
            .await
            .map(Answer::from),
        Operation::TransactGetItems => transact::transact_get_items(api, body)
            .await
            .map(Answer::from),
        Operation::ExecuteStatement => partiql::execute_statement(api, body)
            .await
            .map(Answer::from),
        Operation::BatchExecuteStatement => partiql::batch_execute_statement(api, body)
            .await
            .map(Answer::from),
        Operation::ExecuteTransaction => partiql::execute_transaction(api, body)
            .await
            .map(Answer::from),
        Operation::UpdateTimeToLive => time_to_live::update_time_to_live(api, body)
            .await
            .map(Answer::from),
        Operation::DescribeTimeToLive => time_to_live::describe_time_to_live(api, body)
            .await
            .map(Answer::from),
        Operation::DescribeLimits => describe_limits::describe_limits(api, body)
            .await
            .map(Answer::from),
        Operation::DescribeEndpoints => Ok(describe_endpoints::describe_endpoints(host).into()),
        Operation::TagResource => tags::tag_resource(api, body).await.map(Answer::from),
        Operation::UntagResource => tags::untag_resource(api, body).await.map(Answer::from),
        Operation::ListTagsOfResource => tags::list_tags_of_resource(api, body)
            .await
            .map(Answer::from),
        Operation::ListStreams => streams::list_streams(api, body).await.map(Answer::from),
        Operation::DescribeStream => streams::describe_stream(api, body).await.map(Answer::from),
        Operation::GetShardIterator => streams::get_shard_iterator(api, body)
            .await
            .map(Answer::from),
        Operation::GetRecords => streams::get_records(api, body).await.map(Answer::from),
    }
}

fn respond(status: StatusCode, bytes: Vec<u8>, request_id: &str) -> Response {
    let crc = crc32fast::hash(&bytes);
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert(REQUEST_ID, id);
    }
    headers.insert(CRC32, HeaderValue::from(crc));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_outside_strings() {
        assert_eq!(nesting_depth(b"{}"), 1);
        assert_eq!(nesting_depth(br#"{"a": [{"b": []}], "c": {}}"#), 4);
        assert_eq!(nesting_depth(br#"{"a": "[[[{{{"}"#), 1);
        assert_eq!(nesting_depth(br#"{"a": "\"[[", "b": [[]]}"#), 3);
        assert_eq!(nesting_depth(br#"{"a": "\\", "b": [[]]}"#), 3);
    }

    #[test]
    fn only_the_item_writes_fall_back_to_the_older_layer_past_its_depth() {
        for operation in [
            Operation::PutItem,
            Operation::UpdateItem,
            Operation::DeleteItem,
        ] {
            assert_eq!(
                ValidationLayer::reading(operation, CURRENT_LAYER_MAX_DEPTH),
                ValidationLayer::Operation
            );
            assert_eq!(
                ValidationLayer::reading(operation, CURRENT_LAYER_MAX_DEPTH + 1),
                ValidationLayer::Older
            );
        }
        for operation in [Operation::GetItem, Operation::Query, Operation::Scan] {
            assert_eq!(
                ValidationLayer::reading(operation, MAX_REQUEST_DEPTH),
                ValidationLayer::Operation
            );
        }
    }

    #[test]
    fn requests_parse_past_the_default_depth_up_to_the_bound() {
        let nested = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
        let parse = |body: &[u8]| parse_request(body, nesting_depth(body));
        assert!(parse(nested(MAX_REQUEST_DEPTH).as_bytes()).is_ok());
        assert_eq!(
            parse(nested(MAX_REQUEST_DEPTH + 1).as_bytes()),
            Err("the request body nests deeper than 512 levels".to_owned())
        );
        assert!(
            parse(b"{")
                .unwrap_err()
                .starts_with("the request body is not JSON")
        );
    }
}

//! DynamoDB's JSON wire protocol over rave's embedded engine, so that the
//! AWS CLI, boto3 and the AWS SDKs can use an engine's data directory as
//! they would use DynamoDB (`rave dynamodb-api`). It talks to the `Engine`
//! directly, not to a `SharedStore`: ListTables, DeleteTable, UpdateTable
//! and the streams are engine operations outside the `Store` trait.
//!
//! Nothing is faked. A member rave does not implement yet (replicas, warm
//! throughput, resource policies) is refused with a ValidationException
//! naming it, never ignored; an operation rave does not serve answers
//! UnknownOperationException, as DynamoDB answers a name it does not know.
//!
//! * `protocol` — HTTP: the `X-Amz-Target` dispatch, request ids, CRC32;
//! * `signature` — Signature V4 verification, when given access keys;
//! * `error` — DynamoDB's exception types, statuses and error envelope;
//! * `wire` — attribute values in DynamoDB JSON;
//! * `request` — reading request members with DynamoDB's errors, and
//!   rendering consumed capacity; `collections` — item collection metrics;
//! * `typed` — plain GetItem and Query requests read straight into their
//!   inputs, the rest left to `request`'s reading;
//! * `expressions` — placeholder maps, the expression parser, projections;
//!   `legacy` — the parameters that predate expressions, as the same trees;
//! * `actions/` — the operations, one file per operation or small family
//!   (`items`: the four single-item operations; `batch`, `transact`,
//!   `query_scan`, `tags`, `time_to_live`; `streams`: DynamoDB Streams on
//!   the engine's change stream), found through `protocol`'s operation table;
//! * `partiql` — PartiQL statements translated into the operations they
//!   stand for (`actions/partiql` runs them);
//! * `api` — [`DynamoApi`], the state the operations share;
//! * `description` — the `TableDescription` the table operations answer
//!   with; `table_spec` — the table shapes CreateTable and UpdateTable read;
//! * `writes` — what the item writes share; `arn` — table and stream ARNs;
//! * `idempotency` — TransactWriteItems' client request tokens;
//! * `metadata` — what DynamoDB describes about a table that the engine
//!   does not keep (creation time, billing mode, tags, stream view type).

#![warn(unreachable_pub)]

mod actions;
mod api;
mod arn;
mod collections;
mod description;
mod error;
mod expressions;
mod idempotency;
mod legacy;
mod metadata;
mod partiql;
mod protocol;
mod request;
mod settings;
mod signature;
mod table_spec;
mod typed;
mod wire;
mod writes;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::net::TcpListener;

pub use api::DynamoApi;
pub use metadata::{METADATA_FILE, MetadataError};
pub use signature::{Credentials, CredentialsError};

/// Largest request body accepted: DynamoDB's own limit (16 MB), which a
/// full BatchWriteItem of 25 items of 400 KB stays well under.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Every path and method goes to the one handler: DynamoDB dispatches on
/// the `X-Amz-Target` header alone.
pub fn router(api: Arc<DynamoApi>) -> Router {
    Router::new()
        .fallback(protocol::handle)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(api)
}

/// Serves the API on `listener` until `shutdown` completes, then finishes
/// the requests in flight.
pub async fn serve(
    listener: TcpListener,
    api: Arc<DynamoApi>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(api))
        .with_graceful_shutdown(shutdown)
        .await
}

//! DynamoDB's JSON wire protocol over rave's embedded engine, so that the
//! AWS CLI, boto3 and the AWS SDKs can use an engine's data directory as
//! they would use DynamoDB.
//!
//! * `protocol` — HTTP: the `X-Amz-Target` dispatch, request ids, CRC32;
//! * `signature` — Signature V4 verification, when given access keys;
//! * `error` — DynamoDB's exception types, statuses and error envelope;
//! * `wire` — attribute values in DynamoDB JSON;
//! * `request` — reading request members with DynamoDB's errors, and
//!   rendering consumed capacity; `collections` — item collection metrics;
//! * `expressions` — placeholder maps, the expression parser, projections;
//!   `legacy` — the parameters that predate expressions, as the same trees;
//! * `tables`, `update_table`, `items`, `batch`, `pages`, `transact` — the
//!   operations;
//! * `ttl` — the Time to Live pair and DescribeLimits; `tags` — tagging;
//! * `streams` — DynamoDB Streams on the engine's change stream;
//! * `idempotency` — TransactWriteItems' client request tokens;
//! * `metadata` — what DynamoDB describes about a table that the engine
//!   does not keep (creation time, billing mode, tags, stream view type).

mod batch;
mod collections;
mod error;
mod expressions;
mod idempotency;
mod items;
mod legacy;
mod metadata;
mod pages;
mod protocol;
mod request;
mod settings;
mod signature;
mod streams;
mod tables;
mod tags;
mod transact;
mod ttl;
mod update_table;
mod wire;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use rave_engine::Engine;
use tokio::net::TcpListener;

pub use metadata::{METADATA_FILE, MetadataError};
pub use signature::{Credentials, CredentialsError};

/// Largest request body accepted: DynamoDB's own limit (16 MB), which a
/// full BatchWriteItem of 25 items of 400 KB stays well under.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The API over one engine.
#[derive(Debug)]
pub struct DynamoApi {
    engine: Engine,
    metadata: metadata::MetadataStore,
    client_tokens: idempotency::TokenLedger,
    /// The keys requests must be signed with; `None` checks that they are
    /// signed, not with what.
    credentials: Option<Credentials>,
}

impl DynamoApi {
    /// Serves `engine`, keeping table metadata beside its database file.
    pub fn new(engine: Engine) -> Result<DynamoApi, MetadataError> {
        let data_dir = engine.path().parent().unwrap_or(Path::new("."));
        let metadata = metadata::MetadataStore::open(data_dir)?;
        Ok(DynamoApi {
            engine,
            metadata,
            client_tokens: idempotency::TokenLedger::default(),
            credentials: None,
        })
    }

    /// Serves only requests signed (Signature V4) with one of `credentials`.
    pub fn with_credentials(self, credentials: Credentials) -> DynamoApi {
        DynamoApi {
            credentials: Some(credentials),
            ..self
        }
    }
}

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

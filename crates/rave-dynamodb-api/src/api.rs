//! [`DynamoApi`]: the state every operation runs against (the engine, the
//! table metadata rave keeps beside it, TransactWriteItems' client request
//! tokens and the access keys requests must be signed with).

use std::path::Path;

use rave_engine::Engine;

use crate::idempotency::TokenLedger;
use crate::metadata::{MetadataError, MetadataStore};
use crate::signature::Credentials;

/// The API over one engine.
#[derive(Debug)]
pub struct DynamoApi {
    pub(crate) engine: Engine,
    pub(crate) metadata: MetadataStore,
    pub(crate) client_tokens: TokenLedger,
    /// The keys requests must be signed with; `None` checks that they are
    /// signed, not with what.
    pub(crate) credentials: Option<Credentials>,
}

impl DynamoApi {
    /// Serves `engine`, keeping table metadata beside its database file.
    pub fn new(engine: Engine) -> Result<DynamoApi, MetadataError> {
        let data_dir = engine.path().parent().unwrap_or(Path::new("."));
        let metadata = MetadataStore::open(data_dir)?;
        Ok(DynamoApi {
            engine,
            metadata,
            client_tokens: TokenLedger::default(),
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

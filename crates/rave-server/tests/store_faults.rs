//! What a client sees when the store fails under a request: conflicts are
//! retried inside the domain (an idempotent create answers 201 or its
//! replay, never a 500), a write whose answer was lost is replayed, and a
//! store that stays unavailable answers 503 with `Retry-After`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rave_access::{Access, AccessConfig};
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_engine::Engine;
use rave_server::{AppState, ServerConfig};
use rave_store::{
    BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput, BatchWriteItemOutput,
    CancellationReason, DeleteItemInput, GetItemInput, GetItemOutput, Page, PutItemInput,
    QueryInput, Result, ScanInput, SharedStore, Store, StoreError, TableDefinition,
    TransactWriteItemsInput, TransactWriteItemsOutput, UpdateItemInput, WriteOutput,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// What the next TransactWriteItems does instead of (or after) committing.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Refused before anything is written, as DynamoDB refuses a transaction
    /// that meets another one.
    Conflict,
    /// Cancelled for a conflict on one of its items.
    CancelledByConflict,
    /// Committed, but the answer never arrives (a timeout).
    LostAfterCommit,
    /// Refused: the storage cannot serve.
    Unavailable,
}

/// The engine, with faults injected into its transactions.
#[derive(Debug, Clone)]
struct Faulty {
    engine: Engine,
    faults: Arc<Mutex<VecDeque<Fault>>>,
}

impl Faulty {
    fn inject(&self, faults: impl IntoIterator<Item = Fault>) {
        self.faults.lock().unwrap().extend(faults);
    }
}

impl Store for Faulty {
    async fn create_table(&self, definition: TableDefinition) -> Result<()> {
        self.engine.create_table(definition).await
    }
    async fn describe_table(&self, table: &str) -> Result<TableDefinition> {
        self.engine.describe_table(table).await
    }
    async fn get_item(&self, input: GetItemInput) -> Result<GetItemOutput> {
        self.engine.get_item(input).await
    }
    async fn put_item(&self, input: PutItemInput) -> Result<WriteOutput> {
        self.engine.put_item(input).await
    }
    async fn update_item(&self, input: UpdateItemInput) -> Result<WriteOutput> {
        self.engine.update_item(input).await
    }
    async fn delete_item(&self, input: DeleteItemInput) -> Result<WriteOutput> {
        self.engine.delete_item(input).await
    }
    async fn query(&self, input: QueryInput) -> Result<Page> {
        self.engine.query(input).await
    }
    async fn scan(&self, input: ScanInput) -> Result<Page> {
        self.engine.scan(input).await
    }
    async fn batch_get_item(&self, input: BatchGetItemInput) -> Result<BatchGetItemOutput> {
        self.engine.batch_get_item(input).await
    }
    async fn batch_write_item(&self, input: BatchWriteItemInput) -> Result<BatchWriteItemOutput> {
        self.engine.batch_write_item(input).await
    }
    async fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> Result<TransactWriteItemsOutput> {
        let fault = self.faults.lock().unwrap().pop_front();
        match fault {
            None => self.engine.transact_write_items(input).await,
            Some(Fault::Conflict) => Err(StoreError::TransactionConflict(
                "another transaction holds the item".into(),
            )),
            Some(Fault::CancelledByConflict) => Err(StoreError::TransactionCanceled(vec![
                CancellationReason::TransactionConflict,
                CancellationReason::None,
            ])),
            Some(Fault::LostAfterCommit) => {
                self.engine.transact_write_items(input).await?;
                Err(StoreError::Unavailable("the answer timed out".into()))
            }
            Some(Fault::Unavailable) => Err(StoreError::Unavailable("disk full".into())),
        }
    }
}

struct TestServer {
    base: String,
    client: reqwest::Client,
    store: Faulty,
    _dir: tempfile::TempDir,
}

async fn start() -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let store = Faulty {
        engine: Engine::open(dir.path()).unwrap(),
        faults: Arc::default(),
    };
    let comments = Arc::new(Comments::new(
        SharedStore::new(store.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([5; 32]),
            moderation: Moderation::Off,
        },
    ));
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(store.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        admin_token: None,
        rate_limit_per_minute: 0,
    };
    let state = AppState::new(comments, access, &config);
    tokio::spawn(rave_server::serve(
        listener,
        state,
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));
    TestServer {
        base,
        client: reqwest::Client::new(),
        store,
        _dir: dir,
    }
}

impl TestServer {
    async fn create(&self, key: &str) -> (StatusCode, Option<String>, Value) {
        let response = self
            .client
            .post(format!("{}/v1/products/42/comments", self.base))
            .header("Idempotency-Key", key)
            .json(&json!({"author": "ann", "language": "en", "rating": 4, "body": "Good."}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, retry_after, response.json().await.unwrap())
    }

    async fn listed(&self) -> usize {
        let page: Value = self
            .client
            .get(format!("{}/v1/products/42/comments", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        page["items"].as_array().unwrap().len()
    }
}

#[tokio::test]
async fn conflicts_on_an_idempotent_create_are_retried_not_a_500() {
    let server = start().await;
    server
        .store
        .inject([Fault::Conflict, Fault::CancelledByConflict]);
    let (status, _, body) = server.create("k-1").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(server.listed().await, 1);
    // A retry of the same request is a replay of the same comment.
    let (status, _, again) = server.create("k-1").await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(again["id"], body["id"]);
    assert_eq!(server.listed().await, 1);
}

#[tokio::test]
async fn a_create_whose_answer_was_lost_is_replayed_once() {
    let server = start().await;
    server.store.inject([Fault::LostAfterCommit]);
    let (status, _, body) = server.create("k-2").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(server.listed().await, 1, "stored once, not twice");
}

#[tokio::test]
async fn a_store_that_stays_unavailable_answers_503_with_retry_after_and_stores_nothing() {
    let server = start().await;
    server.store.inject([Fault::Unavailable; 8]);
    let (status, retry_after, body) = server.create("k-3").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["status"], 503);
    assert!(retry_after.is_some_and(|s| s.parse::<u64>().unwrap() >= 1));
    assert_eq!(server.listed().await, 0);
    // Once the store answers again, so does the same request.
    let (status, _, _) = server.create("k-3").await;
    assert_eq!(status, StatusCode::CREATED);
}

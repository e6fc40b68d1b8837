//! A DynamoDB API server on a fresh data directory, in process, and a client
//! that checks what every DynamoDB response must carry.

use std::sync::Arc;

use rave_dynamodb_api::{Credentials, DynamoApi};
use rave_engine::{Engine, EngineOptions};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub struct Server {
    pub url: String,
    /// The engine the server serves, for what only the engine can do
    /// (sweeping expired items now).
    pub engine: Engine,
    dir: tempfile::TempDir,
    client: reqwest::Client,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// One response, its headers already checked.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Server {
    pub async fn start() -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Server::start_in(dir).await
    }

    /// Serves the data directory `dir` (which may hold tables already).
    pub async fn start_in(dir: tempfile::TempDir) -> Server {
        Server::serve(dir, None, EngineOptions::default()).await
    }

    /// A server whose engine runs with `options` (a smaller limit a test
    /// can reach).
    pub async fn start_with(options: EngineOptions) -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Server::serve(dir, None, options).await
    }

    /// A server that verifies signatures against `credentials`, a
    /// credentials file's text.
    pub async fn start_verifying(credentials: &str) -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let credentials = Credentials::parse(credentials).expect("valid credentials");
        Server::serve(dir, Some(credentials), EngineOptions::default()).await
    }

    async fn serve(
        dir: tempfile::TempDir,
        credentials: Option<Credentials>,
        options: EngineOptions,
    ) -> Server {
        let engine = Engine::open_with(dir.path(), options).expect("the engine opens");
        let mut api = DynamoApi::new(engine.clone()).expect("the metadata opens");
        if let Some(credentials) = credentials {
            api = api.with_credentials(credentials);
        }
        let api = Arc::new(api);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            rave_dynamodb_api::serve(listener, api, async {
                let _ = stopped.await;
            })
            .await
            .expect("the server runs");
        });
        Server {
            url,
            engine,
            dir,
            client: reqwest::Client::new(),
            stop,
            task,
        }
    }

    /// Asserts that `table` holds no item: the refused requests sent to it
    /// wrote nothing.
    pub async fn assert_table_empty(&self, table: &str) {
        let scan = self.call("Scan", json!({"TableName": table})).await.ok();
        assert_eq!(scan["Count"], 0, "refused requests wrote {scan}");
    }

    /// A table keyed by `pk` (S) alone, on demand ([`hash_keyed_table`]).
    pub async fn create_hash_keyed_table(&self, name: &str) -> Value {
        self.call("CreateTable", hash_keyed_table(name)).await.ok()
    }

    /// A table keyed by `pk` (S) and `sk` (N), on demand, with one index on
    /// `gsi` (S) that projects `title`.
    pub async fn create_comments_table(&self, name: &str) -> Value {
        self.call(
            "CreateTable",
            json!({
                "TableName": name,
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "N"},
                    {"AttributeName": "gsi", "AttributeType": "S"},
                ],
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "GlobalSecondaryIndexes": [{
                    "IndexName": "byGsi",
                    "KeySchema": [{"AttributeName": "gsi", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["title"]},
                }],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .ok()
    }

    /// Stops serving, closes the engine and hands back the data directory.
    pub async fn stop(self) -> tempfile::TempDir {
        let Server {
            dir,
            stop,
            task,
            engine,
            ..
        } = self;
        let _ = stop.send(());
        task.await.expect("the server task ends cleanly");
        drop(engine);
        dir
    }

    /// Sends `body` as DynamoDB operation `operation`, signed the way the
    /// AWS SDKs sign (the signature is not checked).
    pub async fn call(&self, operation: &str, body: Value) -> Answer {
        self.send(&format!("DynamoDB_20120810.{operation}"), body.to_string())
            .await
    }

    /// Sends `body` as DynamoDB Streams operation `operation`.
    pub async fn call_streams(&self, operation: &str, body: Value) -> Answer {
        self.send(
            &format!("DynamoDBStreams_20120810.{operation}"),
            body.to_string(),
        )
        .await
    }

    pub async fn send(&self, target: &str, body: String) -> Answer {
        self.send_with(
            target,
            body,
            &[
                ("x-amz-date", "20261123T120000Z"),
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261123/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0123456789abcdef",
                ),
            ],
        )
        .await
    }

    /// Sends `body` to `target` with `headers` and no others but the
    /// content type.
    pub async fn send_with(&self, target: &str, body: String, headers: &[(&str, &str)]) -> Answer {
        let mut request = self
            .client
            .post(format!("{}/", self.url))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", target);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.body(body).send().await.expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("a body");
        assert_eq!(
            headers.get("content-type").and_then(|v| v.to_str().ok()),
            Some("application/x-amz-json-1.0")
        );
        let crc: u32 = headers
            .get("x-amz-crc32")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .expect("an x-amz-crc32 header");
        assert_eq!(
            crc,
            crc32fast::hash(&bytes),
            "x-amz-crc32 is the body's CRC32"
        );
        let request_id = headers
            .get("x-amzn-requestid")
            .and_then(|v| v.to_str().ok())
            .expect("an x-amzn-RequestId header");
        assert!(request_id.len() >= 16 && request_id.bytes().all(|b| b.is_ascii_alphanumeric()));
        let body = serde_json::from_slice(&bytes).expect("a JSON body");
        Answer { status, body }
    }
}

impl Answer {
    /// The body of a successful answer.
    #[track_caller]
    pub fn ok(self) -> Value {
        assert_eq!(self.status, 200, "expected success, got {}", self.body);
        self.body
    }

    /// Checks an error answer: status, DynamoDB's `__type` (in the
    /// namespace DynamoDB gives that exception) and message.
    #[track_caller]
    pub fn error(self, status: u16, exception: &str, message: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        let namespace = match exception {
            "ValidationException" => "com.amazon.coral.validate",
            _ => "com.amazonaws.dynamodb.v20120810",
        };
        assert_eq!(
            self.body["__type"],
            format!("{namespace}#{exception}"),
            "{}",
            self.body
        );
        let key = match exception {
            "TransactionCanceledException" => "Message",
            _ => "message",
        };
        assert_eq!(self.body[key], message, "{}", self.body);
    }
}

/// The CreateTable request of a table keyed by `pk` (S) alone, on demand,
/// without indexes: tests add what they need to it.
pub fn hash_keyed_table(name: &str) -> Value {
    json!({
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    })
}

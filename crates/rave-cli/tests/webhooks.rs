//! Webhooks from the `rave` binary: every event reaches a receiver on
//! loopback, verified by the Standard Webhooks library from PyPI, in order;
//! `serve` killed with SIGKILL mid-delivery loses no event (a duplicate
//! carries the same `webhook-id`); without `--webhook-allow-private` a
//! loopback target is refused; on DynamoDB the events come from DynamoDB
//! Streams, signed and in order.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use common::Server;
use serde_json::{Value, json};

const TOKEN: &str = "webhook-test-token";

/// `rave serve` with the admin token the tests use.
fn serve(data: &Path, extra: &[&str]) -> Server {
    let mut args = vec!["--admin-token", TOKEN];
    args.extend_from_slice(extra);
    common::serve(data, &args)
}

#[derive(Debug, Clone)]
struct Received {
    headers: BTreeMap<String, String>,
    body: String,
}

type Inbox = Arc<Mutex<Vec<Received>>>;

/// A receiver on loopback that takes a little time per request, so that a
/// kill lands while deliveries are in flight.
async fn receiver() -> (String, Inbox) {
    let inbox = Inbox::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = Router::new()
        .route(
            "/hook",
            post(
                |State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes| async move {
                    tokio::time::sleep(Duration::from_millis(15)).await;
                    let headers = headers
                        .iter()
                        .filter(|(name, _)| name.as_str().starts_with("webhook-"))
                        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or_default().to_owned()))
                        .collect();
                    inbox.lock().unwrap().push(Received {
                        headers,
                        body: String::from_utf8(body.to_vec()).unwrap(),
                    });
                    StatusCode::NO_CONTENT
                },
            ),
        )
        .with_state(inbox.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, inbox)
}

async fn register(client: &reqwest::Client, base: &str, url: &str) -> (reqwest::StatusCode, Value) {
    let response = client
        .post(format!("{base}/v1/admin/webhooks"))
        .bearer_auth(TOKEN)
        .json(&json!({"url": url, "events": ["comment.created", "comment.published"]}))
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

/// Checks every delivery with the Standard Webhooks library when
/// `RAVE_STANDARDWEBHOOKS_PYTHON` names a Python that has it (scripts/test.sh
/// installs it, pinned); in CI its absence is a failure.
fn verify_with_the_library(secret: &str, received: &[Received]) {
    let Some(python) = std::env::var_os("RAVE_STANDARDWEBHOOKS_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "RAVE_STANDARDWEBHOOKS_PYTHON is not set: run the tests through scripts/test.sh"
        );
        eprintln!("RAVE_STANDARDWEBHOOKS_PYTHON is not set: signatures are checked in Rust only");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/verify_webhooks.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the verifier");
    {
        let mut stdin = child.stdin.take().unwrap();
        for r in received {
            let line = json!({"secret": secret, "headers": r.headers, "body": r.body});
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the Standard Webhooks library refused a delivery: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("verified {}", received.len())
    );
}

/// Posts `count` comments to `product` (published at once); answers their
/// ids in the order they were created.
async fn post_comments(
    client: &reqwest::Client,
    base: &str,
    product: &str,
    count: usize,
) -> Vec<String> {
    let mut ids = Vec::with_capacity(count);
    for n in 0..count {
        let response = client
            .post(format!("{base}/v1/products/{product}/comments"))
            .json(&json!({"author": "ann", "language": "en", "rating": 4, "body": format!("comment {n}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::CREATED);
        let body: Value = response.json().await.unwrap();
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    ids
}

/// Each comment's `comment.created` then `comment.published`, in order.
fn created_and_published(ids: &[String]) -> Vec<(String, String)> {
    ids.iter()
        .flat_map(|id| {
            [
                ("comment.created".to_owned(), id.clone()),
                ("comment.published".to_owned(), id.clone()),
            ]
        })
        .collect()
}

/// Waits (at most `limit`) until the inbox holds exactly the `expected`
/// events, duplicates aside; answers everything that arrived.
async fn wait_for_events(
    inbox: &Inbox,
    expected: &[(String, String)],
    limit: Duration,
) -> Vec<Received> {
    let expected: HashSet<&(String, String)> = expected.iter().collect();
    let started = std::time::Instant::now();
    loop {
        let received = inbox.lock().unwrap().clone();
        let got: Vec<(String, String)> = received.iter().map(event_of).collect();
        if got.iter().collect::<HashSet<_>>() == expected {
            return received;
        }
        assert!(
            started.elapsed() < limit,
            "not every event arrived: {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn event_of(r: &Received) -> (String, String) {
    let body: Value = serde_json::from_str(&r.body).unwrap();
    (
        body["type"].as_str().unwrap().to_owned(),
        body["data"]["id"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_delivery_loses_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--webhook-allow-private",
        "--webhook-first-retry-seconds",
        "0.1",
    ];
    let mut server = serve(dir.path(), &flags);
    let client = reqwest::Client::new();
    let (url, inbox) = receiver().await;
    let (status, endpoint) = register(&client, &server.base, &url).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{endpoint}");
    let secret = endpoint["secret"].as_str().unwrap().to_owned();

    let ids = post_comments(&client, &server.base, "p1", 40).await;
    for _ in 0..400 {
        if inbox.lock().unwrap().len() >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before_kill = inbox.lock().unwrap().len();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert!(
        before_kill < 80,
        "the kill came after every delivery ({before_kill})"
    );

    let _restarted = serve(dir.path(), &flags);
    let received = wait_for_events(
        &inbox,
        &created_and_published(&ids),
        Duration::from_secs(12),
    )
    .await;

    // One webhook-id per event, however often it arrived.
    let mut id_of_event = BTreeMap::new();
    for r in &received {
        let id = r.headers["webhook-id"].clone();
        let previous = id_of_event.insert(event_of(r), id.clone());
        assert!(
            previous.is_none_or(|p| p == id),
            "a duplicate keeps its webhook-id"
        );
    }
    assert_eq!(id_of_event.len(), 80);

    // In order: messages first arrive in stream order (ids sort that way),
    // and each comment's creation comes before its publication.
    let mut seen = HashSet::new();
    let first_arrivals: Vec<&Received> = received
        .iter()
        .filter(|r| seen.insert(r.headers["webhook-id"].clone()))
        .collect();
    let message_ids: Vec<&String> = first_arrivals
        .iter()
        .map(|r| &r.headers["webhook-id"])
        .collect();
    let mut sorted = message_ids.clone();
    sorted.sort();
    assert_eq!(message_ids, sorted, "order per endpoint holds");
    let order: Vec<(String, String)> = first_arrivals.iter().map(|r| event_of(r)).collect();
    let want: Vec<(String, String)> = ids
        .iter()
        .flat_map(|id| {
            [
                ("comment.created".to_owned(), id.clone()),
                ("comment.published".to_owned(), id.clone()),
            ]
        })
        .collect();
    assert_eq!(order, want);

    let key = rave_webhooks::Secret::parse(&secret).unwrap();
    for r in &received {
        let timestamp: i64 = r.headers["webhook-timestamp"].parse().unwrap();
        assert_eq!(
            r.headers["webhook-signature"],
            key.sign(&r.headers["webhook-id"], timestamp, r.body.as_bytes())
        );
    }
    verify_with_the_library(&secret, &received);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_targets_are_refused_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[]);
    let client = reqwest::Client::new();
    let (url, inbox) = receiver().await;
    for target in [
        url.clone(),
        url.replace("127.0.0.1", "localhost"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/hook".to_owned(),
    ] {
        let (status, problem) = register(&client, &server.base, &target).await;
        assert_eq!(
            status,
            reqwest::StatusCode::BAD_REQUEST,
            "{target}: {problem}"
        );
        assert_eq!(problem["status"], 400);
    }
    assert!(inbox.lock().unwrap().is_empty());
}

/// DynamoDB Local's address, from `RAVE_DYNAMODB_ENDPOINT` (scripts/test.sh
/// starts it); without it the test is skipped, except in CI, where that is
/// a failure.
#[cfg(feature = "dynamodb")]
fn dynamodb_endpoint() -> Option<String> {
    let endpoint = std::env::var("RAVE_DYNAMODB_ENDPOINT").ok();
    if endpoint.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |ci| ci != "true"),
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        );
        eprintln!("RAVE_DYNAMODB_ENDPOINT is not set: skipping the DynamoDB webhook test");
    }
    endpoint
}

#[cfg(feature = "dynamodb")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_the_receiver_gets_every_event_from_the_stream_signed_and_in_order() {
    let Some(endpoint) = dynamodb_endpoint() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let started_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let table = format!("rave-webhooks-{}-{started_at}", std::process::id());
    let mut command = Command::new(common::RAVE);
    command
        .args(common::serve_args(
            dir.path(),
            &[
                "--store",
                "dynamodb",
                "--table",
                &table,
                "--admin-token",
                TOKEN,
                "--webhook-allow-private",
                "--webhook-first-retry-seconds",
                "0.1",
            ],
        ))
        // DynamoDB Local takes any credentials; keep the SDK off instance metadata.
        .env("AWS_ACCESS_KEY_ID", "local")
        .env("AWS_SECRET_ACCESS_KEY", "local")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("RAVE_REGION", "us-east-1")
        .env("RAVE_ENDPOINT", endpoint);
    let server = Server::start(command);
    let client = reqwest::Client::new();
    let (url, inbox) = receiver().await;
    let (status, registered) = register(&client, &server.base, &url).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{registered}");
    let secret = registered["secret"].as_str().unwrap().to_owned();

    let ids = post_comments(&client, &server.base, "ddb", 5).await;
    let want = created_and_published(&ids);
    let received = wait_for_events(&inbox, &want, Duration::from_secs(60)).await;
    let mut seen = HashSet::new();
    let first_arrivals: Vec<(String, String)> = received
        .iter()
        .filter(|r| seen.insert(r.headers["webhook-id"].clone()))
        .map(event_of)
        .collect();
    assert_eq!(first_arrivals, want, "in stream order");
    let key = rave_webhooks::Secret::parse(&secret).unwrap();
    for r in &received {
        let timestamp: i64 = r.headers["webhook-timestamp"].parse().unwrap();
        assert_eq!(
            r.headers["webhook-signature"],
            key.sign(&r.headers["webhook-id"], timestamp, r.body.as_bytes())
        );
    }
    verify_with_the_library(&secret, &received);
}

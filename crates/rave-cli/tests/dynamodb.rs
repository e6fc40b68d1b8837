//! `rave init` and `rave serve --store dynamodb` against DynamoDB Local
//! (started by `./scripts/test.sh`, address in `RAVE_DYNAMODB_ENDPOINT`).

#![cfg(feature = "dynamodb")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const RAVE: &str = env!("CARGO_BIN_EXE_rave");

fn endpoint() -> String {
    std::env::var("RAVE_DYNAMODB_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

fn rave() -> Command {
    let mut command = Command::new(RAVE);
    // DynamoDB Local takes any credentials; keep the SDK off instance metadata.
    command
        .env("AWS_ACCESS_KEY_ID", "local")
        .env("AWS_SECRET_ACCESS_KEY", "local")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("RAVE_REGION", "us-east-1")
        .env("RAVE_ENDPOINT", endpoint());
    command
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn init_is_idempotent_and_serve_runs_on_dynamodb() {
    let table = format!("rave-cli-{}", std::process::id());
    let out = rave().args(["init", "--table", &table]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("created table"));
    let out = rave().args(["init", "--table", &table]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("exists; nothing to do"));
    let provisioned = format!("{table}-provisioned");
    let out = rave()
        .args([
            "init",
            "--table",
            &provisioned,
            "--billing",
            "provisioned",
            "--read-capacity",
            "7",
            "--write-capacity",
            "3",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("provisioned: 7 read and 3 write units"));

    let data = tempfile::tempdir().unwrap();
    let mut child = rave()
        .args([
            "serve",
            "--store",
            "dynamodb",
            "--table",
            &table,
            "--addr",
            "127.0.0.1:0",
        ])
        .arg("--data")
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Server(child);
    let base = line
        .trim()
        .strip_prefix("rave listening on ")
        .unwrap()
        .to_owned();

    let client = reqwest::Client::new();
    let mut ids = Vec::new();
    for rating in [5, 1, 5] {
        let body =
            json!({"author": "dee", "language": "en", "rating": rating, "body": "on DynamoDB"});
        let response = client
            .post(format!("{base}/v1/products/ddb/comments"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::CREATED);
        let created: Value = response.json().await.unwrap();
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    // DynamoDB's indexes are eventually consistent; DynamoDB Local's are immediate.
    let page: Value = client
        .get(format!(
            "{base}/v1/products/ddb/comments?rating=5&explain=true"
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        vec![ids[2].as_str(), ids[0].as_str()],
        "5-star comments, newest first"
    );
    assert_eq!(page["plan"]["queries"][0]["index"], "byRating");
    let one: Value = client
        .get(format!("{base}/v1/comments/{}", ids[1]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(one["rating"], 1);
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), reqwest::StatusCode::OK);

    // The in-process aggregator follows DynamoDB Streams.
    let started = std::time::Instant::now();
    loop {
        let stats: Value = client
            .get(format!("{base}/v1/products/ddb/stats"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if stats["counts"] == json!({"1": 1, "2": 0, "3": 0, "4": 0, "5": 2}) {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "statistics did not arrive: {stats}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let board: Value = client
        .get(format!("{base}/v1/leaderboard"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        board["items"],
        json!([{"product_id": "ddb", "five_star": 2}])
    );
}

/// A table created before rave's layout had one of its indexes: `rave init`
/// creates it, waits until DynamoDB has backfilled it, and touches nothing
/// else. DynamoDB Local accepts UpdateTable's index changes but never
/// finishes them (a created index stays CREATING, a deleted one DELETING,
/// after which its writes fail): the case is ignored, with that reason,
/// until the endpoint the tests run against completes them. The engine's
/// side of the upgrade runs in `serve_rebuilds_listing_indexes_of_an_older_layout`.
#[tokio::test]
#[ignore = "DynamoDB Local never finishes an online index change"]
async fn init_creates_indexes_the_table_lacks() {
    use rave_store::Store;

    let table = format!("rave-cli-layout-{}", std::process::id());
    let store = rave_dynamodb::DynamoStore::local(&endpoint());
    let wanted = rave_comments::table_definition(&table);
    let mut older = wanted.clone();
    older
        .global_secondary_indexes
        .retain(|index| index.name != "byRating");
    store
        .create_table_with(older, rave_dynamodb::Billing::OnDemand)
        .await
        .unwrap();
    let out = rave().args(["init", "--table", &table]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("created index byRating; it is ACTIVE"),
        "{said}"
    );
    assert_eq!(said.matches("created index").count(), 1, "{said}");
    let now = store.describe_table(&table).await.unwrap();
    assert!(
        wanted.index_drift(&now.global_secondary_indexes).is_empty(),
        "{now:?}"
    );
    let out = rave().args(["init", "--table", &table]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("exists; nothing to do"));
}

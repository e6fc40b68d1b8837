//! A product's move between families interrupted by SIGKILL: `rave serve`
//! killed while the move's job is rewriting the product's comments, then
//! started again on the same data. The marker outlives the kill, the
//! restarted server finishes the job, the family's listing then shows each
//! of the product's comments exactly once, and `rave reconcile` finds no
//! drift.

mod common;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{RAVE, ids, serve, walk};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "moves-admin-token";

async fn moves(client: &reqwest::Client, base: &str) -> Vec<Value> {
    let response = client
        .get(format!("{base}/v1/admin/moves"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.expect("a body");
    body["moves"].as_array().expect("a list").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_move_killed_midway_is_finished_by_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let loaded = Command::new(RAVE)
        .args([
            "load",
            "--data",
            data,
            "--products",
            "5",
            "--comments",
            "1500",
            "--seed",
            "3",
        ])
        .output()
        .expect("run rave load");
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let client = reqwest::Client::new();
    let mut server = serve(dir.path(), &["--admin-token", ADMIN_TOKEN]);
    let own = ids(&walk(&client, &server.base, "/v1/products/p1/comments").await);
    assert!(own.len() > 100, "p1 has {} comments", own.len());

    let written = client
        .put(format!("{}/v1/products/p1", server.base))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "Tee, red", "group": "tee"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(written.status(), StatusCode::OK);
    // Killed once the job has rewritten some of p1's comments, not all.
    let started = Instant::now();
    loop {
        let pending = moves(&client, &server.base).await;
        assert_eq!(pending.len(), 1, "the job ended before the kill");
        let done = pending[0]["done"].as_u64().unwrap_or(0);
        if done > 0 {
            assert!(done < own.len() as u64, "{pending:?}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the job never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.kill();

    let mut server = serve(dir.path(), &["--admin-token", ADMIN_TOKEN]);
    let started = Instant::now();
    while !moves(&client, &server.base).await.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the restarted server did not finish the move"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let family = ids(&walk(&client, &server.base, "/v1/groups/tee/comments").await);
    let distinct: BTreeSet<&String> = family.iter().collect();
    assert_eq!(distinct.len(), family.len(), "no comment twice");
    assert_eq!(distinct, own.iter().collect::<BTreeSet<_>>());
    server.terminate();

    let reconciled = Command::new(RAVE)
        .args(["reconcile", "--data", data])
        .output()
        .expect("run rave reconcile");
    let stdout = String::from_utf8_lossy(&reconciled.stdout);
    assert!(
        reconciled.status.success() && stdout.contains(": 0 items drifted"),
        "{stdout}{}",
        String::from_utf8_lossy(&reconciled.stderr)
    );
}

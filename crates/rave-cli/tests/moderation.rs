//! Moderation rules and the moderation hook, configured on the `rave`
//! binary: each rule holds (the comment is `pending`, names the rule in
//! `held_by` and waits in the queue) or refuses (422 naming the rule,
//! nothing stored) as its option says.

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;
use serde_json::{Value, json};

const TOKEN: &str = "moderation-test-token";

async fn post(client: &reqwest::Client, base: &str, author: &str, body: &str) -> (u16, Value) {
    let response = client
        .post(format!("{base}/v1/products/p1/comments"))
        .json(&json!({"author": author, "language": "en", "rating": 3, "body": body}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn get(client: &reqwest::Client, url: String) -> Value {
    let response = client.get(url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    response.json().await.unwrap()
}

/// `(id, held_by)` of the comments waiting in the moderation queue.
async fn queue(client: &reqwest::Client, base: &str) -> Vec<(String, Value)> {
    let page = get(client, format!("{base}/v1/moderation/queue?state=pending")).await;
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_owned(), c["held_by"].clone()))
        .collect()
}

/// The ids of p1's published comments.
async fn published(client: &reqwest::Client, base: &str) -> Vec<String> {
    let page = get(client, format!("{base}/v1/products/p1/comments")).await;
    let mut ids: Vec<String> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn words_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("blocked-words.txt");
    std::fs::write(&path, "# spam\ncasino\n").unwrap();
    path
}

const RULE_FLAGS: [&str; 8] = [
    "--max-links",
    "1",
    "--duplicate-window",
    "60",
    "--max-typing-speed",
    "20",
    "--admin-token",
    TOKEN,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_configured_to_hold_holds_the_comment_for_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let words = words_file(dir.path());
    let mut flags: Vec<&str> = RULE_FLAGS.to_vec();
    flags.extend(["--blocked-words", words.to_str().unwrap()]);
    let server = common::serve(&dir.path().join("data"), &flags);
    let client = reqwest::Client::new();
    let base = &server.base;

    let mut held = Vec::new();
    let mut fine = Vec::new();
    let mut expect = |(status, body): (u16, Value), rule: Option<&str>| {
        assert_eq!(status, 201, "{body}");
        let id = body["id"].as_str().unwrap().to_owned();
        match rule {
            Some(rule) => {
                assert_eq!(body["status"], "pending", "{body}");
                assert_eq!(body["held_by"], rule, "{body}");
                held.push((id, json!(rule)));
            }
            None => {
                assert_eq!(body["status"], "published", "{body}");
                assert!(body["held_by"].is_null(), "{body}");
                fine.push(id);
            }
        }
    };
    expect(
        post(&client, base, "ann", "see http://a.io and http://b.io").await,
        Some("too_many_links"),
    );
    expect(
        post(&client, base, "bob", "the best Casino in town").await,
        Some("blocked_words"),
    );
    std::fs::write(&words, "lottery\n").unwrap();
    expect(
        post(&client, base, "eve", "win the lottery today").await,
        Some("blocked_words"),
    );
    expect(post(&client, base, "cid", "a fine product").await, None);
    expect(
        post(&client, base, "cid", "A fine product ").await,
        Some("duplicate"),
    );
    expect(post(&client, base, "dan", "hello").await, None);
    expect(
        post(&client, base, "dan", &"long review ".repeat(20)).await,
        Some("too_fast"),
    );

    let mut queued = queue(&client, base).await;
    queued.sort_by(|a, b| a.0.cmp(&b.0));
    held.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(queued, held, "every held comment waits in the queue, named");
    fine.sort();
    assert_eq!(published(&client, base).await, fine, "nothing held is listed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_configured_to_refuse_answers_422_naming_it_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let words = words_file(dir.path());
    // Configured through the environment this time.
    let mut command = Command::new(common::RAVE);
    command
        .args(common::serve_args(
            &dir.path().join("data"),
            &["--admin-token", TOKEN],
        ))
        .env("RAVE_MAX_LINKS", "1")
        .env("RAVE_MAX_LINKS_OUTCOME", "refuse")
        .env("RAVE_BLOCKED_WORDS", &words)
        .env("RAVE_BLOCKED_WORDS_OUTCOME", "refuse")
        .env("RAVE_DUPLICATE_WINDOW", "60")
        .env("RAVE_DUPLICATE_WINDOW_OUTCOME", "refuse")
        .env("RAVE_MAX_TYPING_SPEED", "20")
        .env("RAVE_MAX_TYPING_SPEED_OUTCOME", "refuse");
    let server = Server::start(command);
    let client = reqwest::Client::new();
    let base = &server.base;

    let refused = |(status, problem): (u16, Value), rule: &str| {
        assert_eq!(status, 422, "{problem}");
        assert_eq!(problem["status"], 422);
        assert!(
            problem["detail"].as_str().unwrap().contains(rule),
            "{problem} names {rule}"
        );
    };
    refused(
        post(&client, base, "ann", "see http://a.io and http://b.io").await,
        "too_many_links",
    );
    refused(
        post(&client, base, "bob", "the best casino in town").await,
        "blocked_words",
    );
    let (status, first) = post(&client, base, "cid", "a fine product").await;
    assert_eq!(status, 201, "{first}");
    refused(
        post(&client, base, "cid", "a fine product").await,
        "duplicate",
    );
    let (status, second) = post(&client, base, "dan", "hello").await;
    assert_eq!(status, 201, "{second}");
    refused(
        post(&client, base, "dan", &"long review ".repeat(20)).await,
        "too_fast",
    );

    assert!(queue(&client, base).await.is_empty(), "nothing refused is queued");
    let mut stored = vec![
        first["id"].as_str().unwrap().to_owned(),
        second["id"].as_str().unwrap().to_owned(),
    ];
    stored.sort();
    assert_eq!(published(&client, base).await, stored, "nothing refused is stored");
}

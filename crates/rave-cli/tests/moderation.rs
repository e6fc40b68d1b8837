//! Moderation rules and the moderation hook, configured on the `rave`
//! binary: each rule holds (the comment is `pending`, names the rule in
//! `held_by` and waits in the queue) or refuses (422 naming the rule,
//! nothing stored) as its option says; the moderation hook on loopback
//! publishes, holds or refuses, and when it fails, answers garbage or
//! answers too late the comment is held. The rule `too_many_photos` counts
//! a post's photos, and the hook is sent their URLs.

mod common;

// The images of rave-media's own tests.
#[path = "../../rave-media/tests/common/mod.rs"]
mod images;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Json, State};
use axum::http::StatusCode;
use axum::routing::post;
use common::Server;
use serde_json::{Value, json};

const TOKEN: &str = "moderation-test-token";

async fn post_comment(
    client: &reqwest::Client,
    base: &str,
    author: &str,
    body: &str,
) -> (u16, Value) {
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
        post_comment(&client, base, "ann", "see http://a.io and http://b.io").await,
        Some("too_many_links"),
    );
    expect(
        post_comment(&client, base, "bob", "the best Casino in town").await,
        Some("blocked_words"),
    );
    std::fs::write(&words, "lottery\n").unwrap();
    expect(
        post_comment(&client, base, "eve", "win the lottery today").await,
        Some("blocked_words"),
    );
    expect(
        post_comment(&client, base, "cid", "a fine product").await,
        None,
    );
    expect(
        post_comment(&client, base, "cid", "A fine product ").await,
        Some("duplicate"),
    );
    expect(post_comment(&client, base, "dan", "hello").await, None);
    expect(
        post_comment(&client, base, "dan", &"long review ".repeat(20)).await,
        Some("too_fast"),
    );

    let mut queued = queue(&client, base).await;
    queued.sort_by(|a, b| a.0.cmp(&b.0));
    held.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(queued, held, "every held comment waits in the queue, named");
    fine.sort();
    assert_eq!(
        published(&client, base).await,
        fine,
        "nothing held is listed"
    );
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
        post_comment(&client, base, "ann", "see http://a.io and http://b.io").await,
        "too_many_links",
    );
    refused(
        post_comment(&client, base, "bob", "the best casino in town").await,
        "blocked_words",
    );
    let (status, first) = post_comment(&client, base, "cid", "a fine product").await;
    assert_eq!(status, 201, "{first}");
    refused(
        post_comment(&client, base, "cid", "a fine product").await,
        "duplicate",
    );
    let (status, second) = post_comment(&client, base, "dan", "hello").await;
    assert_eq!(status, 201, "{second}");
    refused(
        post_comment(&client, base, "dan", &"long review ".repeat(20)).await,
        "too_fast",
    );

    assert!(
        queue(&client, base).await.is_empty(),
        "nothing refused is queued"
    );
    let mut stored = vec![
        first["id"].as_str().unwrap().to_owned(),
        second["id"].as_str().unwrap().to_owned(),
    ];
    stored.sort();
    assert_eq!(
        published(&client, base).await,
        stored,
        "nothing refused is stored"
    );
}

type Asked = Arc<Mutex<Vec<Value>>>;

/// A moderation hook on loopback that answers what the comment's body asks
/// for: a decision, a 500, garbage, or a decision too late.
async fn hook() -> (String, Asked) {
    let asked = Asked::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/moderate", listener.local_addr().unwrap());
    let app = Router::new()
        .route(
            "/moderate",
            post(
                |State(asked): State<Asked>, Json(request): Json<Value>| async move {
                    let body = request["comment"]["body"].as_str().unwrap_or("").to_owned();
                    asked.lock().unwrap().push(request);
                    let decide = |d: &str| {
                        (
                            StatusCode::OK,
                            json!({"decision": d, "reason": "test"}).to_string(),
                        )
                    };
                    match body.as_str() {
                        "publish me" => decide("publish"),
                        "hold me" => decide("hold"),
                        "refuse me" => decide("refuse"),
                        "fail" => (StatusCode::INTERNAL_SERVER_ERROR, "boom".to_owned()),
                        "garbage" => (StatusCode::OK, "yes, fine".to_owned()),
                        _ => {
                            tokio::time::sleep(Duration::from_secs(3)).await;
                            decide("publish")
                        }
                    }
                },
            ),
        )
        .with_state(asked.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_publishes_holds_or_refuses_and_its_failures_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (url, asked) = hook().await;
    let server = common::serve(
        dir.path(),
        &[
            "--admin-token",
            TOKEN,
            "--max-links",
            "0",
            "--moderation-hook",
            &url,
            "--moderation-hook-timeout",
            "0.5",
        ],
    );
    let client = reqwest::Client::new();
    let base = &server.base;

    let (status, published_one) = post_comment(&client, base, "ann", "publish me").await;
    assert_eq!(status, 201, "{published_one}");
    assert_eq!(published_one["status"], "published");
    assert!(published_one["held_by"].is_null());

    let mut held = Vec::new();
    for (body, why) in [
        ("hold me", "the hook holds"),
        ("fail", "the hook answers 500"),
        ("garbage", "the hook answers no decision"),
        ("slow", "the hook answers after the timeout"),
    ] {
        let started = Instant::now();
        let (status, comment) = post_comment(&client, base, "bob", body).await;
        assert_eq!(status, 201, "{why}: {comment}");
        assert_eq!(comment["status"], "pending", "{why}: {comment}");
        assert_eq!(comment["held_by"], "moderation_hook", "{why}: {comment}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{why}: waited too long"
        );
        held.push((
            comment["id"].as_str().unwrap().to_owned(),
            json!("moderation_hook"),
        ));
    }

    let (status, problem) = post_comment(&client, base, "cid", "refuse me").await;
    assert_eq!(status, 422, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("moderation_hook"),
        "{problem}"
    );

    let (status, by_rule) = post_comment(&client, base, "dan", "publish me at http://x.io").await;
    assert_eq!(status, 201, "{by_rule}");
    assert_eq!(by_rule["held_by"], "too_many_links");
    held.push((
        by_rule["id"].as_str().unwrap().to_owned(),
        json!("too_many_links"),
    ));

    let asked = asked.lock().unwrap().clone();
    let bodies: Vec<&str> = asked
        .iter()
        .map(|r| r["comment"]["body"].as_str().unwrap())
        .collect();
    assert_eq!(
        bodies,
        [
            "publish me",
            "hold me",
            "fail",
            "garbage",
            "slow",
            "refuse me"
        ],
        "the hook is asked about what the rules let pass, and only that"
    );
    assert_eq!(asked[0]["comment"]["id"], published_one["id"]);
    assert_eq!(asked[0]["comment"]["product_id"], "p1");

    let mut queued = queue(&client, base).await;
    queued.sort_by(|a, b| a.0.cmp(&b.0));
    held.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(queued, held, "held comments wait in the queue, named");
    assert_eq!(
        published(&client, base).await,
        [published_one["id"].as_str().unwrap().to_owned()],
        "nothing the hook or a rule held, nor what it refused, is published"
    );
}

/// A comment's photos: the rule `too_many_photos` counts them, and the
/// hook is asked with their URLs (under `--media-url` here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_count_photos_and_the_hook_gets_their_urls() {
    let dir = tempfile::tempdir().unwrap();
    let (url, asked) = hook().await;
    let server = common::serve(
        dir.path(),
        &[
            "--admin-token",
            TOKEN,
            "--max-photos-unmoderated",
            "1",
            "--moderation-hook",
            &url,
            "--media-url",
            "https://cdn.shop.example/reviews",
        ],
    );
    let client = reqwest::Client::new();
    let post_with_photos = async |photos: &[Vec<u8>]| {
        let comment = json!({"author": "ann", "language": "en", "rating": 5, "body": "publish me"});
        let mut form = reqwest::multipart::Form::new().text("comment", comment.to_string());
        for (n, photo) in photos.iter().enumerate() {
            form = form.part(
                "photo",
                reqwest::multipart::Part::bytes(photo.clone()).file_name(format!("{n}.jpg")),
            );
        }
        let response = client
            .post(format!("{}/v1/products/p1/comments", server.base))
            .multipart(form)
            .send()
            .await
            .unwrap();
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    };

    let (status, one) = post_with_photos(&[images::jpeg(64, 48)]).await;
    assert_eq!(status, 201, "{one}");
    assert_eq!(one["status"], "published");
    let photo_id = one["media"][0]["id"].as_str().unwrap().to_owned();
    let request = asked.lock().unwrap()[0].clone();
    let media = &request["comment"]["media"];
    assert_eq!(media.as_array().map(Vec::len), Some(1), "{request}");
    assert_eq!(media[0]["id"], photo_id.as_str());
    for (field, rendition) in [
        ("url", "display.webp"),
        ("thumbnail_url", "thumb.webp"),
        ("fallback_url", "display.jpg"),
        ("thumbnail_fallback_url", "thumb.jpg"),
    ] {
        assert_eq!(
            media[0][field],
            format!("https://cdn.shop.example/reviews/{photo_id}/{rendition}")
        );
    }

    let (status, two) = post_with_photos(&[images::jpeg(64, 48), images::jpeg(65, 48)]).await;
    assert_eq!(status, 201, "{two}");
    assert_eq!(two["held_by"], "too_many_photos");
    assert_eq!(
        two["media"]
            .as_array()
            .unwrap()
            .iter()
            .map(|photo| photo["status"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["pending", "pending"]
    );
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "what a rule holds is not asked about"
    );

    // A comment the hook refuses keeps none of the photos it stored; a
    // photo another comment names stays.
    let stored = || {
        std::fs::read_dir(dir.path().join("media"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with('.'))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let before = stored();
    let refused = async |photo: Vec<u8>| {
        let comment = json!({"author": "cy", "language": "en", "rating": 1, "body": "refuse me"});
        let form = reqwest::multipart::Form::new()
            .text("comment", comment.to_string())
            .part(
                "photo",
                reqwest::multipart::Part::bytes(photo).file_name("refused.jpg"),
            );
        client
            .post(format!("{}/v1/products/p1/comments", server.base))
            .multipart(form)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(refused(images::jpeg(66, 48)).await, 422);
    assert_eq!(stored(), before, "the refused comment's new photo is gone");
    assert_eq!(refused(images::jpeg(64, 48)).await, 422);
    assert_eq!(stored(), before, "a photo another comment names stays");
    assert!(before.contains(&photo_id));
}

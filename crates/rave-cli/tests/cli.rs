//! The `rave` binary as a user runs it: `serve` killed with SIGKILL under
//! load loses no acknowledged comment; `load`, `export`, `import` and
//! `query` round-trip a data set; bad import lines are reported by number;
//! `serve --dynamodb-api` shows the live data through DynamoDB's API.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{RAVE, Server, Writers, assert_all_present, serve};
use serde_json::{Value, json};

fn rave(args: &[&str]) -> std::process::Output {
    Command::new(RAVE).args(args).output().expect("run rave")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_under_load_loses_no_acknowledged_comment() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &[]);
    let client = reqwest::Client::new();
    let writers = Writers::start(&server.base, "crash", 16);
    writers.wait_for(400, Duration::from_secs(120)).await;
    // SIGKILL while the writers are still posting.
    server.kill();
    let acknowledged = writers.stop().await;
    assert!(
        acknowledged.len() >= 400,
        "only {} comments were acknowledged",
        acknowledged.len()
    );

    let server = serve(dir.path(), &[]);
    assert_all_present(&server.base, &acknowledged).await;
    // The listing agrees with the items: walk it and find every acknowledged id.
    let mut listed = std::collections::BTreeSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("{}/v1/products/crash/comments?limit=100", server.base);
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let page: Value = client.get(url).send().await.unwrap().json().await.unwrap();
        for item in page["items"].as_array().unwrap() {
            listed.insert(item["id"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert!(acknowledged.iter().all(|id| listed.contains(id)));
}

#[test]
fn load_export_import_and_query_round_trip() {
    let source = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let data = source.path().to_str().unwrap();
    let out = rave(&[
        "load",
        "--data",
        data,
        "--products",
        "20",
        "--comments",
        "1500",
        "--seed",
        "7",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("loaded 1500 comments"));

    let export = source.path().join("export.ndjson");
    let out = rave(&[
        "export",
        "--data",
        data,
        "--output",
        export.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = std::fs::read_to_string(&export).unwrap();
    assert_eq!(lines.lines().count(), 1500);

    let out = rave(&[
        "import",
        "--data",
        target.path().to_str().unwrap(),
        export.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 1500 comments, skipped 0"));

    // The same query on both stores gives the same page.
    let query = |dir: &str| -> Value {
        let out = rave(&[
            "query",
            "p1",
            "--data",
            dir,
            "--rating",
            "1,5",
            "--limit",
            "10",
            "--explain",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (a, b) = (query(data), query(target.path().to_str().unwrap()));
    assert_eq!(a["items"], b["items"]);
    assert_eq!(a["items"].as_array().unwrap().len(), 10);
    assert_eq!(a["plan"]["strategy"], "ratings_fan_out");

    // Loading is deterministic: the same seed gives the same data.
    let again = tempfile::tempdir().unwrap();
    let out = rave(&[
        "load",
        "--data",
        again.path().to_str().unwrap(),
        "--products",
        "20",
        "--comments",
        "1500",
        "--seed",
        "7",
    ]);
    assert!(out.status.success());
    assert_eq!(query(again.path().to_str().unwrap())["items"], a["items"]);
}

#[test]
fn bad_import_lines_are_reported_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let file = dir.path().join("in.ndjson");
    let good = json!({"product_id": "p", "author": "a", "language": "en", "rating": 5, "body": "fine", "created_at": "2026-01-01T00:00:00.000Z"});
    let mut bad_rating = good.clone();
    bad_rating["rating"] = json!(9);
    let lines = [
        good.to_string(),
        "{not json".to_owned(),
        bad_rating.to_string(),
        good.to_string(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();

    let out = rave(&[
        "import",
        "--data",
        data.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(
        !out.status.success(),
        "a bad line is fatal without --skip-bad-lines"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = rave(&[
        "import",
        "--data",
        data.to_str().unwrap(),
        "--skip-bad-lines",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("skipped 2 bad lines"));
}

#[test]
fn serve_demo_fills_an_empty_store_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &["--demo"]);
    let page: Value = reqwest::blocking_get(&format!("{}/v1/products/p1/comments", server.base));
    assert_eq!(
        page["items"].as_array().unwrap().len(),
        20,
        "the demo data shows"
    );
    // SIGTERM drains and exits cleanly.
    let status = server.terminate();
    assert!(status.success(), "rave exited with {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_dynamodb_api_shows_the_live_data_through_dynamodbs_api() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(RAVE)
        .args(["serve", "--addr", "127.0.0.1:0", "--demo", "--data"])
        .arg(dir.path())
        .args(["--dynamodb-api", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rave serve");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next_line = || lines.next().expect("a line").expect("readable");
    let dynamodb = next_line()
        .strip_prefix("rave dynamodb-api listening on ")
        .expect("the DynamoDB API's listening line")
        .to_owned();
    let comments = next_line()
        .strip_prefix("rave listening on ")
        .expect("the comments API's listening line")
        .to_owned();
    let server = Server {
        child,
        base: comments,
    };
    let client = ::reqwest::Client::new();
    let call = |operation: &str, body: Value| {
        client
            .post(format!("{dynamodb}/"))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("DynamoDB_20120810.{operation}"))
            // Signed as the SDKs sign (rave checks the header is complete, not
            // the signature, without --dynamodb-credentials).
            .header("x-amz-date", "20261123T120000Z")
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261123/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0123456789abcdef",
            )
            .body(body.to_string())
            .send()
    };
    let tables: Value = call("ListTables", json!({}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // The comments table, and the webhooks' table beside it.
    assert!(
        tables["TableNames"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("rave"))),
        "{tables}"
    );
    // A comment posted to the comments API is at once in DynamoDB's view.
    let posted = client
        .post(format!("{}/v1/products/inspect/comments", server.base))
        .json(&json!({"author": "ada", "rating": 5, "language": "en", "body": "seen from the AWS CLI"}))
        .send()
        .await
        .unwrap();
    assert!(
        posted.status().is_success(),
        "{}",
        posted.text().await.unwrap()
    );
    let mut found = 0;
    let mut start: Option<Value> = None;
    loop {
        let mut request = json!({
            "TableName": "rave",
            "FilterExpression": "contains(#b, :text)",
            "ExpressionAttributeNames": {"#b": "body"},
            "ExpressionAttributeValues": {":text": {"S": "seen from the AWS CLI"}},
        });
        if let Some(start) = start.take() {
            request["ExclusiveStartKey"] = start;
        }
        let page: Value = call("Scan", request).await.unwrap().json().await.unwrap();
        found += page["Count"].as_u64().expect("a count");
        match page.get("LastEvaluatedKey") {
            Some(key) => start = Some(key.clone()),
            None => break,
        }
    }
    assert_eq!(found, 1);
    let described: Value = call("DescribeTable", json!({"TableName": "rave"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        described["Table"]["ItemCount"].as_u64().unwrap() > 3_000,
        "the demo's comments and the new one: {described}"
    );
    // Both APIs stop on SIGTERM and rave exits cleanly.
    let mut server = server;
    let status = server.terminate();
    assert!(status.success(), "rave exited with {status}");
}

mod reqwest {
    pub use ::reqwest::*;

    /// A GET from synchronous test code.
    pub fn blocking_get(url: &str) -> serde_json::Value {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async { ::reqwest::get(url).await.unwrap().json().await.unwrap() })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn statistics_stay_exact_across_a_sigkill_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let token = ["--admin-token", "t0ken"];
    let mut server = serve(dir.path(), &token);
    let client = reqwest::Client::new();
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (client, base, stop, acknowledged) = (
            client.clone(),
            server.base.clone(),
            stop.clone(),
            acknowledged.clone(),
        );
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let language = if i % 2 == 0 { "en" } else { "de" };
                let body = json!({"author": format!("a{}", i % 7), "language": language, "rating": 1 + (i + w) % 5, "body": "x"});
                match client.post(format!("{base}/v1/products/p{}/comments", i % 3)).json(&body).send().await {
                    Ok(response) if response.status() == 201 => {
                        acknowledged.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }));
    }
    // Killed mid-load once enough has been written, however busy the
    // machine is.
    let started = Instant::now();
    while acknowledged.load(Ordering::Relaxed) < 60 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the writers got too few comments in"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }

    let server = serve(dir.path(), &token);
    let started = Instant::now();
    loop {
        let status: Value = client
            .get(format!("{}/v1/admin/aggregator", server.base))
            .bearer_auth("t0ken")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if status["lag_events"] == 0 && status["latest"].as_u64() > Some(0) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the aggregator did not catch up: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Recount by walking every listing and compare with the statistics.
    let mut total = 0;
    for product in ["p0", "p1", "p2"] {
        let mut counted = [0u64; 5];
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{}/v1/products/{product}/comments?limit=100", server.base);
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let page: Value = client.get(url).send().await.unwrap().json().await.unwrap();
            for item in page["items"].as_array().unwrap() {
                counted[item["rating"].as_u64().unwrap() as usize - 1] += 1;
            }
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        let stats: Value = client
            .get(format!("{}/v1/products/{product}/stats", server.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let stored: Vec<u64> = (1..=5)
            .map(|r| stats["counts"][r.to_string()].as_u64().unwrap())
            .collect();
        assert_eq!(stored, counted.to_vec(), "{product}");
        total += counted.iter().sum::<u64>();
    }
    let acknowledged = acknowledged.load(Ordering::Relaxed);
    assert!(
        total >= acknowledged,
        "{total} comments listed, {acknowledged} acknowledged before the kill"
    );
    let global: Value = client
        .get(format!("{}/v1/stats", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(global["comments_total"], total);
}

#[test]
fn reconcile_reports_no_drift_after_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = rave(&[
        "load",
        "--data",
        data,
        "--products",
        "30",
        "--comments",
        "2000",
        "--seed",
        "3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rave(&["reconcile", "--data", data]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(2000 counted comments)") && stdout.contains(": 0 items drifted"),
        "{stdout}"
    );
}

#[test]
fn load_with_photos_stores_them_and_a_share_of_comments_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let args = [
        "load",
        "--data",
        data,
        "--comments",
        "400",
        "--photos",
        "0.3",
    ];
    let out = rave(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rave(&["export", "--data", data]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut carrying = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let comment: Value = serde_json::from_str(line).unwrap();
        let Some(media) = comment["media"].as_array() else {
            continue;
        };
        carrying += 1;
        for photo in media {
            let id = photo["id"].as_str().unwrap();
            let display = dir.path().join("media").join(id).join("display.webp");
            assert!(display.is_file(), "{} is not stored", display.display());
        }
    }
    assert!(
        (70..170).contains(&carrying),
        "{carrying} of 400 carry photos"
    );
    let refused = rave(&["load", "--data", data, "--photos", "1.5"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("between 0 and 1"));
}

#[test]
fn storage_reports_each_part_of_a_loaded_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = rave(&["load", "--data", data, "--comments", "2000", "--seed", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Part by part: every comment as an item, in the listing index of all
    // comments, and as a change in the stream.
    let out = rave(&["storage", "--data", data]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let entries = |part: &str| -> Option<u64> {
        stdout.lines().find_map(|line| {
            let rest = line.strip_prefix("rave")?.trim_start().strip_prefix(part)?;
            rest.split_whitespace().next()?.parse().ok()
        })
    };
    assert_eq!(entries("items "), Some(2000), "{stdout}");
    assert_eq!(entries("index all "), Some(2000), "{stdout}");
    // A load writes one change per comment; nothing aggregated them yet.
    assert_eq!(entries("stream "), Some(2000), "{stdout}");
    // Where there is no store, the report says so and creates none.
    let empty = dir.path().join("nothing-here");
    let out = rave(&["storage", "--data", empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no rave store in"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!empty.exists());
}

/// A data directory written by a rave whose listing indexes did not project
/// the merchant's reply: `serve` rebuilds them before it listens, so
/// listings show replies written before the upgrade.
#[tokio::test]
async fn serve_rebuilds_listing_indexes_of_an_older_layout() {
    use rave_comments::{Comments, Config, CursorKey, Filter, ListRequest, Moderation, NewComment};
    use rave_store::{Projection, Store};

    let dir = tempfile::tempdir().unwrap();
    let id = {
        let engine = rave_engine::Engine::open(dir.path()).unwrap();
        let mut older = rave_comments::table_definition("rave");
        for index in &mut older.global_secondary_indexes {
            if let Projection::Include(names) = &mut index.projection {
                names.retain(|name| name != "reply");
            }
        }
        engine.create_table(older).await.unwrap();
        let comments = Comments::new(
            engine,
            Config {
                table: "rave".into(),
                cursor_key: CursorKey::new([1; 32]),
                moderation: Moderation::Off,
            },
        );
        let new = NewComment {
            media: Vec::new(),
            attributes: Default::default(),
            author: "ann".into(),
            language: "en".into(),
            rating: 4,
            title: None,
            body: "Sturdy.".into(),
            created_at: None,
        };
        let id = comments.create("p", new, None).await.unwrap().comment.id;
        comments.set_reply(&id, "Thank you!").await.unwrap();
        let request = ListRequest {
            sort: Default::default(),
            product: "p",
            filter: Filter::default(),
            limit: 20,
            cursor: None,
        };
        let listed = comments.list(&request).await.unwrap().items;
        assert_eq!(listed[0].reply, None, "the older index lacks the reply");
        id
    };

    let server = serve(dir.path(), &[]);
    for query in ["", "?language=en", "?rating=4", "?language=en&rating=4"] {
        let page: Value = reqwest::get(format!("{}/v1/products/p/comments{query}", server.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(page["items"][0]["id"], id.as_str(), "{query}: {page}");
        assert_eq!(page["items"][0]["reply"]["body"], "Thank you!", "{query}");
    }
}

/// `rave export` writes the merchant's reply and the vote counts with their
/// comment, and `rave import` restores them; a reply that breaks the rules
/// is refused.
#[tokio::test]
async fn export_and_import_keep_the_merchants_reply() {
    use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment};

    let source = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    {
        let engine = rave_engine::Engine::open(source.path()).unwrap();
        let comments = Comments::new(
            engine.clone(),
            Config {
                table: "rave".into(),
                cursor_key: CursorKey::new([1; 32]),
                moderation: Moderation::Off,
            },
        );
        comments.ensure_table().await.unwrap();
        let feed = rave_engine::EngineFeed::open(engine, "rave", "statistics")
            .await
            .unwrap();
        for body in ["Replied to.", "Not replied to."] {
            let new = NewComment {
                media: Vec::new(),
                attributes: Default::default(),
                author: "ann".into(),
                language: "en".into(),
                rating: 3,
                title: None,
                body: body.into(),
                created_at: None,
            };
            let id = comments.create("p", new, None).await.unwrap().comment.id;
            if body == "Replied to." {
                comments.set_reply(&id, "We are on it.").await.unwrap();
                comments.vote(&id, "v1", true).await.unwrap();
                comments.vote(&id, "v2", false).await.unwrap();
            }
        }
        use rave_store::ChangeFeed;
        while feed.lag().await.unwrap().events > 0 {
            comments
                .aggregate_once(&feed, std::time::Duration::from_millis(1))
                .await
                .unwrap();
        }
    }
    let export = source.path().join("export.ndjson");
    let out = rave(&[
        "export",
        "--data",
        source.path().to_str().unwrap(),
        "--output",
        export.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let replies: Vec<&Value> = lines.iter().map(|line| &line["reply"]).collect();
    assert_eq!(
        replies.iter().filter(|r| r.is_null()).count(),
        1,
        "{lines:?}"
    );
    let out = rave(&[
        "import",
        "--data",
        target.path().to_str().unwrap(),
        export.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = |dir: &std::path::Path| -> Value {
        let out = rave(&["query", "p", "--data", dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (before, after) = (listed(source.path()), listed(target.path()));
    assert_eq!(before["items"], after["items"]);
    let replied = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["body"] == "Replied to.")
        .unwrap();
    assert_eq!(replied["reply"]["body"], "We are on it.");
    assert_eq!(
        (&replied["helpful_votes"], &replied["unhelpful_votes"]),
        (&json!(1), &json!(1))
    );

    let mut bad = lines[0].clone();
    bad["reply"] = json!({"body": "", "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"});
    let file = source.path().join("bad.ndjson");
    std::fs::write(&file, format!("{bad}\n")).unwrap();
    let refused = tempfile::tempdir().unwrap();
    let out = rave(&[
        "import",
        "--data",
        refused.path().to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("line 1") && stderr.contains("body"),
        "{stderr}"
    );
}

#[test]
fn export_of_one_author_verified_purchases_and_incentives_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let input = dir.path().join("input.ndjson");
    let line = |author: &str, second: u32, verified: bool| {
        json!({
            "product_id": "p1", "author": author, "language": "en", "rating": 5,
            "title": "t", "body": "b", "status": "published",
            "created_at": format!("2026-01-01T00:00:{second:02}.000Z"),
            "verified_purchase": verified,
            // The verified ones were rewarded, as a shop's sample program does.
            "incentivized": verified,
        })
        .to_string()
    };
    let lines = [
        line("Ann #1/x", 1, true),
        line("Ann #1", 2, false),
        line("Ann #1/x", 3, false),
        line("bob", 4, true),
    ];
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = rave(&["import", "--data", data, input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let export = dir.path().join("ann.ndjson");
    let out = rave(&[
        "export",
        "--data",
        data,
        "--author",
        "Ann #1/x",
        "--output",
        export.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported: Vec<Value> = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shown: Vec<(&str, &str, bool, bool)> = exported
        .iter()
        .map(|c| {
            (
                c["author"].as_str().unwrap(),
                c["created_at"].as_str().unwrap(),
                c["verified_purchase"].as_bool().unwrap(),
                c["incentivized"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("Ann #1/x", "2026-01-01T00:00:03.000Z", false, false),
            ("Ann #1/x", "2026-01-01T00:00:01.000Z", true, true)
        ],
        "exactly that author, newest first, verified_purchase and incentivized kept"
    );

    let out = rave(&["query", "p1", "--data", data, "--verified"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let authors: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["author"].as_str().unwrap())
        .collect();
    assert_eq!(
        authors,
        ["bob", "Ann #1/x"],
        "only the verified, newest first"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_credentials_make_the_dynamodb_api_verify_signatures() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("dynamodb-keys");
    std::fs::write(&keys, "rave-key:rave-secret\n").unwrap();
    let refused = Command::new(RAVE)
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--dynamodb-credentials")
        .arg(&keys)
        .output()
        .expect("run rave serve");
    assert!(!refused.status.success(), "credentials without the API");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--dynamodb-api"));
    let mut api = Command::new(RAVE);
    api.args(["dynamodb-api", "--addr", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--dynamodb-credentials")
        .arg(&keys);
    let mut server = Server::start(api);
    let url = server.base.clone();
    let unsigned = ::reqwest::Client::new()
        .post(format!("{url}/"))
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", "DynamoDB_20120810.ListTables")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 400);
    let body: Value = unsigned.json().await.unwrap();
    assert_eq!(
        body["__type"],
        "com.amazon.coral.service#MissingAuthenticationTokenException"
    );
    let status = server.terminate();
    assert!(status.success(), "rave exited with {status}");
}

/// Starts `command` (a `rave dynamodb-api`), waits for its listening line,
/// stops it with SIGTERM and returns what it logged.
fn start_and_stop(command: Command, log: &std::path::Path) -> String {
    let mut server =
        Server::start_logging(command, std::fs::File::create(log).expect("a log file"));
    let status = server.terminate();
    assert!(status.success(), "rave exited with {status}");
    std::fs::read_to_string(log).expect("the log")
}

#[test]
fn the_dynamodb_api_is_not_opened_to_the_network_without_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let refused = rave_refusing(&["dynamodb-api", "--addr", addr, "--data", data]);
        assert!(
            !refused.status.success(),
            "{addr} served without credentials"
        );
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(
            said.contains("--dynamodb-credentials") && said.contains("--dynamodb-api-insecure"),
            "{said}"
        );
    }
    let refused = rave_refusing(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--data",
        data,
        "--dynamodb-api",
        "0.0.0.0:0",
    ]);
    assert!(
        !refused.status.success(),
        "serve opened the API to the network"
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--dynamodb-api 0.0.0.0:0"), "{said}");
    assert!(!data_has_store(data), "a refused start created the store");

    // Meant: it starts, and says what it does at every start.
    let mut insecure = Command::new(RAVE);
    insecure.args([
        "dynamodb-api",
        "--addr",
        "0.0.0.0:0",
        "--data",
        data,
        "--dynamodb-api-insecure",
    ]);
    let logged = start_and_stop(insecure, &dir.path().join("insecure.log"));
    assert!(logged.contains("--dynamodb-api-insecure"), "{logged}");
    assert!(logged.contains("WARN"), "{logged}");

    // With credentials every request must be signed: no flag needed.
    let keys = dir.path().join("dynamodb-keys");
    std::fs::write(&keys, "rave-key:rave-secret\n").unwrap();
    let mut signed = Command::new(RAVE);
    signed
        .args([
            "dynamodb-api",
            "--addr",
            "0.0.0.0:0",
            "--data",
            data,
            "--dynamodb-credentials",
        ])
        .arg(&keys);
    let logged = start_and_stop(signed, &dir.path().join("signed.log"));
    assert!(!logged.contains("--dynamodb-api-insecure"), "{logged}");
}

/// Runs `rave` expecting it to refuse to start: a `rave` that starts
/// instead is stopped after 10 s (and its silence fails the caller).
fn rave_refusing(args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("10")
        .arg(RAVE)
        .args(args)
        .output()
        .expect("run rave under timeout")
}

fn data_has_store(data: &str) -> bool {
    std::path::Path::new(data)
        .join(rave_engine::DATABASE_FILE)
        .exists()
}

#[tokio::test]
async fn named_shops_may_frame_the_pages() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &["--frame-ancestor", "https://shop.example"]);
    let page = ::reqwest::get(format!("{}/", server.base)).await.unwrap();
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        policy.ends_with("frame-ancestors https://shop.example"),
        "{policy}"
    );
    assert!(page.headers().get("x-frame-options").is_none());
}

#[tokio::test]
async fn tokens_made_with_the_cli_open_their_scopes_until_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let created = rave(&[
        "tokens",
        "--data",
        data,
        "create",
        "--name",
        "support",
        "--scope",
        "moderate,reply",
    ]);
    assert!(created.status.success(), "{created:?}");
    let token = String::from_utf8(created.stdout).unwrap().trim().to_owned();
    assert!(token.starts_with("rave_"), "{token}");
    let refused = rave(&[
        "tokens", "--data", data, "create", "--name", "x", "--scope", "root",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown scope"));

    let listed = rave(&["tokens", "--data", data, "list"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    let line = listed.lines().next().unwrap().to_owned();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(
        line.contains("support\tmoderate,reply\tcreated by cli"),
        "{line}"
    );
    assert!(!listed.contains(&token));
    let id = line.split('\t').next().unwrap().to_owned();

    let client = ::reqwest::Client::new();
    {
        let server = serve(dir.path(), &[]);
        let queue = |token: &str| {
            client
                .get(format!("{}/v1/moderation/queue", server.base))
                .bearer_auth(token)
                .send()
        };
        assert_eq!(queue(&token).await.unwrap().status(), 200);
        let erase = client
            .delete(format!("{}/v1/authors/a/comments", server.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(erase.status(), 403);
    }
    let revoked = rave(&["tokens", "--data", data, "revoke", &id]);
    assert!(revoked.status.success(), "{revoked:?}");
    let again = rave(&["tokens", "--data", data, "revoke", &id]);
    assert!(!again.status.success());
    let server = serve(dir.path(), &[]);
    let queue = client
        .get(format!("{}/v1/moderation/queue", server.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(queue.status(), 401);
}

#[tokio::test]
async fn export_carries_each_comments_photos_with_their_size_and_status() {
    use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment, NewPhoto, PhotoId};
    use rave_media::{CheckOptions, DiskStore, MediaStore, process};

    let data = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(data.path().join("media")).unwrap());
    let mut stored = Vec::new();
    for (width, height) in [(400, 300), (300, 500)] {
        let pixels = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, (width % 256) as u8])
        });
        let mut bytes = Vec::new();
        image::DynamicImage::ImageRgb8(pixels)
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Jpeg,
            )
            .unwrap();
        let processed = process(&bytes, &CheckOptions::default()).unwrap();
        media.put_image(&processed).await.unwrap();
        stored.push(NewPhoto {
            id: PhotoId::parse(processed.id.as_str()).unwrap(),
            width,
            height,
        });
    }
    let (published, waiting) = {
        let engine = rave_engine::Engine::open(data.path()).unwrap();
        let comments = Comments::new(
            engine,
            Config {
                table: "rave".into(),
                cursor_key: CursorKey::new([1; 32]),
                moderation: Moderation::Pre,
            },
        );
        comments.ensure_table().await.unwrap();
        let new = |body: &str, media: Vec<NewPhoto>| NewComment {
            media,
            attributes: Default::default(),
            author: "ann".into(),
            language: "en".into(),
            rating: 5,
            title: None,
            body: body.into(),
            created_at: None,
        };
        let published = comments
            .create("p", new("Approved.", stored.clone()), None)
            .await
            .unwrap()
            .comment
            .id;
        comments.approve(&published).await.unwrap();
        let waiting = comments
            .create("p", new("Waiting.", stored[..1].to_vec()), None)
            .await
            .unwrap()
            .comment
            .id;
        (published, waiting)
    };
    let photo = |at: usize, status: &str| {
        json!({
            "id": stored[at].id.as_str(),
            "width": stored[at].width,
            "height": stored[at].height,
            "status": status,
        })
    };
    for author in [None, Some("ann")] {
        let export = data.path().join("export.ndjson");
        let mut args = vec![
            "export",
            "--data",
            data.path().to_str().unwrap(),
            "--output",
            export.to_str().unwrap(),
        ];
        if let Some(author) = author {
            args.extend(["--author", author]);
        }
        let out = rave(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<Value> = std::fs::read_to_string(&export)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let media_of = |id: &str| {
            lines
                .iter()
                .find(|line| line["id"] == id)
                .unwrap_or_else(|| panic!("{id} not exported: {lines:?}"))["media"]
                .clone()
        };
        assert_eq!(
            media_of(&published),
            json!([photo(0, "published"), photo(1, "published")]),
            "{author:?}"
        );
        assert_eq!(
            media_of(&waiting),
            json!([photo(0, "pending")]),
            "{author:?}"
        );
    }
}

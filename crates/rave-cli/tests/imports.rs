//! `rave import --from` and `--map` through the binary: every platform's
//! export imports; a second import creates nothing; an import killed with
//! SIGKILL and run again ends with exactly the file's reviews; statistics,
//! the leaderboard and pages follow; and the reviewers' emails appear in
//! no public answer, page, log line or export but the author's own; a row
//! named only by a SKU finds the product whose record lists it.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{RAVE, Server, serve_args};
use serde_json::Value;

const TOKEN: &str = "imports-admin-token";

fn rave(args: &[&str]) -> Output {
    Command::new(RAVE).args(args).output().expect("run rave")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fixture(name: &str) -> String {
    format!(
        "{}/../rave-import/tests/fixtures/{name}.csv",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Every comment id of the store at `data`, from a full export.
fn exported(data: &str) -> (BTreeSet<String>, String) {
    let text = ok(&rave(&["export", "--data", data]));
    let ids = text
        .lines()
        .map(|line| {
            let comment: Value = serde_json::from_str(line).unwrap();
            comment["id"].as_str().unwrap().to_owned()
        })
        .collect();
    (ids, text)
}

async fn get(client: &reqwest::Client, url: String) -> (reqwest::StatusCode, String) {
    let response = client.get(url).send().await.unwrap();
    (response.status(), response.text().await.unwrap())
}

/// Polls `url` until `done` holds of its JSON (at most 30 s).
async fn eventually(client: &reqwest::Client, url: String, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let (_, body) = get(client, url.clone()).await;
        let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if done(&value) {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url} never got there: {value}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn platform_exports_import_once_and_their_emails_stay_private() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let data = data.to_str().unwrap();
    let products = dir.path().join("products.csv");
    std::fs::write(
        &products,
        "gid://shopify/Product/7,plate-7\nSKU-PLATE,plate\n",
    )
    .unwrap();
    let products = products.to_str().unwrap();
    let emails = [
        "ann@example.com",
        "bo@example.com",
        "dan@example.com",
        "eve@example.com",
        "bot@example.com",
    ];
    let import = |platform: &str| {
        rave(&[
            "import",
            "--data",
            data,
            "--from",
            platform,
            "--language",
            "en",
            "--product-map",
            products,
            // The fixtures' image URLs name no server: kept as references
            // (fetching them is tests/import_photos.rs').
            "--no-fetch-images",
            &fixture(platform),
        ])
    };
    let mut expected = 0;
    for (platform, rows) in [("okendo", 3), ("judgeme", 2), ("yotpo", 2), ("shopify", 2)] {
        let stdout = ok(&import(platform));
        assert!(
            stdout.contains(&format!("imported {rows} comments, skipped 0 bad lines")),
            "{platform}: {stdout}"
        );
        expected += rows;
    }
    let (ids, export) = exported(data);
    assert_eq!(ids.len(), expected);
    // Again: nothing new, nothing changed.
    for platform in ["okendo", "judgeme", "yotpo", "shopify"] {
        let stdout = ok(&import(platform));
        assert!(
            stdout.contains("imported 0 comments"),
            "{platform}: {stdout}"
        );
    }
    let (again, export_again) = exported(data);
    assert_eq!(again, ids);
    let sorted = |text: &str| -> BTreeSet<String> { text.lines().map(str::to_owned).collect() };
    assert_eq!(sorted(&export_again), sorted(&export));
    // The normal export says where each came from, and never an email.
    assert!(export.contains(r#""source":"okendo""#) && export.contains(r#""source":"shopify""#));
    assert!(export.contains("https://cdn.example.com/a.jpg"));
    for email in emails {
        assert!(!export.contains(email), "{email} in the export");
    }

    // The server: statistics, the leaderboard and pages follow the import.
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut command = Command::new(RAVE);
    command
        .args(serve_args(Path::new(data), &["--admin-token", TOKEN]))
        .env("RAVE_LOG", "debug");
    let mut server = Server::start_logging(command, Stdio::from(log));
    let client = reqwest::Client::new();
    let base = server.base.clone();
    // blue-mug: Ann 5 (okendo), Ann 5 + hidden Dan 2 (judgeme), Ann 5 +
    // hidden Eve 3 (yotpo), Ann 5 + unpublished bot 1 (shopify).
    let stats = eventually(&client, format!("{base}/v1/products/blue-mug/stats"), |s| {
        s["total"] == 4
    })
    .await;
    assert_eq!(stats["counts"]["5"], 4);
    let leaders = eventually(&client, format!("{base}/v1/leaderboard"), |l| {
        l["items"][0]["product_id"] == "blue-mug"
    })
    .await;
    assert_eq!(leaders["items"][0]["five_star"], 4);
    let global = eventually(&client, format!("{base}/v1/stats"), |g| {
        g["comments_total"] == 6
    })
    .await;
    assert_eq!(global["comments_total"], 6, "hidden reviews count nowhere");
    let mut public = vec![stats.to_string(), leaders.to_string(), global.to_string()];
    for url in [
        "/v1/products/blue-mug/comments?limit=100",
        "/v1/products/plate/comments",
        "/v1/products/plate-7/comments",
        "/v1/products/plate-7/stats?language=de",
        "/products/blue-mug",
        "/fragments/products/blue-mug",
        "/v1/products/blue-mug",
        "/embed.js",
        "/openapi.json",
    ] {
        let (status, body) = get(&client, format!("{base}{url}")).await;
        assert!(status.is_success(), "{url}: {status}");
        public.push(body);
    }
    let page: Value = serde_json::from_str(&public[3]).unwrap();
    assert!(page["items"].as_array().unwrap().len() >= 4);
    // The product page and its fragment show the imported reviews.
    for html in [&public[7], &public[8]] {
        assert!(html.contains("Sturdy mug, keeps coffee hot."), "{html}");
    }
    for id in &ids {
        let (status, body) = get(&client, format!("{base}/v1/comments/{id}")).await;
        assert!(status.is_success());
        let comment: Value = serde_json::from_str(&body).unwrap();
        assert!(comment["source"].is_string(), "{body}");
        public.push(body);
    }
    // The admin's listing of an author shows where the comments came from,
    // and still no email.
    let by_author: Value = client
        .get(format!("{base}/v1/authors/Ann%20Lee/comments"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(by_author["items"].as_array().unwrap().len(), 4);
    assert!(by_author["items"][0]["source"].is_string());
    public.push(by_author.to_string());
    for body in &public {
        for email in emails {
            assert!(!body.contains(email), "{email} shown in {body}");
        }
    }
    assert_eq!(server.terminate().code(), Some(0));
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!log.is_empty(), "the server logged");
    for email in emails {
        assert!(!log.contains(email), "{email} in the log");
    }

    // The data subject's own export holds their email; erasure removes it.
    let own = ok(&rave(&["export", "--data", data, "--author", "Ann Lee"]));
    assert_eq!(own.lines().count(), 4);
    assert!(
        own.lines()
            .all(|line| line.contains(r#""email":"ann@example.com""#)),
        "{own}"
    );
    let mut server = common::serve(Path::new(data), &["--admin-token", TOKEN]);
    let erased = client
        .delete(format!("{}/v1/authors/Ann%20Lee/comments", server.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(erased.status().is_success());
    assert_eq!(server.terminate().code(), Some(0));
    let own = ok(&rave(&["export", "--data", data, "--author", "Ann Lee"]));
    assert_eq!(own.lines().count(), 0);
    let storage = ok(&rave(&["export", "--data", data]));
    assert!(!storage.contains("Ann Lee"));
}

/// A generic CSV of `rows` reviews over a few products.
fn generated_csv(path: &Path, rows: usize) {
    let mut text = String::from("Reviewer;Mail;Stars;Review;Item;Written\r\n");
    for i in 0..rows {
        text.push_str(&format!(
            "\"Reviewer {i}\";r{i}@example.com;{};\"Review number {i}; it says \"\"fine\"\".\";item-{};2024-01-{:02} 10:{:02}:{:02}\r\n",
            i % 5 + 1,
            i % 7,
            i % 28 + 1,
            (i / 60) % 60,
            i % 60,
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn import_generated(data: &str, file: &str) -> Command {
    let mut command = Command::new(RAVE);
    command.args([
        "import",
        "--data",
        data,
        "--language",
        "en",
        "--map",
        "Reviewer=author",
        "--map",
        "Mail=email",
        "--map",
        "Stars=rating",
        "--map",
        "Review=body",
        "--map",
        "Item=product_id",
        "--map",
        "Written=date",
        file,
    ]);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_killed_and_run_again_ends_with_exactly_the_files_reviews() {
    const ROWS: usize = 6_000;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reviews.csv");
    generated_csv(&file, ROWS);
    let file = file.to_str().unwrap();
    // The ids a clean import gives.
    let clean = dir.path().join("clean");
    let clean = clean.to_str().unwrap();
    let started = Instant::now();
    ok(&import_generated(clean, file).output().unwrap());
    let whole = started.elapsed();
    let (expected, _) = exported(clean);
    assert_eq!(expected.len(), ROWS);

    // Killed part-way: the delay is searched between nothing written yet
    // and everything written, from how long a whole import took, until a
    // kill lands while the import is writing.
    let (mut early, mut late) = (Duration::ZERO, whole * 2);
    let mut landed = None;
    for attempt in 0..16 {
        let delay = (early + late) / 2;
        let data = dir.path().join(format!("killed-{attempt}"));
        let data = data.to_str().unwrap().to_owned();
        let mut child = import_generated(&data, file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        child.kill().unwrap();
        let finished = child.wait().unwrap().success();
        let partial = if Path::new(&data).exists() {
            exported(&data).0
        } else {
            BTreeSet::new()
        };
        if finished || partial.len() == ROWS {
            late = delay;
        } else if partial.is_empty() {
            early = delay;
        } else {
            assert!(partial.is_subset(&expected));
            landed = Some(data);
            break;
        }
    }
    let data = landed.expect("no kill landed while the import was writing");
    let stdout = ok(&import_generated(&data, file).output().unwrap());
    assert!(stdout.contains("already there"), "{stdout}");
    let (resumed, _) = exported(&data);
    assert_eq!(resumed, expected, "exactly the file's reviews");
    let again = ok(&import_generated(&data, file).output().unwrap());
    assert!(
        again.contains(&format!(
            "imported 0 comments, skipped 0 bad lines, {ROWS} already there"
        )),
        "{again}"
    );

    // The statistics count each once.
    let server = common::serve(Path::new(&data), &[]);
    let client = reqwest::Client::new();
    let global = eventually(&client, format!("{}/v1/stats", server.base), |g| {
        g["comments_total"] == ROWS
    })
    .await;
    assert_eq!(global["comments_total"], ROWS);
}

#[test]
fn bad_csv_rows_are_reported_by_line_and_skipped_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let data = data.to_str().unwrap();
    let file = dir.path().join("bad.csv");
    std::fs::write(
        &file,
        "name,body,handle,rating,dateCreated\n\
         Ann,\"Fine,\nover two lines\",mug,5,2024-01-02\n\
         Bo,Too many stars,mug,9,2024-01-02\n\
         Cy,Fine too,mug,4,2024-01-03\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let args = [
        "import",
        "--data",
        data,
        "--from",
        "okendo",
        "--language",
        "en",
        file,
    ];
    let out = rave(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("line 4: rating"), "{stderr}");
    let out = rave(&[&args[..], &["--skip-bad-lines"]].concat());
    let stdout = ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 4: rating"));
    assert!(stdout.contains("skipped 1 bad lines"), "{stdout}");
    assert_eq!(exported(data).0.len(), 2);
    let out = rave(&["import", "--data", data, "--from", "stamped-like", file]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("okendo, judgeme, yotpo, shopify"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sku_finds_its_product_through_the_product_records() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let data = data.to_str().unwrap();
    // The shop's product records, set on the server.
    let mut server = common::serve(Path::new(data), &["--admin-token", TOKEN]);
    let put = reqwest::Client::new()
        .put(format!("{}/v1/products/plate", server.base))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"name": "Plate", "skus": ["PLATE-7/8"]}))
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    assert_eq!(server.terminate().code(), Some(0));

    let file = dir.path().join("by-sku.csv");
    std::fs::write(
        &file,
        "name,body,productId,rating,sku,dateCreated\n\
         Ann,Named by its SKU alone.,,5,PLATE-7/8,2024-01-02\n\
         Bo,A SKU no record lists.,,4,NOPE-1,2024-01-03\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let args = [
        "import",
        "--data",
        data,
        "--from",
        "okendo",
        "--language",
        "en",
        file,
    ];
    let out = rave(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("line 3: sku: ") && stderr.contains("\"NOPE-1\""),
        "{stderr}"
    );
    let skipping = [&args[..], &["--skip-bad-lines"]].concat();
    let stdout = ok(&rave(&skipping));
    assert!(
        stdout.contains("imported 1 comments, skipped 1 bad lines"),
        "{stdout}"
    );
    let (ids, export) = exported(data);
    assert_eq!(ids.len(), 1);
    assert!(export.contains(r#""product_id":"plate""#), "{export}");
    // Again: the row found by its SKU is the same comment.
    let stdout = ok(&rave(&skipping));
    assert!(stdout.contains("imported 0 comments"), "{stdout}");
    assert_eq!(exported(data).0, ids);
}

/// A store at `data` whose product `shirt` asks for `quality` (a rating)
/// and `fit` (a choice).
async fn store_declaring_attributes(data: &Path) {
    use rave_comments::{
        AttributeDeclaration, AttributeKind, AttributeName, Comments, Config, CursorKey,
        DeclaredAttributes, Moderation, ProductRecord,
    };
    let engine = rave_engine::Engine::open(data).unwrap();
    let comments = Comments::new(
        engine,
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([1; 32]),
            moderation: Moderation::Off,
        },
    );
    comments.ensure_table().await.unwrap();
    let attributes = DeclaredAttributes::new(vec![
        AttributeDeclaration {
            name: AttributeName::parse("quality").unwrap(),
            kind: AttributeKind::Rating,
        },
        AttributeDeclaration {
            name: AttributeName::parse("fit").unwrap(),
            kind: AttributeKind::Choice(vec![
                "runs_small".into(),
                "true_to_size".into(),
                "runs_large".into(),
            ]),
        },
    ])
    .unwrap();
    let record = ProductRecord {
        name: "Shirt".into(),
        attributes,
        ..ProductRecord::default()
    };
    comments.put_product("shirt", record).await.unwrap();
}

/// The attributes of every exported comment, by author.
fn exported_attributes(data: &str) -> std::collections::BTreeMap<String, Value> {
    exported(data)
        .1
        .lines()
        .map(|line| {
            let comment: Value = serde_json::from_str(line).unwrap();
            (
                comment["author"].as_str().unwrap().to_owned(),
                comment["attributes"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn imports_carry_attributes_and_a_bad_answer_names_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    store_declaring_attributes(&store).await;
    let data = store.to_str().unwrap();
    let ndjson = dir.path().join("answers.ndjson");
    std::fs::write(
        &ndjson,
        "{\"product_id\":\"shirt\",\"author\":\"ann\",\"language\":\"en\",\"rating\":5,\"body\":\"b\",\
          \"created_at\":\"2026-01-02T00:00:00.000Z\",\"attributes\":{\"quality\":4,\"fit\":\"runs_small\"}}\n\
         {\"product_id\":\"shirt\",\"author\":\"bo\",\"language\":\"en\",\"rating\":5,\"body\":\"b\",\
          \"created_at\":\"2026-01-03T00:00:00.000Z\",\"attributes\":{\"fit\":\"huge\"}}\n",
    )
    .unwrap();
    let ndjson = ndjson.to_str().unwrap();
    let out = rave(&["import", "--data", data, ndjson]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("line 2: attributes: fit: must be one of"),
        "{stderr}"
    );
    assert!(
        !exported_attributes(data).contains_key("bo"),
        "nothing of bo stored"
    );
    ok(&rave(&[
        "import",
        "--data",
        data,
        "--skip-bad-lines",
        ndjson,
    ]));

    let csv = dir.path().join("answers.csv");
    std::fs::write(
        &csv,
        "name,body,handle,rating,dateCreated,Quality,Fit\n\
         Cy,Fine,shirt,4,2024-01-02,2,true_to_size\n\
         Dee,Fine too,shirt,5,2024-01-03,,runs_large\n\
         Eve,Too good,shirt,5,2024-01-04,7,\n",
    )
    .unwrap();
    let out = rave(&[
        "import",
        "--data",
        data,
        "--from",
        "okendo",
        "--language",
        "en",
        "--map",
        "Quality=attributes.quality",
        "--map",
        "Fit=attributes.fit",
        "--skip-bad-lines",
        csv.to_str().unwrap(),
    ]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 4: attributes: quality: must be an integer from 1 to 5"),
        "{stderr}"
    );
    let answers = exported_attributes(data);
    assert_eq!(
        answers,
        [
            (
                "ann",
                serde_json::json!({"quality": 4, "fit": "runs_small"})
            ),
            (
                "Cy",
                serde_json::json!({"quality": 2, "fit": "true_to_size"})
            ),
            ("Dee", serde_json::json!({"fit": "runs_large"})),
        ]
        .into_iter()
        .map(|(author, answers)| (author.to_owned(), answers))
        .collect()
    );
    let out = rave(&[
        "import",
        "--data",
        data,
        "--map",
        "Fit=attributes.Fit",
        csv.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("attributes.Fit"));
}

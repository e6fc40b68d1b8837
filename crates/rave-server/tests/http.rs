//! The API of API.md through real HTTP: every endpoint and every error
//! status, against the server on an ephemeral port over the embedded store.

use std::sync::Arc;

use rave_comments::{Comments, Moderation};
use rave_server::ServerConfig;
use rave_store::SharedStore;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use server::{TOKEN, TestServer};

async fn start_with(config: ServerConfig, moderation: Moderation) -> TestServer {
    server::start_with(config, moderation, None).await
}

async fn start() -> TestServer {
    server::start(None).await
}

impl TestServer {
    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None, false).await
    }

    /// The `/metrics` exposition.
    async fn metrics(&self) -> String {
        let (status, metrics) = self.get("/metrics").await;
        assert_eq!(status, StatusCode::OK);
        metrics.as_str().unwrap().to_owned()
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(body), false).await
    }

    async fn create(&self, product: &str, language: &str, rating: i64) -> Value {
        let (status, body) = self
            .post(
                &format!("/v1/products/{product}/comments"),
                json!({"author": "alice", "language": language, "rating": rating, "title": "t", "body": "b"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }
}

fn comment() -> Value {
    json!({"author": "alice", "language": "en", "rating": 5, "title": "Great", "body": "Works well."})
}

/// Asserts a problem document with `status` whose detail mentions `field`.
fn assert_problem(result: (StatusCode, Value), status: StatusCode, field: &str) {
    let (actual, body) = result;
    assert_eq!(actual, status, "{body}");
    assert_eq!(body["status"], status.as_u16(), "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(field),
        "detail {detail:?} should name {field:?}"
    );
}

#[tokio::test]
async fn create_get_and_list() {
    let s = start().await;
    let response = s
        .client
        .post(format!("{}/v1/products/42/comments", s.base))
        .json(&comment())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created: Value = response.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/comments/{}", created["id"].as_str().unwrap())
    );
    assert_eq!(created["status"], "published");
    assert_eq!(created["rating"], 5);
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));

    let (status, fetched) = s.get(&location).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fetched, created);

    let (status, page) = s.get("/v1/products/42/comments").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["items"], json!([created]));
    assert_eq!(page["next_cursor"], Value::Null);
    assert!(page.get("plan").is_none(), "no plan without explain");

    let (status, empty) = s.get("/v1/products/nothing-here/comments").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(empty["items"], json!([]));
    assert_problem(
        s.get("/v1/comments/01JD3X0000000000000000000Z").await,
        StatusCode::NOT_FOUND,
        "comment",
    );
}

#[tokio::test]
async fn filters_and_explain() {
    let s = start().await;
    for (language, rating) in [("en", 1), ("en", 5), ("de", 5), ("en", 3)] {
        s.create("p", language, rating).await;
    }
    let count = |page: &Value| page["items"].as_array().unwrap().len();
    assert_eq!(
        count(&s.get("/v1/products/p/comments?language=en").await.1),
        3
    );
    assert_eq!(count(&s.get("/v1/products/p/comments?rating=5").await.1), 2);
    assert_eq!(
        count(&s.get("/v1/products/p/comments?rating=1&rating=5").await.1),
        3
    );
    assert_eq!(
        count(
            &s.get("/v1/products/p/comments?rating=1,5,5&language=en")
                .await
                .1
        ),
        2
    );
    let (_, page) = s
        .get("/v1/products/p/comments?rating=1,5&language=en&explain=true")
        .await;
    assert_eq!(page["plan"]["strategy"], "language_ratings_fan_out");
    assert_eq!(page["plan"]["queries"][0]["index"], "byLangAndRating");
    assert_eq!(
        page["plan"]["queries"][0]["partition_key"],
        "PRODUCT#p/en/1"
    );
    assert!(page["plan"]["read_units"].as_f64().unwrap() > 0.0);
    let (_, page) = s
        .get("/v1/products/p/comments?rating=1,2,3,4,5&explain=true")
        .await;
    assert_eq!(
        page["plan"]["strategy"], "all",
        "all five ratings is no filter"
    );

    for bad in [
        "rating=0",
        "rating=6",
        "rating=4.5",
        "rating=x",
        "rating=",
        "rating=1,,2",
    ] {
        assert_problem(
            s.get(&format!("/v1/products/p/comments?{bad}")).await,
            StatusCode::BAD_REQUEST,
            "rating",
        );
    }
    for bad in ["limit=0", "limit=101", "limit=ten"] {
        assert_problem(
            s.get(&format!("/v1/products/p/comments?{bad}")).await,
            StatusCode::BAD_REQUEST,
            "limit",
        );
    }
    assert_problem(
        s.get("/v1/products/p/comments?language=EN").await,
        StatusCode::BAD_REQUEST,
        "language",
    );
    assert_problem(
        s.get("/v1/products/p/comments?explain=yes").await,
        StatusCode::BAD_REQUEST,
        "explain",
    );
    assert_problem(
        s.get("/v1/products/p/comments?ratings=5").await,
        StatusCode::BAD_REQUEST,
        "ratings",
    );
    assert_problem(
        s.get("/v1/products/a%23b/comments").await,
        StatusCode::BAD_REQUEST,
        "product_id",
    );
    assert_problem(
        s.get("/v1/products/a~b/comments").await,
        StatusCode::BAD_REQUEST,
        "product_id",
    );
}

#[tokio::test]
async fn every_field_rule_is_a_400_that_names_the_field() {
    let s = start().await;
    let path = "/v1/products/p/comments";
    let with = |field: &str, value: Value| {
        let mut body = comment();
        body[field] = value;
        body
    };
    let cases = [
        (with("author", json!("")), "author"),
        (with("author", json!("a".repeat(65))), "author"),
        (with("author", json!("bad\u{0007}name")), "author"),
        (with("language", json!("english")), "language"),
        (with("language", json!("EN")), "language"),
        (with("language", json!("e#")), "language"),
        (with("rating", json!("5")), "rating"),
        (with("rating", json!(0)), "rating"),
        (with("rating", json!(6)), "rating"),
        (with("rating", json!(4.5)), "rating"),
        (with("rating", Value::Null), "rating"),
        (with("title", json!("t".repeat(201))), "title"),
        (with("body", json!("")), "body"),
        (with("body", json!("b".repeat(10_001))), "body"),
        (with("nickname", json!("x")), "nickname"),
        (
            with("created_at", json!("2026-01-01T00:00:00.000Z")),
            "created_at",
        ),
    ];
    for (body, field) in cases {
        assert_problem(s.post(path, body).await, StatusCode::BAD_REQUEST, field);
    }
    let mut missing = comment();
    missing.as_object_mut().unwrap().remove("body");
    assert_problem(s.post(path, missing).await, StatusCode::BAD_REQUEST, "body");
    for product in ["a%23b", "a%2Fb", "a~b", "a%20b"] {
        assert_problem(
            s.post(&format!("/v1/products/{product}/comments"), comment())
                .await,
            StatusCode::BAD_REQUEST,
            "product_id",
        );
    }
    // Nothing of the above was stored.
    assert_eq!(s.get(path).await.1["items"], json!([]));
}

#[tokio::test]
async fn bodies_sizes_and_content_types() {
    let s = start().await;
    let url = format!("{}/v1/products/p/comments", s.base);
    let big = json!({"author": "a", "language": "en", "rating": 5, "body": "x".repeat(70 * 1024)});
    let response = s.client.post(&url).json(&big).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let response = s
        .client
        .post(&url)
        .header("content-type", "text/plain")
        .body(comment().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let response = s
        .client
        .post(&url)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_problem(
        s.get("/v1/nowhere").await,
        StatusCode::NOT_FOUND,
        "endpoint",
    );
    assert_problem(
        s.call(Method::PUT, "/v1/products/p/comments", None, false)
            .await,
        StatusCode::METHOD_NOT_ALLOWED,
        "method",
    );
}

#[tokio::test]
async fn cursors_page_through_everything_and_refuse_tampering() {
    let s = start().await;
    for i in 0..7 {
        s.create("p", if i % 2 == 0 { "en" } else { "de" }, 1 + i % 5)
            .await;
    }
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/products/p/comments?limit=3&cursor={c}"),
            None => "/v1/products/p/comments?limit=3".to_owned(),
        };
        let (status, page) = s.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let items = page["items"].as_array().unwrap();
        ids.extend(items.iter().map(|c| c["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(next) => {
                assert_eq!(items.len(), 3, "every page but the last is full");
                cursor = Some(next.to_owned());
            }
            None => break,
        }
    }
    assert_eq!(ids.len(), 7);
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "newest first");

    let (_, first) = s.get("/v1/products/p/comments?limit=2").await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let flipped: String = cursor
        .char_indices()
        .map(|(i, c)| {
            if i == 5 {
                if c == 'A' { 'B' } else { 'A' }
            } else {
                c
            }
        })
        .collect();
    for bad in [
        format!("/v1/products/p/comments?limit=2&cursor={flipped}"),
        format!(
            "/v1/products/p/comments?limit=2&cursor={}",
            &cursor[..cursor.len() - 3]
        ),
        "/v1/products/p/comments?limit=2&cursor=".to_owned(),
        format!("/v1/products/q/comments?limit=2&cursor={cursor}"),
        format!("/v1/products/p/comments?limit=2&language=en&cursor={cursor}"),
        format!("/v1/products/p/comments?limit=2&rating=5&cursor={cursor}"),
        "/v1/products/p/comments?cursor=%21%21%21".to_owned(),
    ] {
        assert_problem(s.get(&bad).await, StatusCode::BAD_REQUEST, "cursor");
    }
}

#[tokio::test]
async fn walking_pages_while_comments_arrive_skips_and_repeats_nothing() {
    let s = Arc::new(start().await);
    let mut before = Vec::new();
    for i in 0..40 {
        before.push(
            s.create("walk", "en", 1 + i % 5).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let writer = {
        let s = s.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                s.create("walk", "en", 1 + i % 5).await;
            }
        })
    };
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/products/walk/comments?limit=4&rating=1,3,5&cursor={c}"),
            None => "/v1/products/walk/comments?limit=4&rating=1,3,5".to_owned(),
        };
        let (_, page) = s.get(&path).await;
        seen.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    writer.await.unwrap();
    let unique: std::collections::BTreeSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "nothing repeats");
    let (_, all) = s
        .get("/v1/products/walk/comments?limit=100&rating=1,3,5")
        .await;
    let matching_before: Vec<_> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .filter(|id| before.contains(id))
        .collect();
    for id in &matching_before {
        assert!(
            seen.contains(id),
            "{id} existed before the walk and was skipped"
        );
    }
}

#[tokio::test]
async fn admin_endpoints_need_the_token() {
    let s = start().await;
    let id = s.create("p", "en", 4).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let c = format!("/v1/comments/{id}");
    let admin_calls = [
        (Method::PATCH, c.clone(), Some(json!({"rating": 2}))),
        (Method::DELETE, c.clone(), None),
        (Method::POST, format!("{c}/approve"), None),
        (Method::POST, format!("{c}/reject"), None),
        (
            Method::PUT,
            format!("{c}/reply"),
            Some(json!({"body": "Thanks"})),
        ),
        (Method::DELETE, format!("{c}/reply"), None),
        (Method::GET, "/v1/moderation/queue".to_owned(), None),
    ];
    for (method, path, body) in &admin_calls {
        let (status, _) = s.call(method.clone(), path, body.clone(), false).await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{method} {path} without a token"
        );
        let response = s
            .client
            .request(method.clone(), format!("{}{path}", s.base))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{method} {path} with a wrong token"
        );
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    // Without a configured admin token, only tokens from the access table
    // open staff endpoints: the old admin token is just a wrong one.
    let closed = start_with(
        ServerConfig {
            admin_token: None,
            rate_limit_per_minute: 0,
        },
        Moderation::Off,
    )
    .await;
    let (status, body) = closed
        .call(Method::GET, "/v1/moderation/queue", None, true)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].as_str().unwrap().contains("not valid"));
}

#[tokio::test]
async fn edit_delete_flag_approve_reject() {
    let s = start().await;
    let id = s.create("p", "en", 4).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let c = format!("/v1/comments/{id}");
    let (status, edited) = s
        .call(
            Method::PATCH,
            &c,
            Some(json!({"rating": 2, "language": "de"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (edited["rating"].clone(), edited["language"].clone()),
        (json!(2), json!("de"))
    );
    assert_eq!(
        s.get("/v1/products/p/comments?rating=2&language=de")
            .await
            .1["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        s.get("/v1/products/p/comments?rating=4").await.1["items"],
        json!([])
    );
    for field in ["author", "created_at", "status", "id"] {
        assert_problem(
            s.call(Method::PATCH, &c, Some(json!({field: "x"})), true)
                .await,
            StatusCode::BAD_REQUEST,
            field,
        );
    }
    assert_problem(
        s.call(Method::PATCH, &c, Some(json!({"rating": 9})), true)
            .await,
        StatusCode::BAD_REQUEST,
        "rating",
    );
    assert_problem(
        s.call(
            Method::PATCH,
            "/v1/comments/01JD3X0000000000000000000Z",
            Some(json!({"rating": 1})),
            true,
        )
        .await,
        StatusCode::NOT_FOUND,
        "comment",
    );

    let (status, flagged) = s
        .call(Method::POST, &format!("{c}/flag"), None, false)
        .await;
    assert_eq!(
        (status, flagged["status"].clone()),
        (StatusCode::OK, json!("flagged"))
    );
    let (_, again) = s
        .call(Method::POST, &format!("{c}/flag"), None, false)
        .await;
    assert_eq!(again["status"], "flagged", "flagging twice changes nothing");
    assert_eq!(
        s.get("/v1/products/p/comments").await.1["items"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "still visible"
    );
    let (_, queue) = s
        .call(
            Method::GET,
            "/v1/moderation/queue?state=flagged",
            None,
            true,
        )
        .await;
    assert_eq!(queue["items"][0]["id"], json!(id));
    let (status, approved) = s
        .call(Method::POST, &format!("{c}/approve"), None, true)
        .await;
    assert_eq!(
        (status, approved["status"].clone()),
        (StatusCode::OK, json!("published"))
    );
    let (_, queue) = s
        .call(
            Method::GET,
            "/v1/moderation/queue?state=flagged",
            None,
            true,
        )
        .await;
    assert_eq!(queue["items"], json!([]));
    assert_problem(
        s.call(
            Method::GET,
            "/v1/moderation/queue?state=published",
            None,
            true,
        )
        .await,
        StatusCode::BAD_REQUEST,
        "state",
    );
    assert_problem(
        s.call(
            Method::GET,
            "/v1/moderation/queue?since=yesterday",
            None,
            true,
        )
        .await,
        StatusCode::BAD_REQUEST,
        "since",
    );

    let (status, _) = s.call(Method::DELETE, &c, None, true).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_problem(s.get(&c).await, StatusCode::NOT_FOUND, "comment");
    assert_problem(
        s.call(Method::DELETE, &c, None, true).await,
        StatusCode::NOT_FOUND,
        "comment",
    );

    let other = s.create("p", "en", 1).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = s
        .call(
            Method::POST,
            &format!("/v1/comments/{other}/reject"),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(s.get("/v1/products/p/comments").await.1["items"], json!([]));
}

#[tokio::test]
async fn merchant_replies_show_everywhere_and_change_no_order() {
    let s = start().await;
    let older = s.create("p", "en", 5).await;
    let newer = s.create("p", "en", 2).await;
    assert_eq!(older["reply"], Value::Null, "no reply is null, not absent");
    let reply_path = format!("/v1/comments/{}/reply", older["id"].as_str().unwrap());
    let (status, replied) = s
        .call(
            Method::PUT,
            &reply_path,
            Some(json!({"body": "Thank you!"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replied}");
    let reply = replied["reply"].clone();
    assert_eq!(reply["body"], "Thank you!");
    assert_eq!(reply["created_at"], reply["updated_at"]);
    assert!(reply["created_at"].as_str().unwrap().ends_with('Z'));

    let (_, fetched) = s
        .get(&format!("/v1/comments/{}", older["id"].as_str().unwrap()))
        .await;
    assert_eq!(fetched, replied);
    for query in ["", "?language=en", "?rating=5", "?rating=2&rating=5"] {
        let (_, page) = s.get(&format!("/v1/products/p/comments{query}")).await;
        let items = page["items"].as_array().unwrap();
        let shown = items.iter().find(|c| c["id"] == older["id"]).unwrap();
        assert_eq!(shown["reply"], reply, "{query}");
    }
    let (_, page) = s.get("/v1/products/p/comments").await;
    let order: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(
        order,
        [&newer["id"], &older["id"]],
        "newest first, as before"
    );

    for (body, field) in [
        (json!({"body": ""}), "body"),
        (json!({"body": "x".repeat(10_001)}), "body"),
        (json!({"body": "ok", "author": "x"}), "author"),
        (json!({}), "body"),
    ] {
        assert_problem(
            s.call(Method::PUT, &reply_path, Some(body), true).await,
            StatusCode::BAD_REQUEST,
            field,
        );
    }
    let (_, unchanged) = s
        .get(&format!("/v1/comments/{}", older["id"].as_str().unwrap()))
        .await;
    assert_eq!(unchanged["reply"], reply, "a refused reply changes nothing");

    let (status, removed) = s.call(Method::DELETE, &reply_path, None, true).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(removed["reply"], Value::Null);
    let (status, again) = s.call(Method::DELETE, &reply_path, None, true).await;
    assert_eq!((status, again), (StatusCode::OK, removed));
    let missing = "/v1/comments/01JD3X0000000000000000000Z/reply";
    assert_problem(
        s.call(Method::PUT, missing, Some(json!({"body": "hi"})), true)
            .await,
        StatusCode::NOT_FOUND,
        "comment",
    );
    assert_problem(
        s.call(Method::DELETE, missing, None, true).await,
        StatusCode::NOT_FOUND,
        "comment",
    );
}

#[tokio::test]
async fn idempotent_posts_replay_and_conflict() {
    let s = start().await;
    let post = |key: &str, body: Value| {
        s.client
            .post(format!("{}/v1/products/p/comments", s.base))
            .header("Idempotency-Key", key)
            .json(&body)
            .send()
    };
    let first = post("abc", comment()).await.unwrap();
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.unwrap();
    let replay = post("abc", comment()).await.unwrap();
    assert_eq!(replay.status(), StatusCode::CREATED);
    let replay: Value = replay.json().await.unwrap();
    assert_eq!(replay["id"], first["id"]);
    assert_eq!(
        s.get("/v1/products/p/comments").await.1["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let mut other = comment();
    other["body"] = json!("something else");
    assert_eq!(
        post("abc", other).await.unwrap().status(),
        StatusCode::CONFLICT
    );
    let long = "k".repeat(129);
    assert_eq!(
        post(&long, comment()).await.unwrap().status(),
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn pre_moderation_hides_comments_until_approved() {
    let s = start_with(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        Moderation::Pre,
    )
    .await;
    let created = s.create("p", "en", 5).await;
    assert_eq!(created["status"], "pending");
    assert_eq!(s.get("/v1/products/p/comments").await.1["items"], json!([]));
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        s.get(&format!("/v1/comments/{id}")).await.1["status"],
        "pending",
        "readable by id"
    );
    let (_, queue) = s
        .call(Method::GET, "/v1/moderation/queue", None, true)
        .await;
    assert_eq!(queue["items"][0]["id"], json!(id));
    s.call(
        Method::POST,
        &format!("/v1/comments/{id}/approve"),
        None,
        true,
    )
    .await;
    assert_eq!(
        s.get("/v1/products/p/comments").await.1["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn admin_imports_keep_their_creation_time() {
    let s = start().await;
    let mut body = comment();
    body["created_at"] = json!("2024-02-29T12:00:00.500Z");
    let (status, created) = s
        .call(Method::POST, "/v1/products/p/comments", Some(body), true)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["created_at"], "2024-02-29T12:00:00.500Z");
    let mut bad = comment();
    bad["created_at"] = json!("2024-02-29 12:00");
    assert_problem(
        s.call(Method::POST, "/v1/products/p/comments", Some(bad), true)
            .await,
        StatusCode::BAD_REQUEST,
        "created_at",
    );
}

#[tokio::test]
async fn public_posts_are_rate_limited_but_admin_posts_are_not() {
    let s = start_with(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 20,
        },
        Moderation::Off,
    )
    .await;
    let mut limited = None;
    for _ in 0..10 {
        let response = s
            .client
            .post(format!("{}/v1/products/p/comments", s.base))
            .json(&comment())
            .send()
            .await
            .unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(response);
            break;
        }
        assert_eq!(response.status(), StatusCode::CREATED);
    }
    let limited = limited.expect("a burst of 2 per client, then 20 a minute");
    let retry_after: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after));
    let (status, _) = s
        .call(
            Method::POST,
            "/v1/products/p/comments",
            Some(comment()),
            true,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "admin requests are not limited"
    );
    let (status, _) = s.get("/v1/products/p/comments").await;
    assert_eq!(status, StatusCode::OK, "reads are not limited");
}

#[tokio::test]
async fn health_metrics_and_openapi() {
    let s = start().await;
    let (status, health) = s.get("/healthz").await;
    assert_eq!((status, health), (StatusCode::OK, json!({"status": "ok"})));
    s.create("p", "en", 5).await;
    s.get("/v1/products/p/comments").await;
    let metrics = s.metrics().await;
    assert!(metrics.contains(r#"rave_http_requests_total{method="POST",route="/v1/products/{product_id}/comments",status="201"} 1"#), "{metrics}");
    assert!(metrics.contains("rave_http_request_duration_seconds_bucket"));
    assert!(metrics.contains("rave_write_capacity_units"));
    assert!(metrics.contains("rave_read_capacity_units"));

    let (status, doc) = s.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    let expected = [
        ("get", "/v1/products/{product_id}/comments"),
        ("post", "/v1/products/{product_id}/comments"),
        ("get", "/v1/comments/{id}"),
        ("patch", "/v1/comments/{id}"),
        ("delete", "/v1/comments/{id}"),
        ("post", "/v1/comments/{id}/flag"),
        ("post", "/v1/comments/{id}/approve"),
        ("post", "/v1/comments/{id}/reject"),
        ("put", "/v1/comments/{id}/reply"),
        ("delete", "/v1/comments/{id}/reply"),
        ("put", "/v1/comments/{id}/votes/{voter}"),
        ("delete", "/v1/comments/{id}/votes/{voter}"),
        ("get", "/v1/moderation/queue"),
        ("get", "/v1/products/{product_id}/stats"),
        ("get", "/v1/leaderboard"),
        ("get", "/v1/stats"),
        ("get", "/v1/admin/aggregator"),
        ("get", "/healthz"),
        ("get", "/readyz"),
        ("get", "/metrics"),
        ("get", "/openapi.json"),
        ("get", "/"),
    ];
    // Every schema the document refers to is in it.
    let text = doc.to_string();
    for reference in text.split("\"#/components/schemas/").skip(1) {
        let name = &reference[..reference.find('"').unwrap()];
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "{name} is referred to but not in the document"
        );
    }
    let paths = doc["paths"].as_object().unwrap();
    for (method, path) in expected {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} is missing from the document"
        );
    }
    // And every documented operation is served: none falls through to the
    // router's "no such endpoint" or "method not allowed".
    for (path, operations) in paths {
        for method in operations.as_object().unwrap().keys() {
            let concrete = path
                .replace("{product_id}", "p")
                .replace("{id}", "01JD3X0000000000000000000Z")
                .replace("{voter}", "v");
            let (status, body) = s
                .call(
                    method.to_uppercase().parse().unwrap(),
                    &concrete,
                    Some(json!({})),
                    false,
                )
                .await;
            let detail = body["detail"].as_str().unwrap_or_default();
            assert!(
                status != StatusCode::METHOD_NOT_ALLOWED && detail != "no such endpoint",
                "{method} {path} is documented but not routed"
            );
        }
    }
}

/// A server whose statistics are brought up to date on demand, and the
/// sender of the aggregator status it reports (kept alive by the caller).
async fn start_with_statistics() -> (
    TestServer,
    Arc<Comments<SharedStore>>,
    rave_engine::EngineFeed,
    tokio::sync::watch::Sender<rave_server::AggregatorStatus>,
) {
    let (status, receiver) = tokio::sync::watch::channel(rave_server::AggregatorStatus::default());
    status.send_replace(rave_server::AggregatorStatus {
        position: 7,
        latest: 9,
        lag_events: 2,
        lag_ms: 15,
        applied: 7,
        published: Some(std::time::Instant::now()),
    });
    let config = ServerConfig {
        admin_token: Some(TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    let server = server::start_serving(config, Moderation::Off, None, async |state, _| {
        (state.with_aggregator(receiver), None)
    })
    .await;
    let feed = rave_engine::EngineFeed::open(server.engine.clone(), "rave", "statistics")
        .await
        .unwrap();
    let comments = server.comments.clone();
    (server, comments, feed, status)
}

#[tokio::test]
async fn readiness_follows_the_aggregator() {
    let (s, _comments, _feed, status) = start_with_statistics().await;
    let (code, ready) = s.get("/readyz").await;
    assert_eq!(code, StatusCode::OK, "{ready}");
    assert_eq!(ready["status"], "ready");
    let names: Vec<_> = ready["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["store", "aggregator"], "{ready}");

    let lagging = |lag_ms, published| rave_server::AggregatorStatus {
        lag_ms,
        published,
        ..Default::default()
    };
    status.send_replace(lagging(61_000, Some(std::time::Instant::now())));
    let (code, not_ready) = s.get("/readyz").await;
    assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE, "{not_ready}");
    assert_eq!(not_ready["status"], "not ready");
    let aggregator = &not_ready["conditions"][1];
    assert_eq!(aggregator["ready"], false);
    assert!(
        aggregator["detail"]
            .as_str()
            .unwrap()
            .starts_with("lagging"),
        "{not_ready}"
    );

    let silent_since = std::time::Instant::now().checked_sub(std::time::Duration::from_secs(61));
    status.send_replace(lagging(0, silent_since));
    let (code, stuck) = s.get("/readyz").await;
    assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE, "{stuck}");
    assert!(
        stuck["conditions"][1]["detail"]
            .as_str()
            .unwrap()
            .starts_with("stuck"),
        "{stuck}"
    );

    status.send_replace(lagging(10, Some(std::time::Instant::now())));
    assert_eq!(s.get("/readyz").await.0, StatusCode::OK);
}

async fn catch_up(comments: &Comments<SharedStore>, feed: &rave_engine::EngineFeed) {
    use rave_store::ChangeFeed;
    loop {
        comments
            .aggregate_once(feed, std::time::Duration::from_millis(1))
            .await
            .unwrap();
        if feed.lag().await.unwrap().events == 0 {
            return;
        }
    }
}

#[tokio::test]
async fn statistics_leaderboard_and_aggregates() {
    let (s, comments, feed, _status) = start_with_statistics().await;
    let (_, empty) = s.get("/v1/products/none/stats").await;
    assert_eq!(
        empty,
        json!({"product_id": "none", "language": null, "counts": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}, "total": 0, "verified_total": 0, "verified_counts": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}, "media_total": 0, "media_counts": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}, "average": null, "attributes": {}})
    );
    for (product, language, rating) in [
        ("x", "en", 5),
        ("x", "de", 5),
        ("x", "en", 2),
        ("y", "en", 5),
        ("z", "fr", 1),
    ] {
        s.create(product, language, rating).await;
    }
    catch_up(&comments, &feed).await;
    let (status, stats) = s.get("/v1/products/x/stats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        stats["counts"],
        json!({"1": 0, "2": 1, "3": 0, "4": 0, "5": 2})
    );
    assert_eq!(stats["total"], 3);
    let (_, en) = s.get("/v1/products/x/stats?language=en").await;
    assert_eq!(
        (en["language"].clone(), en["total"].clone()),
        (json!("en"), json!(2))
    );

    let (_, board) = s.get("/v1/leaderboard").await;
    assert_eq!(
        board["items"],
        json!([{"product_id": "x", "five_star": 2}, {"product_id": "y", "five_star": 1}])
    );
    let (_, board) = s.get("/v1/leaderboard?limit=1&language=en").await;
    assert_eq!(board["items"].as_array().unwrap().len(), 1);
    let (_, fr) = s.get("/v1/leaderboard?language=fr").await;
    assert_eq!(
        fr["items"],
        json!([]),
        "products without 5-star comments are absent"
    );

    let (_, global) = s.get("/v1/stats").await;
    assert_eq!(global["comments_total"], 5);
    assert_eq!(global["products_total"], 3);
    assert_eq!(global["authors_total"], 1);
    assert_eq!(global["authors_by_comment_count"]["5"], 1);
    assert_eq!(global["authors_by_comment_count"]["10+"], 0);

    assert_problem(
        s.get("/v1/products/x/stats?language=EN").await,
        StatusCode::BAD_REQUEST,
        "language",
    );
    assert_problem(
        s.get("/v1/products/a%23b/stats").await,
        StatusCode::BAD_REQUEST,
        "product_id",
    );
    assert_problem(
        s.get("/v1/leaderboard?limit=0").await,
        StatusCode::BAD_REQUEST,
        "limit",
    );
    assert_problem(
        s.get("/v1/leaderboard?limit=101").await,
        StatusCode::BAD_REQUEST,
        "limit",
    );

    let (status, aggregator) = s
        .call(Method::GET, "/v1/admin/aggregator", None, true)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(aggregator["lag_events"], 2);
    assert_eq!(
        s.call(Method::GET, "/v1/admin/aggregator", None, false)
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    let (_, metrics) = s.get("/metrics").await;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains("rave_aggregator_lag_events 2")
    );
}

#[tokio::test]
async fn aggregator_status_without_an_aggregator_is_503() {
    let s = start().await;
    assert_problem(
        s.call(Method::GET, "/v1/admin/aggregator", None, true)
            .await,
        StatusCode::SERVICE_UNAVAILABLE,
        "aggregator",
    );
}

#[tokio::test]
async fn votes_are_recorded_replaced_withdrawn_and_counted() {
    let (s, comments, feed, _status) = start_with_statistics().await;
    let c = s.create("p", "en", 5).await;
    assert_eq!(
        (c["helpful_votes"].clone(), c["unhelpful_votes"].clone()),
        (json!(0), json!(0))
    );
    let id = c["id"].as_str().unwrap();
    let vote = |voter: &str, helpful: bool| {
        let path = format!("/v1/comments/{id}/votes/{voter}");
        let s = &s;
        async move {
            s.call(
                Method::PUT,
                &path,
                Some(json!({ "helpful": helpful })),
                false,
            )
            .await
        }
    };
    for (voter, helpful) in [("ann", true), ("bob", true), ("cy", false), ("ann", false)] {
        let (status, body) = vote(voter, helpful).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/comments/{id}/votes/cy"),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    catch_up(&comments, &feed).await;
    let (_, shown) = s.get(&format!("/v1/comments/{id}")).await;
    assert_eq!(
        (
            shown["helpful_votes"].clone(),
            shown["unhelpful_votes"].clone()
        ),
        (json!(1), json!(1))
    );
    let (_, page) = s.get("/v1/products/p/comments").await;
    assert_eq!(page["items"][0]["helpful_votes"], 1, "{page}");
    // A voter that is not 1-128 of A-Z a-z 0-9 _ - is a 400 naming it.
    let long = "v".repeat(129);
    for bad in ["a%20b", "a.b", long.as_str()] {
        assert_problem(vote(bad, true).await, StatusCode::BAD_REQUEST, "voter");
    }
    // A missing comment is a 404; a body that is not {"helpful": bool} a 400.
    assert_problem(
        s.call(
            Method::PUT,
            "/v1/comments/01JD3X0000000000000000000A/votes/ann",
            Some(json!({"helpful": true})),
            false,
        )
        .await,
        StatusCode::NOT_FOUND,
        "no comment",
    );
    for body in [
        json!({}),
        json!({"helpful": "yes"}),
        json!({"helpful": true, "x": 1}),
    ] {
        let (status, _) = s
            .call(
                Method::PUT,
                &format!("/v1/comments/{id}/votes/ann"),
                Some(body),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
}

#[tokio::test]
async fn votes_are_rate_limited_like_posts() {
    let s = start_with(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 20,
        },
        Moderation::Off,
    )
    .await;
    let (_, c) = s
        .call(
            Method::POST,
            "/v1/products/p/comments",
            Some(comment()),
            true,
        )
        .await;
    let id = c["id"].as_str().unwrap();
    let mut statuses = Vec::new();
    for voter in ["a", "b", "c", "d", "e"] {
        let (status, _) = s
            .call(
                Method::PUT,
                &format!("/v1/comments/{id}/votes/{voter}"),
                Some(json!({"helpful": true})),
                false,
            )
            .await;
        statuses.push(status);
    }
    assert_eq!(statuses[0], StatusCode::NO_CONTENT);
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn every_sort_orders_pages_and_binds_its_cursors() {
    let s = start().await;
    for (i, rating) in [3, 5, 1, 5, 4, 3].into_iter().enumerate() {
        let (status, body) = s
            .call(
                Method::POST,
                "/v1/products/p/comments",
                Some(
                    json!({"author": "a", "language": "en", "rating": rating, "body": "b",
                    "created_at": format!("2026-01-0{}T00:00:00.000Z", i + 1)}),
                ),
                true,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let walk = |sort: &'static str| {
        let s = &s;
        async move {
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut path = format!("/v1/products/p/comments?limit=2&sort={sort}");
                if let Some(c) = &cursor {
                    path.push_str(&format!("&cursor={c}"));
                }
                let (status, page) = s.get(&path).await;
                assert_eq!(status, StatusCode::OK, "{page}");
                for c in page["items"].as_array().unwrap() {
                    seen.push((
                        c["rating"].as_i64().unwrap(),
                        c["created_at"].as_str().unwrap()[8..10].to_owned(),
                    ));
                }
                match page["next_cursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => return (seen, cursor),
                }
            }
        }
    };
    let day = |d: &[(i64, &str)]| {
        d.iter()
            .map(|(r, d)| (*r, d.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        walk("oldest").await.0,
        day(&[
            (3, "01"),
            (5, "02"),
            (1, "03"),
            (5, "04"),
            (4, "05"),
            (3, "06")
        ])
    );
    assert_eq!(
        walk("newest").await.0,
        day(&[
            (3, "06"),
            (4, "05"),
            (5, "04"),
            (1, "03"),
            (5, "02"),
            (3, "01")
        ])
    );
    assert_eq!(
        walk("highest").await.0,
        day(&[
            (5, "04"),
            (5, "02"),
            (4, "05"),
            (3, "06"),
            (3, "01"),
            (1, "03")
        ])
    );
    assert_eq!(
        walk("lowest").await.0,
        day(&[
            (1, "03"),
            (3, "06"),
            (3, "01"),
            (4, "05"),
            (5, "04"),
            (5, "02")
        ])
    );
    // A cursor belongs to its sort; an unknown sort is a 400 naming it.
    let (_, first) = s.get("/v1/products/p/comments?limit=2&sort=highest").await;
    let cursor = first["next_cursor"].as_str().unwrap();
    assert_problem(
        s.get(&format!(
            "/v1/products/p/comments?limit=2&sort=lowest&cursor={cursor}"
        ))
        .await,
        StatusCode::BAD_REQUEST,
        "cursor",
    );
    assert_problem(
        s.get(&format!("/v1/products/p/comments?limit=2&cursor={cursor}"))
            .await,
        StatusCode::BAD_REQUEST,
        "cursor",
    );
    assert_problem(
        s.get("/v1/products/p/comments?sort=best").await,
        StatusCode::BAD_REQUEST,
        "sort",
    );
    let (_, explained) = s
        .get("/v1/products/p/comments?sort=lowest&explain=true")
        .await;
    assert_eq!(explained["plan"]["sort"], "lowest");
    assert_eq!(explained["plan"]["strategy"], "ratings_in_order");
    assert_eq!(
        explained["plan"]["queries"][0]["partition_key"],
        "PRODUCT#p/1"
    );
}

/// `sort=helpful`: most helpful first by the counted votes, newest first
/// among equal scores, page by page through cursors bound to the sort, with
/// the language and rating filters; EXPLAIN names the helpful indexes.
#[tokio::test]
async fn the_helpful_sort_follows_the_counted_votes() {
    let (s, comments, feed, _status) = start_with_statistics().await;
    let mut ids = Vec::new();
    for (language, rating) in [("en", 5), ("en", 1), ("de", 3), ("en", 4), ("en", 2)] {
        let c = s.create("h", language, rating).await;
        ids.push(c["id"].as_str().unwrap().to_owned());
    }
    // ids[1]: 3 of 3 helpful (0.4385); ids[3]: 1 of 1 (0.2065); ids[2]:
    // 2 of 3 (0.2077); ids[4]: 0 of 1 (0); ids[0]: no votes (0).
    for (i, voter, helpful) in [
        (1, "a", true),
        (1, "b", true),
        (1, "c", true),
        (3, "a", true),
        (2, "a", true),
        (2, "b", true),
        (2, "c", false),
        (4, "a", false),
    ] {
        let (status, body) = s
            .call(
                Method::PUT,
                &format!("/v1/comments/{}/votes/{voter}", ids[i]),
                Some(json!({ "helpful": helpful })),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    catch_up(&comments, &feed).await;
    let walk = |query: &'static str| {
        let s = &s;
        async move {
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut path = format!("/v1/products/h/comments?limit=2&sort=helpful{query}");
                if let Some(c) = &cursor {
                    path.push_str(&format!("&cursor={c}"));
                }
                let (status, page) = s.get(&path).await;
                assert_eq!(status, StatusCode::OK, "{page}");
                for c in page["items"].as_array().unwrap() {
                    seen.push(c["id"].as_str().unwrap().to_owned());
                }
                match page["next_cursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => return seen,
                }
            }
        }
    };
    let order = |of: &[usize]| of.iter().map(|i| ids[*i].clone()).collect::<Vec<_>>();
    assert_eq!(walk("").await, order(&[1, 2, 3, 4, 0]));
    assert_eq!(walk("&language=en").await, order(&[1, 3, 4, 0]));
    assert_eq!(walk("&rating=1,2,5").await, order(&[1, 4, 0]));
    // The cursor is bound to the sort.
    let (_, first) = s.get("/v1/products/h/comments?limit=2&sort=helpful").await;
    let cursor = first["next_cursor"].as_str().unwrap();
    assert_problem(
        s.get(&format!("/v1/products/h/comments?limit=2&cursor={cursor}"))
            .await,
        StatusCode::BAD_REQUEST,
        "cursor",
    );
    let (_, explained) = s
        .get("/v1/products/h/comments?sort=helpful&language=en&rating=4&explain=true")
        .await;
    assert_eq!(explained["plan"]["sort"], "helpful");
    assert_eq!(explained["plan"]["strategy"], "helpful_language_ratings");
    assert_eq!(
        explained["plan"]["queries"][0]["index"],
        "helpfulByLangAndRating"
    );
    assert_eq!(
        explained["plan"]["queries"][0]["partition_key"],
        "PRODUCT#h/en/4"
    );
    // Without a rating filter: one partition, whatever the ratings' mix.
    let (_, explained) = s
        .get("/v1/products/h/comments?sort=helpful&language=en&explain=true")
        .await;
    assert_eq!(explained["plan"]["strategy"], "helpful_language");
    assert_eq!(explained["plan"]["queries"][0]["index"], "helpfulByLang");
    assert_eq!(
        explained["plan"]["queries"][0]["partition_key"],
        "PRODUCT#h/en"
    );
}

#[tokio::test]
async fn a_listing_nothing_changed_since_is_answered_as_kept_and_never_hides_a_write() {
    let s = start().await;
    let first = s.create("p", "en", 5).await;
    s.catch_up().await;
    let (status, page) = s.get("/v1/products/p/comments").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["items"], json!([first]));

    // Nothing changed: the kept answer, for the two reads of its revision.
    let before = s.comments.usage().items_read();
    let (_, again) = s.get("/v1/products/p/comments").await;
    assert_eq!(again, page);
    let read = s.comments.usage().items_read() - before;
    assert!(read <= 2, "a kept answer read {read} items");
    let metrics = s.metrics().await;
    assert!(
        metrics.contains("rave_answers_reused_total{kind=\"comments\"} 1"),
        "{metrics}"
    );

    // A write through the server shows at once, before the aggregator
    // raises the product's revision: a new comment, then a reply.
    let second = s.create("p", "en", 4).await;
    let (_, page) = s.get("/v1/products/p/comments").await;
    assert_eq!(page["items"][0]["id"], second["id"], "{page}");
    let reply_path = format!("/v1/comments/{}/reply", first["id"].as_str().unwrap());
    let (status, _) = s
        .call(
            Method::PUT,
            &reply_path,
            Some(json!({"body": "Thanks"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, page) = s.get("/v1/products/p/comments").await;
    assert_eq!(page["items"][1]["reply"]["body"], "Thanks", "{page}");

    // A change that does not come through this server shows once the
    // aggregator raises the revision, as a 304 would see it.
    s.comments.erase_author("alice").await.unwrap();
    s.catch_up().await;
    let (_, page) = s.get("/v1/products/p/comments").await;
    assert_eq!(page["items"], json!([]), "{page}");

    // Statistics are kept by the same rule, and follow the revision too.
    let (_, stats) = s.get("/v1/products/p/stats").await;
    let (_, again) = s.get("/v1/products/p/stats").await;
    assert_eq!(again, stats);
    let metrics = s.metrics().await;
    assert!(
        metrics.contains("rave_answers_reused_total{kind=\"stats\"} 1"),
        "{metrics}"
    );
    s.create("p", "en", 2).await;
    s.catch_up().await;
    let (_, stats) = s.get("/v1/products/p/stats").await;
    assert_eq!(stats["total"], 1, "{stats}");
}

//! Product families through real HTTP: a group's listing in every order
//! with its cursors, its statistics before and after a move, and what a
//! family refuses (400 naming the field, nothing changed).

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use server::TestServer;

async fn put_variant(s: &TestServer, product: &str, group: Value) -> (StatusCode, Value) {
    s.call(
        Method::PUT,
        &format!("/v1/products/{product}"),
        Some(json!({"name": format!("Tee {product}"), "group": group})),
        true,
    )
    .await
}

async fn post(s: &TestServer, product: &str, language: &str, rating: u8) -> String {
    let (status, created) = s
        .call(
            Method::POST,
            &format!("/v1/products/{product}/comments"),
            Some(json!({"author": "ann", "language": language, "rating": rating, "body": "fits"})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// Waits until `GET /v1/admin/moves` lists no move: every move's job is
/// done.
async fn wait_for_moves(s: &TestServer) {
    for _ in 0..400 {
        let (status, body) = s.call(Method::GET, "/v1/admin/moves", None, true).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if body["moves"].as_array().unwrap().is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the moves' jobs did not end");
}

/// Every page of a walk of `query` over the group's listing: each comment's
/// (id, product_id, rating), in order.
async fn walk(s: &TestServer, group: &str, query: &str) -> Vec<(String, String, u64)> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/v1/groups/{group}/comments?limit=2&{query}");
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let (status, page) = s.call(Method::GET, &path, None, false).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        for item in page["items"].as_array().unwrap() {
            seen.push((
                item["id"].as_str().unwrap().to_owned(),
                item["product_id"].as_str().unwrap().to_owned(),
                item["rating"].as_u64().unwrap(),
            ));
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
}

#[tokio::test]
async fn a_group_lists_and_counts_every_variants_comments_and_follows_a_move() {
    let s = server::start(None).await;
    for (product, group) in [("tee-red", "tee"), ("tee-blue", "tee"), ("mug", "mugs")] {
        let (status, body) = put_variant(&s, product, json!(group)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let mut ids = BTreeSet::new();
    for (product, language, rating) in [
        ("tee-red", "en", 5),
        ("tee-red", "de", 2),
        ("tee-blue", "en", 4),
        ("tee-blue", "en", 1),
        ("tee-blue", "de", 5),
        ("mug", "en", 3),
    ] {
        let id = post(&s, product, language, rating).await;
        if product != "mug" {
            ids.insert(id);
        }
    }
    s.catch_up().await;

    for sort in ["newest", "oldest", "highest", "lowest", "helpful"] {
        let seen = walk(&s, "tee", &format!("sort={sort}")).await;
        let got: BTreeSet<String> = seen.iter().map(|(id, _, _)| id.clone()).collect();
        assert_eq!(got, ids, "{sort}: each of the group's comments once");
        assert_eq!(seen.len(), ids.len(), "{sort}");
        assert!(seen.iter().all(|(_, p, _)| p.starts_with("tee-")), "{sort}");
        if sort == "highest" {
            let ratings: Vec<u64> = seen.iter().map(|(_, _, r)| *r).collect();
            assert_eq!(ratings, [5, 5, 4, 2, 1]);
        }
    }
    let english = walk(&s, "tee", "language=en&rating=4&rating=5").await;
    assert_eq!(english.len(), 2);

    let (status, stats) = s
        .call(Method::GET, "/v1/groups/tee/stats", None, false)
        .await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["stats"]["product_id"], "tee");
    assert_eq!(stats["stats"]["total"], 5);
    assert_eq!(stats["stats"]["counts"]["5"], 2);
    assert_eq!(stats["stats"]["average"], 3.4);
    assert_eq!(stats["variants"][0]["product_id"], "tee-blue");
    assert_eq!(stats["variants"][0]["total"], 3);
    let (_, german) = s
        .call(Method::GET, "/v1/groups/tee/stats?language=de", None, false)
        .await;
    assert_eq!(german["stats"]["total"], 2);

    // tee-blue moves to mugs: its counts go with it at once, its comments
    // once the move's job has run.
    let (status, _) = put_variant(&s, "tee-blue", json!("mugs")).await;
    assert_eq!(status, StatusCode::OK);
    wait_for_moves(&s).await;
    let (_, tee) = s
        .call(Method::GET, "/v1/groups/tee/stats", None, false)
        .await;
    let (_, mugs) = s
        .call(Method::GET, "/v1/groups/mugs/stats", None, false)
        .await;
    assert_eq!(tee["stats"]["total"], 2);
    assert_eq!(mugs["stats"]["total"], 4);
    assert_eq!(walk(&s, "mugs", "sort=newest").await.len(), 4);
    let (_, product) = s
        .call(Method::GET, "/v1/products/tee-blue", None, false)
        .await;
    assert_eq!(product["group"], "mugs");
    // Out of every group.
    let (status, _) = put_variant(&s, "tee-blue", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    wait_for_moves(&s).await;
    let (_, mugs) = s
        .call(Method::GET, "/v1/groups/mugs/stats", None, false)
        .await;
    assert_eq!(mugs["stats"]["total"], 1);
    let report = s.comments.reconcile(1, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{:?}", report.drift);
}

fn assert_names_group(result: (StatusCode, Value)) {
    let (status, body) = result;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("group"),
        "detail {detail:?} should name group"
    );
}

#[tokio::test]
async fn a_cycle_a_second_group_or_a_bad_group_is_a_400_naming_the_field_and_changes_nothing() {
    let s = server::start(None).await;
    assert_eq!(
        put_variant(&s, "tee-red", json!("tee")).await.0,
        StatusCode::OK
    );
    // A cycle and a second level.
    assert_names_group(put_variant(&s, "tee", json!("tee-red")).await);
    assert_names_group(put_variant(&s, "tee", json!("shirts")).await);
    assert_names_group(put_variant(&s, "tee-green", json!("tee-red")).await);
    assert_names_group(put_variant(&s, "tee-green", json!("tee-green")).await);
    // A product in two groups, and ids that are no ids.
    assert_names_group(put_variant(&s, "tee-green", json!(["tee", "shirts"])).await);
    assert_names_group(put_variant(&s, "tee-green", json!("no spaces")).await);
    assert_names_group(
        s.call(Method::GET, "/v1/groups/no%20spaces/comments", None, false)
            .await,
    );
    assert_names_group(
        s.call(Method::GET, "/v1/groups/no%20spaces/stats", None, false)
            .await,
    );

    // Nothing changed.
    for product in ["tee", "tee-green", "shirts"] {
        let (_, body) = s
            .call(Method::GET, &format!("/v1/products/{product}"), None, false)
            .await;
        assert_eq!(body["group"], Value::Null, "{product}: {body}");
        assert_eq!(body["name"], product, "{product}: no record written");
    }
    let (_, stats) = s
        .call(Method::GET, "/v1/groups/tee/stats", None, false)
        .await;
    let variants: Vec<&str> = stats["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["product_id"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["tee-red"]);
    let (_, shirts) = s
        .call(Method::GET, "/v1/groups/shirts/stats", None, false)
        .await;
    assert_eq!(shirts["variants"], json!([]));
}

#[tokio::test]
async fn the_openapi_document_has_the_group_routes() {
    let s = server::start(None).await;
    let (_, doc) = s.call(Method::GET, "/openapi.json", None, false).await;
    for path in ["/v1/groups/{group}/comments", "/v1/groups/{group}/stats"] {
        assert!(doc["paths"][path]["get"].is_object(), "{path}");
    }
    assert!(doc["components"]["schemas"]["GroupStatsBody"].is_object());
}

/// Where scripts/test.sh installs extruct.
fn extruct_python() -> Option<std::path::PathBuf> {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/extruct/bin/python");
    python.exists().then_some(python)
}

/// The JSON-LD of `html` as extruct reads it.
fn structured_data(python: &std::path::Path, html: &str, url: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    std::fs::write(&file, html).unwrap();
    let output = std::process::Command::new(python)
        .args([
            "-c",
            "import extruct, json, sys\n\
             data = extruct.extract(open(sys.argv[1], encoding='utf-8').read(), base_url=sys.argv[2], syntaxes=['json-ld'])\n\
             print(json.dumps(data['json-ld']))",
        ])
        .arg(&file)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

async fn html(s: &TestServer, path: &str) -> String {
    let response = s
        .client
        .get(format!("{}{path}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.text().await.unwrap()
}

#[tokio::test]
async fn a_family_page_shows_every_variants_reviews_as_a_product_group() {
    let Some(python) = extruct_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "extruct is missing: scripts/test.sh installs it into .tools/extruct"
        );
        eprintln!("skipped: extruct is not installed (scripts/test.sh installs it)");
        return;
    };
    let s = server::start(None).await;
    let (status, _) = s
        .call(
            Method::PUT,
            "/v1/products/tee",
            Some(json!({"name": "Classic tee"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    for product in ["tee-red", "tee-blue"] {
        assert_eq!(
            put_variant(&s, product, json!("tee")).await.0,
            StatusCode::OK
        );
    }
    let mut ids = BTreeSet::new();
    for i in 0..23u8 {
        let product = ["tee-red", "tee-blue"][usize::from(i % 2)];
        ids.insert(post(&s, product, "en", i % 5 + 1).await);
    }
    s.catch_up().await;
    let (_, stats) = s
        .call(Method::GET, "/v1/groups/tee/stats", None, false)
        .await;
    assert_eq!(stats["stats"]["total"], 23);

    for path in [
        "/products/tee-red?scope=group",
        "/fragments/products/tee-red?scope=group",
    ] {
        let found = structured_data(&python, &html(&s, path).await, &format!("{}{path}", s.base));
        let groups: Vec<&Value> = found
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["@type"] == "ProductGroup")
            .collect();
        assert_eq!(groups.len(), 1, "{path}: {found}");
        let group = groups[0];
        assert_eq!(group["name"], "Classic tee");
        assert_eq!(group["productGroupID"], "tee");
        let variants: Vec<&str> = group["hasVariant"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                assert_eq!(v["@type"], "Product");
                v["sku"].as_str().unwrap()
            })
            .collect();
        assert_eq!(variants, ["tee-blue", "tee-red"]);
        let rating = &group["aggregateRating"];
        assert_eq!(rating["@type"], "AggregateRating");
        assert_eq!(rating["ratingValue"], stats["stats"]["average"]);
        assert_eq!(rating["reviewCount"], 23);
        assert_eq!(
            group["review"].as_array().unwrap().len(),
            20,
            "the page's reviews"
        );
    }
    // Without the scope, the variant's own page: a Product.
    let own = structured_data(&python, &html(&s, "/products/tee-red").await, &s.base);
    assert_eq!(own[0]["@type"], "Product", "{own}");
    assert_eq!(own[0]["aggregateRating"]["reviewCount"], 12);

    // "Older comments" keeps the scope: the pages walk the family's 23.
    let mut seen = 0;
    let mut path = "/products/tee-red?scope=group".to_owned();
    loop {
        let page = html(&s, &path).await;
        seen += page.matches("<li class=\"rave-comment").count();
        let Some(at) = page.find("rel=\"next\" href=\"") else {
            break;
        };
        let rest = &page[at + "rel=\"next\" href=\"".len()..];
        path = rest[..rest.find('"').unwrap()].replace("&amp;", "&");
        assert!(path.contains("scope=group"), "{path}");
    }
    assert_eq!(seen, ids.len());

    let (status, problem) = s
        .call(Method::GET, "/products/tee-red?scope=family", None, false)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        problem["detail"].as_str().unwrap().contains("scope"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_family_page_revalidates_against_every_variant() {
    let s = server::start(None).await;
    for product in ["cup-red", "cup-blue"] {
        assert_eq!(
            put_variant(&s, product, json!("cup")).await.0,
            StatusCode::OK
        );
    }
    post(&s, "cup-red", "en", 4).await;
    s.catch_up().await;
    let url = format!("{}/products/cup-red?scope=group", s.base);
    let get = |tag: Option<String>| {
        let mut request = s.client.get(&url);
        if let Some(tag) = tag {
            request = request.header("If-None-Match", tag);
        }
        request.send()
    };
    let first = get(None).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let again = get(Some(tag.clone())).await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    // A comment on the other variant changes the family's page.
    post(&s, "cup-blue", "en", 2).await;
    s.catch_up().await;
    let changed = get(Some(tag.clone())).await.unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
    assert_ne!(changed.headers()["etag"].to_str().unwrap(), tag);
}

#[tokio::test]
async fn a_moves_progress_is_listed_to_admins_until_its_job_has_moved_the_comments() {
    let s = server::start(None).await;
    let (status, _) = put_variant(&s, "tee-red", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    let mut posted = BTreeSet::new();
    for rating in [5, 4, 2] {
        posted.insert(post(&s, "tee-red", "en", rating).await);
    }
    wait_for_moves(&s).await;
    // Another process moves the product: this server's worker is not told
    // (it would find the marker within its rescan period).
    let elsewhere = rave_comments::Comments::new(
        rave_store::SharedStore::new(s.engine.clone()),
        rave_comments::Config {
            table: "rave".into(),
            cursor_key: rave_comments::CursorKey::new([3; 32]),
            moderation: rave_comments::Moderation::Off,
        },
    );
    elsewhere
        .put_product(
            "tee-red",
            rave_comments::ProductRecord {
                name: "Tee".into(),
                group: Some("tee".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let (status, _) = s.call(Method::GET, "/v1/admin/moves", None, false).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = s.call(Method::GET, "/v1/admin/moves", None, true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let moves = body["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1, "{body}");
    assert_eq!(moves[0]["product_id"], "tee-red");
    assert_eq!(moves[0]["from"], Value::Null);
    assert_eq!(moves[0]["to"], "tee");
    assert_eq!(
        (&moves[0]["done"], &moves[0]["total"]),
        (&json!(0), &Value::Null)
    );
    assert!(moves[0]["since"].as_str().unwrap().ends_with('Z'), "{body}");
    assert!(
        walk(&s, "tee", "sort=newest").await.is_empty(),
        "not moved yet"
    );
    // Any record write here wakes the worker, which finishes the move.
    let (status, _) = put_variant(&s, "mug", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    wait_for_moves(&s).await;
    let moved: BTreeSet<String> = walk(&s, "tee", "sort=newest")
        .await
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(moved, posted);
    let (_, document) = s.call(Method::GET, "/openapi.json", None, false).await;
    let operation = &document["paths"]["/v1/admin/moves"]["get"];
    assert_eq!(operation["security"][0]["access_token"][0], "admin");
    assert!(document["components"]["schemas"]["MovesBody"].is_object());
}

//! CSV imports through real HTTP (admin only): the upload starts a
//! background job whose progress names bad rows by line; the same upload
//! again creates nothing; a header the mapping cannot read is refused
//! before anything is written; statistics follow; no email is shown; a
//! row named only by a SKU finds the product whose record lists it.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;

#[path = "common/client.rs"]
mod client;
#[path = "common/server.rs"]
mod server;

use server::{TOKEN, TestServer, start};

const OKENDO: &str = include_str!("../../rave-import/tests/fixtures/okendo.csv");

async fn upload(
    s: &TestServer,
    query: &str,
    csv: &str,
    admin: bool,
) -> (StatusCode, Value, Option<String>) {
    let mut request = s
        .client
        .post(format!("{}/v1/admin/imports?{query}", s.base))
        .header("content-type", "text/csv")
        .body(csv.to_owned());
    if admin {
        request = request.bearer_auth(TOKEN);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        location,
    )
}

/// Polls the job at `location` until it is no longer running.
async fn finished(s: &TestServer, location: &str) -> Value {
    let started = Instant::now();
    loop {
        let (status, job) = s.call(Method::GET, location, None, true).await;
        assert_eq!(status, StatusCode::OK, "{job}");
        if job["state"] != "running" {
            return job;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{job}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_upload_imports_in_the_background_once_and_keeps_emails_apart() {
    let s = start(None).await;
    let query =
        "from=okendo&language=en&product=gid://shopify/Product/7=plate-7&product=SKU-PLATE=plate";
    let (status, job, location) = upload(&s, query, OKENDO, true).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let location = location.unwrap();
    assert_eq!(
        location,
        format!("/v1/admin/imports/{}", job["id"].as_str().unwrap())
    );
    assert_eq!(job["source"], "okendo");
    let job = finished(&s, &location).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(
        (&job["rows_read"], &job["imported"]),
        (&3.into(), &3.into())
    );
    assert!(job["finished_at"].is_string());
    assert_eq!(s.stored().await, 3);

    // The same upload again: nothing new.
    let (status, _, location) = upload(&s, query, OKENDO, true).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(
        (&job["imported"], &job["already_present"]),
        (&0.into(), &3.into())
    );
    assert_eq!(s.stored().await, 3);

    s.catch_up().await;
    let (_, stats) = s
        .call(Method::GET, "/v1/products/blue-mug/stats", None, false)
        .await;
    assert_eq!(stats["counts"]["5"], 1);
    let (_, page) = s
        .call(Method::GET, "/v1/products/blue-mug/comments", None, false)
        .await;
    let id = page["items"][0]["id"].as_str().unwrap().to_owned();
    let (_, comment) = s
        .call(Method::GET, &format!("/v1/comments/{id}"), None, false)
        .await;
    assert_eq!(comment["source"], "okendo");
    assert_eq!(comment["image_urls"][1], "https://cdn.example.com/b.jpg");
    for answer in [&stats, &page, &comment, &job] {
        assert!(!answer.to_string().contains("@example.com"), "{answer}");
    }
    let (status, _) = s
        .call(Method::GET, "/v1/admin/imports/nope", None, true)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_rows_are_reported_by_line_skipped_or_fatal() {
    let s = start(None).await;
    let csv = "Who;Stars;Text;Item;When\r\n\
               Ann;5;Fine;mug;2024-01-02\r\n\
               Bo;9;\"Too\r\nmany\";mug;2024-01-02\r\n\
               Cy;4;Fine too;mug;2024-01-03\r\n";
    let map = "map=Who=author&map=Stars=rating&map=Text=body&map=Item=product_id&map=When=date&language=en";
    let (status, job, location) =
        upload(&s, &format!("{map}&skip_bad_lines=true"), csv, true).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    assert_eq!(job["source"], "csv");
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(job["state"], "succeeded");
    assert_eq!((&job["imported"], &job["skipped"]), (&2.into(), &1.into()));
    assert_eq!(job["errors"][0]["line"], 3);
    assert_eq!(job["errors"][0]["field"], "rating");

    let fresh = start(None).await;
    let (_, _, location) = upload(&fresh, map, csv, true).await;
    let job = finished(&fresh, &location.unwrap()).await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(
        job["error"].as_str().unwrap().contains("line 3: rating"),
        "{job}"
    );
    assert_eq!(
        job["imported"], 0,
        "the batch of the bad row is not written"
    );
}

#[tokio::test]
async fn what_cannot_be_read_is_refused_before_anything_is_written() {
    let s = start(None).await;
    for (query, csv, detail) in [
        ("from=stamped", OKENDO, "from"),
        ("from=okendo&map=Stars", OKENDO, "map"),
        ("from=okendo&colour=red", OKENDO, "colour"),
        ("from=okendo&product=x", OKENDO, "product"),
        ("from=okendo", "name,body\nAnn,Fine\n", "rating"),
        ("map=a=author", "a,b\n1,2\n", "--map"),
    ] {
        let (status, body, _) = upload(&s, query, csv, true).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains(detail),
            "{query}: {body}"
        );
    }
    let (status, _, _) = upload(&s, "from=okendo", OKENDO, false).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(s.stored().await, 0);
    let (_, doc) = s.call(Method::GET, "/openapi.json", None, false).await;
    assert!(doc["paths"]["/v1/admin/imports"]["post"].is_object());
    assert!(doc["paths"]["/v1/admin/imports/{id}"]["get"].is_object());
}

#[tokio::test]
async fn a_sku_finds_the_product_whose_record_lists_it() {
    let s = start(None).await;
    let plate = serde_json::json!({"name": "Plate", "skus": ["SKU-PLATE"]});
    let (status, body) = s
        .call(Method::PUT, "/v1/products/plate", Some(plate), true)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A SKU names one product: another record cannot list it too.
    let mug = serde_json::json!({"name": "Mug", "skus": ["MUG-1", "SKU-PLATE"]});
    let (status, problem) = s
        .call(Method::PUT, "/v1/products/blue-mug", Some(mug), true)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("skus") && detail.contains("\"SKU-PLATE\" is a SKU of product plate"),
        "{detail}"
    );
    let (status, _) = s
        .call(Method::GET, "/v1/products/blue-mug", None, false)
        .await;
    assert_eq!(status, StatusCode::OK);

    // Okendo's third row names its product only by SKU-PLATE; no product
    // map entry is needed for it.
    let query = "from=okendo&language=en&product=gid://shopify/Product/7=plate-7";
    let (status, job, location) = upload(&s, query, OKENDO, true).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["imported"], 3, "{job}");
    let (_, page) = s
        .call(Method::GET, "/v1/products/plate/comments", None, false)
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["items"][0]["author"], "Cy");
}

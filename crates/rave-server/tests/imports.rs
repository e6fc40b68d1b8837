//! CSV imports through real HTTP (admin only): the upload starts a
//! background job whose progress names bad rows by line; the same upload
//! again creates nothing; a header the mapping cannot read is refused
//! before anything is written; statistics follow; no email is shown; a
//! row named only by a SKU finds the product whose record lists it; rows'
//! image URLs become photos in the server's media store, bad images refuse
//! their rows by line, and loopback is refused unless allowed.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;

#[path = "common/client.rs"]
mod client;
#[path = "../../rave-import/tests/support/image_server.rs"]
mod image_server;
#[path = "common/server.rs"]
mod server;

use image_server::ImageServer;
use rave_comments::Moderation;
use rave_import::PhotoOptions;
use rave_media::{DiskStore, MediaId, MediaStore};
use rave_server::ServerConfig;
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

/// A server keeping photos on disk whose imports may reach loopback (the
/// image server's), with a short fetch limit.
async fn start_with_photos(allow_private: bool) -> (TestServer, MediaStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(dir.path()).unwrap());
    let photos = PhotoOptions {
        allow_private,
        fetch_timeout: Duration::from_secs(1),
        ..PhotoOptions::default()
    };
    let kept = media.clone();
    let s = server::start_serving(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        Moderation::Off,
        None,
        async move |state, _| (state.with_media(kept).with_import_photos(photos), None),
    )
    .await;
    (s, media, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn image_urls_become_photos_or_refuse_their_rows_and_are_fetched_once() {
    let images = ImageServer::start().await;
    let (s, media, _dir) = start_with_photos(true).await;
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Ann,Fine.,mug,5,2024-03-01,{}\n\
         Bo,A page.,mug,4,2024-03-02,{}\n\
         Cy,Slow.,mug,3,2024-03-03,{}\n\
         Di,Large.,mug,2,2024-03-04,{}\n",
        images.url("/good.jpg"),
        images.url("/page.jpg"),
        images.url("/slow.jpg"),
        images.url("/large.jpg"),
    );
    let query = "from=okendo&language=en&skip_bad_lines=true";
    let (status, job, location) = upload(&s, query, &csv, true).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(
        (&job["imported"], &job["skipped"], &job["photos"]),
        (&1.into(), &3.into(), &1.into()),
        "{job}"
    );
    for (at, (line, why)) in [
        (3, "image 1 of 1: the file is markup"),
        (4, "image 1 of 1: took longer than 1 s"),
        (5, "image 1 of 1: runs past the 10485760 bytes accepted"),
    ]
    .into_iter()
    .enumerate()
    {
        let error = &job["errors"][at];
        assert_eq!(
            (&error["line"], &error["field"]),
            (&line.into(), &"image_urls".into())
        );
        assert!(
            error["reason"].as_str().unwrap().starts_with(why),
            "{error}"
        );
    }

    // Ann's photo: on her comment, its renditions in the store, served.
    let (_, page) = s
        .call(Method::GET, "/v1/products/mug/comments", None, false)
        .await;
    let id = page["items"][0]["id"].as_str().unwrap().to_owned();
    let comment = s.comments.get(&id).await.unwrap();
    let photo = MediaId::of_upload(&ImageServer::good());
    assert_eq!(comment.media.len(), 1);
    assert_eq!(comment.media[0].id.as_str(), photo.as_str());
    assert!(comment.image_urls.is_empty());
    assert_eq!(media.list().await.unwrap().len(), 4);
    let (status, _) = s
        .call(
            Method::GET,
            &format!("/media/{}/display.webp", photo.as_str()),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // The same upload again: Ann's row is neither fetched nor created again.
    let fetched = images.requests("/good.jpg");
    let (_, _, location) = upload(&s, query, &csv, true).await;
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(
        (&job["imported"], &job["already_present"], &job["photos"]),
        (&0.into(), &1.into(), &0.into()),
        "{job}"
    );
    assert_eq!(images.requests("/good.jpg"), fetched);
    assert_eq!(s.stored().await, 1);

    // fetch_images=false keeps a new row's URL as a reference.
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Eve,Kept as a link.,mug,5,2024-03-05,{}\n",
        images.url("/other.jpg"),
    );
    let (_, _, location) =
        upload(&s, "from=okendo&language=en&fetch_images=false", &csv, true).await;
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(
        (&job["imported"], &job["photos"]),
        (&1.into(), &0.into()),
        "{job}"
    );
    assert_eq!(images.requests("/other.jpg"), 0);
    let (_, page) = s
        .call(
            Method::GET,
            "/v1/products/mug/comments?sort=newest",
            None,
            false,
        )
        .await;
    assert_eq!(page["items"][0]["author"], "Eve", "{page}");
    let id = page["items"][0]["id"].as_str().unwrap();
    let (_, eve) = s
        .call(Method::GET, &format!("/v1/comments/{id}"), None, false)
        .await;
    assert_eq!(eve["image_urls"][0], images.url("/other.jpg"), "{eve}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_loopback_image_is_refused_unless_the_server_allows_private_addresses() {
    let images = ImageServer::start().await;
    let (s, media, _dir) = start_with_photos(false).await;
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Ann,Fine.,mug,5,2024-03-01,{}\n",
        images.url("/good.jpg"),
    );
    let (_, _, location) = upload(&s, "from=okendo&language=en", &csv, true).await;
    let job = finished(&s, &location.unwrap()).await;
    assert_eq!(job["state"], "failed", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(
        error.contains(
            "line 2: image_urls: image 1 of 1: 127.0.0.1 resolves to 127.0.0.1, a loopback"
        ),
        "{error}"
    );
    assert_eq!(images.all_requests(), 0);
    assert_eq!(s.stored().await, 0);
    assert!(media.list().await.unwrap().is_empty());
}

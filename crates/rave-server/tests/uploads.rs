//! Photos posted with a comment through the real HTTP server
//! (`multipart/form-data` on `POST /v1/products/{id}/comments`): stored in
//! a disk media store before the comment, answered in `media` with URLs
//! that serve the renditions; hostile files refused naming their part, with
//! nothing stored.

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

// The images of rave-media's own tests: good ones and the hostile ones.
#[path = "../../rave-media/tests/common/mod.rs"]
mod images;

use rave_comments::Moderation;
use rave_media::{DiskStore, MediaStore};
use rave_server::{ServerConfig, UploadLimits};
use reqwest::multipart::{Form, Part};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use server::{TOKEN, TestServer};

const PRODUCT: &str = "kettle";

/// A server with a disk media store, and that store to look into.
async fn serving(
    moderation: Moderation,
    limits: UploadLimits,
) -> (TestServer, MediaStore, tempfile::TempDir) {
    let media_dir = tempfile::tempdir().unwrap();
    let store = MediaStore::Disk(DiskStore::open(media_dir.path()).unwrap());
    let served = store.clone();
    let server = server::start_serving(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        moderation,
        None,
        async move |state, _| (state.with_media(served).with_upload_limits(limits), None),
    )
    .await;
    (server, store, media_dir)
}

fn comment(body: &str) -> Value {
    json!({"author": "ana", "language": "en", "rating": 5, "title": "Fits", "body": body})
}

/// A file to post: its name, its declared type (rave reads neither) and its
/// bytes.
type Photo = (&'static str, &'static str, Vec<u8>);

/// A multipart post: the comment's JSON, then each file as a `photo` part.
fn form(comment: &Value, photos: &[Photo]) -> Form {
    let mut form = Form::new().part(
        "comment",
        Part::text(comment.to_string())
            .mime_str("application/json")
            .unwrap(),
    );
    for (name, declared, bytes) in photos {
        form = form.part(
            "photo",
            Part::bytes(bytes.clone())
                .file_name(name.to_string())
                .mime_str(declared)
                .unwrap(),
        );
    }
    form
}

async fn post(server: &TestServer, form: Form) -> (StatusCode, Value) {
    let response = server
        .client
        .post(format!("{}/v1/products/{PRODUCT}/comments", server.base))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn listed(server: &TestServer) -> Vec<Value> {
    let (status, page) = client::call(
        &server.client,
        Method::GET,
        format!("{}/v1/products/{PRODUCT}/comments", server.base),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    page["items"].as_array().unwrap().clone()
}

/// The bytes at a URL the API gave (a path on the server).
async fn fetched(server: &TestServer, url: &Value) -> (String, Vec<u8>) {
    let url = url.as_str().unwrap();
    assert!(url.starts_with("/media/"), "{url}");
    let response = server
        .client
        .get(format!("{}{url}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    (content_type, response.bytes().await.unwrap().to_vec())
}

fn has_exif(bytes: &[u8]) -> bool {
    exif::Reader::new()
        .read_from_container(&mut std::io::Cursor::new(bytes))
        .is_ok()
        || bytes.windows(6).any(|w| w == b"Exif\0\0")
}

#[tokio::test]
async fn a_comment_with_two_photos_answers_them_with_urls_that_serve_them() {
    let (server, store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let (status, created) = post(
        &server,
        form(
            &comment("Steel, no plastic taste."),
            &[
                ("front.jpg", "image/jpeg", images::jpeg(800, 600)),
                ("side.png", "image/png", images::png(300, 400)),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let media = created["media"].as_array().unwrap();
    assert_eq!(media.len(), 2);
    assert_eq!(
        [
            (&media[0]["width"], &media[0]["height"]),
            (&media[1]["width"], &media[1]["height"])
        ],
        [(&json!(800), &json!(600)), (&json!(300), &json!(400))]
    );
    for photo in media {
        assert_eq!(photo["status"], "published");
        let id = photo["id"].as_str().unwrap();
        assert_eq!(photo["url"], format!("/media/{id}/display.webp"));
        for (field, content_type) in [
            ("url", "image/webp"),
            ("thumbnail_url", "image/webp"),
            ("fallback_url", "image/jpeg"),
            ("thumbnail_fallback_url", "image/jpeg"),
        ] {
            let (served_type, bytes) = fetched(&server, &photo[field]).await;
            assert_eq!(served_type, content_type, "{field}");
            match content_type {
                "image/webp" => assert!(bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP"),
                _ => assert!(bytes.starts_with(&[0xFF, 0xD8, 0xFF])),
            }
            assert!(!has_exif(&bytes), "{field} carries EXIF");
        }
    }
    assert_eq!(
        store.list().await.unwrap().len(),
        2 * 4,
        "four renditions each"
    );

    // Read back by id and listed: the same photos.
    let id = created["id"].as_str().unwrap();
    let (status, read) = client::call(
        &server.client,
        Method::GET,
        format!("{}/v1/comments/{id}", server.base),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["media"], created["media"]);
    assert_eq!(listed(&server).await[0]["media"], created["media"]);
}

#[tokio::test]
async fn a_json_post_is_taken_as_before_with_no_photos() {
    let (server, store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let (status, created) = client::call(
        &server.client,
        Method::POST,
        format!("{}/v1/products/{PRODUCT}/comments", server.base),
        Some(comment("Plain text.")),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["media"], json!([]));
    assert!(store.list().await.unwrap().is_empty());
}

/// Each hostile post: refused naming its part, and nothing stored (no
/// comment, no blob).
#[tokio::test]
async fn hostile_files_are_refused_naming_their_part_and_store_nothing() {
    let (server, store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let good = || ("good.jpg", "image/jpeg", images::jpeg(64, 48));
    let html = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>";
    let svg = br#"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>"#;
    let full = images::jpeg(200, 150);
    let truncated = full[..full.len() / 2].to_vec();
    let eleven_megabytes = vec![0xFF; 11 * 1024 * 1024];
    let six: Vec<_> = (0..6)
        .map(|n| ("p.jpg", "image/jpeg", images::jpeg(40 + n, 30)))
        .collect();
    let cases: Vec<(&str, Vec<Photo>, StatusCode, &str)> = vec![
        (
            "an HTML page named .jpg",
            vec![good(), ("cat.jpg", "image/jpeg", html.to_vec())],
            StatusCode::BAD_REQUEST,
            "photo[2]: the file is markup",
        ),
        (
            "an SVG with a script",
            vec![("logo.svg", "image/svg+xml", svg.to_vec())],
            StatusCode::BAD_REQUEST,
            "photo[1]: the file is markup",
        ),
        (
            "a truncated JPEG",
            vec![("cut.jpg", "image/jpeg", truncated)],
            StatusCode::BAD_REQUEST,
            "photo[1]: the JPEG file is truncated",
        ),
        (
            "a decompression bomb",
            vec![("bomb.png", "image/png", images::decompression_bomb())],
            StatusCode::BAD_REQUEST,
            "photo[1]: the image is 50000 × 50000 pixels",
        ),
        (
            "a 6th image",
            six,
            StatusCode::BAD_REQUEST,
            "photo[6]: at most 5 photos per comment",
        ),
        (
            "an 11 MB image",
            vec![good(), ("huge.jpg", "image/jpeg", eleven_megabytes)],
            StatusCode::PAYLOAD_TOO_LARGE,
            "photo[2]: the file is larger than the 10485760 bytes accepted",
        ),
        (
            "the same file twice",
            vec![good(), good()],
            StatusCode::BAD_REQUEST,
            "photo[2]: the same file as photo[1]",
        ),
    ];
    for (case, photos, expected, detail) in cases {
        let (status, problem) = post(&server, form(&comment(case), &photos)).await;
        assert_eq!(status, expected, "{case}: {problem}");
        let told = problem["detail"].as_str().unwrap_or_default();
        assert!(told.starts_with(detail), "{case}: {told}");
        assert_eq!(problem["field"], detail[..8], "{case}");
        assert!(
            listed(&server).await.is_empty(),
            "{case}: a comment was stored"
        );
        assert!(
            store.list().await.unwrap().is_empty(),
            "{case}: a blob was stored"
        );
    }
}

#[tokio::test]
async fn exif_and_its_gps_position_are_gone_from_what_is_served() {
    let (server, _store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let located = images::jpeg_with_gps_exif(640, 480, 1);
    assert!(has_exif(&located), "the upload carries EXIF");
    let (status, created) = post(
        &server,
        form(
            &comment("Taken at home."),
            &[("gps.jpg", "image/jpeg", located)],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let photo = &created["media"][0];
    for field in [
        "url",
        "thumbnail_url",
        "fallback_url",
        "thumbnail_fallback_url",
    ] {
        let (_, bytes) = fetched(&server, &photo[field]).await;
        assert!(!has_exif(&bytes), "{field} carries EXIF");
    }
}

#[tokio::test]
async fn a_comment_that_would_be_refused_stores_no_photo() {
    let (server, store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let mut bad = comment("Fine.");
    bad["rating"] = json!(9);
    let (status, problem) = post(
        &server,
        form(&bad, &[("a.jpg", "image/jpeg", images::jpeg(64, 48))]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("rating"),
        "{problem}"
    );
    let (status, problem) = post(
        &server,
        Form::new().part(
            "photo",
            Part::bytes(images::jpeg(64, 48)).file_name("a.jpg"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().starts_with("comment:"),
        "{problem}"
    );
    assert!(store.list().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_body_declared_larger_than_the_limits_allow_is_refused_before_it_is_read() {
    let limits = UploadLimits::new(2, 1000).unwrap();
    let (server, _store, _dir) = serving(Moderation::Off, limits).await;
    let response = server
        .client
        .post(format!("{}/v1/products/{PRODUCT}/comments", server.base))
        .header("content-type", "multipart/form-data; boundary=x")
        .header("content-length", "10000000")
        .body(vec![b'x'; 16])
        .send()
        .await;
    // The server answers before reading on; the client may see the answer
    // or a reset of the body it was still sending.
    if let Ok(response) = response {
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }
    let (status, problem) = post(
        &server,
        form(
            &comment("Small."),
            &[("a.jpg", "image/jpeg", images::jpeg(400, 300))],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("1000 bytes"),
        "{problem}"
    );
}

#[tokio::test]
async fn photos_wait_with_a_pending_comment_and_are_published_with_it() {
    let (server, _store, _dir) = serving(Moderation::Pre, UploadLimits::default()).await;
    let (status, created) = post(
        &server,
        form(
            &comment("Waiting."),
            &[("a.jpg", "image/jpeg", images::jpeg(64, 48))],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["media"][0]["status"], "pending",
        "the poster sees it waiting"
    );
    let id = created["id"].as_str().unwrap();
    let read = async |token: Option<&str>| {
        client::call(
            &server.client,
            Method::GET,
            format!("{}/v1/comments/{id}", server.base),
            None,
            token,
        )
        .await
        .1
    };
    assert_eq!(read(None).await["media"], json!([]), "the public sees none");
    let (status, queue) = client::call(
        &server.client,
        Method::GET,
        format!("{}/v1/moderation/queue", server.base),
        None,
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(queue["items"][0]["media"][0]["status"], "pending");
    assert_eq!(
        queue["items"][0]["media"][0]["id"],
        created["media"][0]["id"]
    );

    let (status, approved) = client::call(
        &server.client,
        Method::POST,
        format!("{}/v1/comments/{id}/approve", server.base),
        None,
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(approved["media"][0]["status"], "published");
    assert_eq!(
        read(None).await["media"][0]["id"],
        created["media"][0]["id"]
    );
}

#[tokio::test]
async fn an_idempotency_key_covers_the_photos() {
    let (server, _store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let send = async |photo: Vec<u8>| {
        let response = server
            .client
            .post(format!("{}/v1/products/{PRODUCT}/comments", server.base))
            .header("idempotency-key", "retry-1")
            .multipart(form(&comment("Once."), &[("a.jpg", "image/jpeg", photo)]))
            .send()
            .await
            .unwrap();
        (response.status(), response.json::<Value>().await.unwrap())
    };
    let (status, first) = send(images::jpeg(64, 48)).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, again) = send(images::jpeg(64, 48)).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(again["id"], first["id"], "replayed");
    let (status, other) = send(images::jpeg(65, 48)).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "another photo is another request: {other}"
    );
    assert_eq!(listed(&server).await.len(), 1);
}

#[tokio::test]
async fn a_server_without_a_media_store_refuses_photos_clearly() {
    let server = server::start(None).await;
    let (status, problem) = post(
        &server,
        form(
            &comment("No store."),
            &[("a.jpg", "image/jpeg", images::jpeg(64, 48))],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert_eq!(
        problem["detail"],
        "photo[1]: this server takes no photos (it has no media store)"
    );
    assert!(listed(&server).await.is_empty());
}

#[tokio::test]
async fn the_document_describes_the_multipart_body_and_the_media() {
    let (server, _store, _dir) = serving(Moderation::Off, UploadLimits::default()).await;
    let (status, document) = client::call(
        &server.client,
        Method::GET,
        format!("{}/openapi.json", server.base),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let content =
        &document["paths"]["/v1/products/{product_id}/comments"]["post"]["requestBody"]["content"];
    assert!(content["application/json"].is_object(), "{content}");
    let multipart = &content["multipart/form-data"]["schema"];
    assert!(multipart.is_object(), "{content}");
    let schemas = &document["components"]["schemas"];
    let upload = &schemas["CommentUploadBody"]["properties"];
    assert!(
        upload["comment"].is_object() && upload["photo"].is_object(),
        "{upload}"
    );
    let media = &schemas["CommentBody"]["properties"]["media"];
    assert!(media.is_object(), "{media}");
    let photo = &schemas["PhotoBody"]["properties"];
    for field in [
        "id",
        "url",
        "thumbnail_url",
        "fallback_url",
        "thumbnail_fallback_url",
        "width",
        "height",
        "status",
    ] {
        assert!(photo[field].is_object(), "{field}");
    }
}

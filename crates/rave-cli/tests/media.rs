//! `rave serve`'s photos through the binary: the embedded store keeps them
//! in `<data>/media` and serves them at `/media/{hash}/{size}`; the bucket
//! options belong to `--store dynamodb`. Uploads go through the same tests
//! on both backends (`uploads_are_checked_stored_and_served`): the embedded
//! store, and DynamoDB Local with the S3-compatible server.

mod common;

// The images of rave-media's own tests: good ones and the hostile ones.
#[path = "../../rave-media/tests/common/mod.rs"]
mod images;

use std::process::Command;

use common::backend::{Backend, photo_form};
use common::{RAVE, serve};
use rave_media::{CheckOptions, MediaStore, process};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn photo() -> Vec<u8> {
    images::jpeg(400, 300)
}

const PRODUCT: &str = "kettle";

/// A file to post: its name and its bytes.
type Photo = (&'static str, Vec<u8>);

/// A post of `photos` with a comment saying `body`.
async fn post(base: &str, body: &str, photos: &[Photo]) -> (StatusCode, Value) {
    let comment = json!({"author": "ana", "language": "en", "rating": 4, "body": body});
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/products/{PRODUCT}/comments"))
        .multipart(photo_form(&comment, photos))
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn comments_listed(base: &str) -> usize {
    let page: Value = reqwest::get(format!("{base}/v1/products/{PRODUCT}/comments"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    page["items"].as_array().unwrap().len()
}

/// A process's peak resident memory (VmHWM), in bytes.
fn peak_rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM in the status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|value| value.parse().ok())
        .expect("a number of kB");
    kib * 1024
}

fn carries_exif(bytes: &[u8]) -> bool {
    exif::Reader::new()
        .read_from_container(&mut std::io::Cursor::new(bytes))
        .is_ok()
        || bytes.windows(6).any(|w| w == b"Exif\0\0")
}

/// What both backends must do with uploads, through the `rave serve` at
/// `base` (process `pid`) keeping its photos in `store`.
async fn uploads_are_checked_stored_and_served(base: &str, pid: u32, store: &MediaStore) {
    let html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>".to_vec();
    let svg =
        br#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.to_vec();
    let jpeg = images::jpeg(300, 200);
    let truncated = jpeg[..jpeg.len() / 2].to_vec();
    let six: Vec<_> = (0..6)
        .map(|n| ("p.jpg", images::jpeg(40 + n, 30)))
        .collect();
    let hostile: Vec<(&str, Vec<Photo>, StatusCode, &str)> = vec![
        (
            "an HTML page named .jpg",
            vec![("cat.jpg", html)],
            StatusCode::BAD_REQUEST,
            "photo[1]: the file is markup",
        ),
        (
            "a decompression bomb",
            vec![("bomb.png", images::decompression_bomb())],
            StatusCode::BAD_REQUEST,
            "photo[1]: the image is 50000 × 50000 pixels",
        ),
        (
            "a truncated JPEG",
            vec![("cut.jpg", truncated)],
            StatusCode::BAD_REQUEST,
            "photo[1]: the JPEG file is truncated",
        ),
        (
            "an SVG with a script",
            vec![("logo.svg", svg)],
            StatusCode::BAD_REQUEST,
            "photo[1]: the file is markup",
        ),
        (
            "a 6th image",
            six,
            StatusCode::BAD_REQUEST,
            "photo[6]: at most 5 photos per comment",
        ),
        (
            "an 11 MB image",
            vec![("huge.jpg", vec![0xFF; 11 * 1024 * 1024])],
            StatusCode::PAYLOAD_TOO_LARGE,
            "photo[1]: the file is larger than",
        ),
    ];
    for (case, photos, expected, detail) in hostile {
        let (status, problem) = post(base, case, &photos).await;
        assert_eq!(status, expected, "{case}: {problem}");
        let told = problem["detail"].as_str().unwrap_or_default();
        assert!(told.starts_with(detail), "{case}: {told}");
        assert_eq!(
            comments_listed(base).await,
            0,
            "{case}: a comment was stored"
        );
        assert!(
            store.list().await.unwrap().is_empty(),
            "{case}: a blob was stored"
        );
    }
    // The bomb was refused from its header: the server never held its
    // 2.5 GB of pixels, nor anything near.
    let peak = peak_rss_of(pid);
    assert!(peak < 256 << 20, "rave serve peaked at {} MB", peak >> 20);

    let (status, created) = post(
        base,
        "Two views.",
        &[
            ("front.jpg", images::jpeg_with_gps_exif(640, 480, 1)),
            ("side.png", images::png(200, 300)),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let media = created["media"].as_array().unwrap();
    assert_eq!(media.len(), 2);
    assert_eq!(
        (&media[1]["width"], &media[1]["height"]),
        (&json!(200), &json!(300))
    );
    for photo in media {
        for (field, magic) in [
            ("url", &b"RIFF"[..]),
            ("thumbnail_url", b"RIFF"),
            ("fallback_url", &[0xFF, 0xD8, 0xFF]),
            ("thumbnail_fallback_url", &[0xFF, 0xD8, 0xFF]),
        ] {
            let url = photo[field].as_str().unwrap();
            let response = reqwest::get(format!("{base}{url}")).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{url}");
            let bytes = response.bytes().await.unwrap();
            assert!(bytes.starts_with(magic), "{field}");
            assert!(!carries_exif(&bytes), "{field} carries EXIF");
        }
    }
    assert_eq!(
        store.list().await.unwrap().len(),
        8,
        "four renditions of each"
    );
    assert_eq!(comments_listed(base).await, 1);
}

#[tokio::test]
async fn uploads_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::embedded(&dir.path().join("data"));
    let server = backend.serve(&[]);
    uploads_are_checked_stored_and_served(&server.base, server.child.id(), &backend.media()).await;
}

#[tokio::test]
async fn the_upload_options_set_the_limits_and_the_photo_urls() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        &dir.path().join("data"),
        &[
            "--max-photos",
            "1",
            "--max-photo-bytes",
            "100000",
            "--media-url",
            "https://cdn.shop.example/reviews/",
        ],
    );
    let (status, problem) = post(
        &server.base,
        "Two.",
        &[
            ("a.jpg", images::jpeg(40, 30)),
            ("b.jpg", images::jpeg(41, 30)),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert_eq!(problem["detail"], "photo[2]: at most 1 photos per comment");
    let (status, problem) = post(&server.base, "Big.", &[("a.jpg", vec![0xFF; 100_001])]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{problem}");
    let (status, created) = post(&server.base, "One.", &[("a.jpg", images::jpeg(40, 30))]).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["media"][0]["id"].as_str().unwrap();
    assert_eq!(
        created["media"][0]["url"],
        format!("https://cdn.shop.example/reviews/{id}/display.webp")
    );

    for (option, value) in [
        ("--max-photos", "11"),
        ("--max-photos", "0"),
        ("--media-url", "cdn.shop.example"),
    ] {
        let output = Command::new(RAVE)
            .args(common::serve_args(
                &dir.path().join("other"),
                &[option, value],
            ))
            .output()
            .expect("run rave");
        assert!(!output.status.success(), "{option} {value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(option), "{option} {value}: {stderr}");
    }
}

#[tokio::test]
async fn serve_answers_photos_from_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = serve(&data, &[]);
    assert!(data.join("media").is_dir(), "serve made <data>/media");

    let store = Backend::embedded(&data).media();
    let processed = process(&photo(), &CheckOptions::default()).unwrap();
    store.put_image(&processed).await.unwrap();

    let client = reqwest::Client::new();
    let thumbnail = processed
        .renditions
        .iter()
        .find(|encoded| encoded.rendition.file_name() == "thumb.webp")
        .unwrap();
    let url = format!("{}/media/{}/thumb.webp", server.base, processed.id);
    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "image/webp");
    assert_eq!(response.bytes().await.unwrap(), thumbnail.bytes);

    let missing = format!("{}/media/{}/thumb.webp", server.base, "f".repeat(64));
    assert_eq!(
        client.get(&missing).send().await.unwrap().status(),
        reqwest::StatusCode::NOT_FOUND
    );
}

#[test]
fn bucket_options_are_refused_with_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(RAVE)
        .args(common::serve_args(
            &dir.path().join("data"),
            &["--media-bucket", "photos"],
        ))
        .output()
        .expect("run rave");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--store dynamodb"), "{stderr}");
}

/// `serve --store dynamodb` keeps photos in the bucket `--media-bucket` at
/// `--media-endpoint`: DynamoDB Local and the S3-compatible server that
/// `./scripts/test.sh` starts (`RAVE_DYNAMODB_ENDPOINT`, `RAVE_S3_ENDPOINT`).
#[cfg(feature = "dynamodb")]
mod on_dynamodb {
    use super::*;

    #[tokio::test]
    async fn serve_answers_photos_from_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::dynamodb(&dir.path().join("data"), "media").await;
        let processed = process(&photo(), &CheckOptions::default()).unwrap();
        backend.media().put_image(&processed).await.unwrap();
        let server = backend.serve(&[]);

        let url = format!("{}/media/{}/display.jpg", server.base, processed.id);
        let response = reqwest::get(&url).await.unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "image/jpeg");
        let display = processed
            .renditions
            .iter()
            .find(|encoded| encoded.rendition.file_name() == "display.jpg")
            .unwrap();
        assert_eq!(response.bytes().await.unwrap(), display.bytes);
    }

    #[tokio::test]
    async fn uploads_on_dynamodb_with_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::dynamodb(&dir.path().join("data"), "uploads").await;
        let server = backend.serve(&[]);
        uploads_are_checked_stored_and_served(&server.base, server.child.id(), &backend.media())
            .await;
    }
}

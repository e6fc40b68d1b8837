//! Photos through the real HTTP server: `GET /media/{hash}/{size}` from a
//! disk media store.

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use std::io::Cursor;

use rave_media::{CheckOptions, DiskStore, MediaStore, ProcessedImage, process};
use rave_server::ServerConfig;
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, X_CONTENT_TYPE_OPTIONS};

use server::{TOKEN, TestServer};

fn photo() -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(640, 480, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Jpeg)
        .unwrap();
    bytes
}

/// A server whose media store holds one processed photo.
async fn serving_a_photo() -> (TestServer, ProcessedImage, tempfile::TempDir) {
    let media_dir = tempfile::tempdir().unwrap();
    let store = MediaStore::Disk(DiskStore::open(media_dir.path()).unwrap());
    let processed = process(&photo(), &CheckOptions::default()).unwrap();
    store.put_image(&processed).await.unwrap();
    let server = server::start_serving(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        rave_comments::Moderation::Off,
        None,
        async move |state, _| (state.with_media(store), None),
    )
    .await;
    (server, processed, media_dir)
}

#[tokio::test]
async fn every_rendition_is_served_immutable_with_its_type_and_etag() {
    let (server, processed, _dir) = serving_a_photo().await;
    for encoded in &processed.renditions {
        let url = format!(
            "{}/media/{}/{}",
            server.base,
            processed.id,
            encoded.rendition.file_name()
        );
        let response = server.client.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        let headers = response.headers().clone();
        assert_eq!(
            headers[CONTENT_TYPE],
            encoded.rendition.encoding.content_type()
        );
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(
            headers[CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        let etag = headers[ETAG].to_str().unwrap().to_owned();
        assert_eq!(response.bytes().await.unwrap(), encoded.bytes);

        let revalidated = server
            .client
            .get(&url)
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(revalidated.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(revalidated.headers()[ETAG], etag.as_str());
        let changed = server
            .client
            .get(&url)
            .header(IF_NONE_MATCH, "\"something-else\"")
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn names_that_are_not_a_stored_rendition_answer_404() {
    let (server, processed, _dir) = serving_a_photo().await;
    let id = processed.id.as_str();
    let absent = "0".repeat(64);
    for path in [
        format!("/media/{absent}/display.webp"),
        format!("/media/{id}/display.png"),
        format!("/media/{id}/original.jpg"),
        format!("/media/{}/display.jpg", id.to_uppercase()),
        format!("/media/{id}/..%2Fdisplay.jpg"),
        "/media/..%2F..%2Fetc/passwd".to_owned(),
    ] {
        let response = server
            .client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "application/problem+json",
            "{path}"
        );
    }
}

#[tokio::test]
async fn without_a_media_store_photos_answer_404() {
    let server = server::start(None).await;
    let (status, _) = server
        .call(
            reqwest::Method::GET,
            &format!("/media/{}/display.jpg", "a".repeat(64)),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_openapi_document_describes_the_media_route() {
    let server = server::start(None).await;
    let (status, document) = server
        .call(reqwest::Method::GET, "/openapi.json", None, false)
        .await;
    assert_eq!(status, StatusCode::OK);
    let operation = &document["paths"]["/media/{hash}/{size}"]["get"];
    assert!(operation.is_object(), "{operation}");
    for status in ["200", "304", "404", "503"] {
        assert!(operation["responses"][status].is_object(), "{status}");
    }
}

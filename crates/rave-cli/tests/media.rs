//! `rave serve`'s photos through the binary: the embedded store keeps them
//! in `<data>/media` and serves them at `/media/{hash}/{size}`; the bucket
//! options belong to `--store dynamodb`.

mod common;

use std::io::Cursor;
use std::process::Command;

use common::{RAVE, serve};
use rave_media::{CheckOptions, DiskStore, MediaStore, process};

fn photo() -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(400, 300, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Jpeg)
        .unwrap();
    bytes
}

#[tokio::test]
async fn serve_answers_photos_from_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = serve(&data, &[]);
    assert!(data.join("media").is_dir(), "serve made <data>/media");

    let store = MediaStore::Disk(DiskStore::open(data.join("media")).unwrap());
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

    fn variable(name: &str) -> String {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: run ./scripts/test.sh, which starts the servers")
        })
    }

    #[tokio::test]
    async fn serve_answers_photos_from_the_bucket() {
        let s3 = variable("RAVE_S3_ENDPOINT");
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let bucket = format!("rave-cli-media-{unique}");
        let bucket_store = rave_media::S3Store::local(&s3, &bucket);
        bucket_store.create_bucket().await.unwrap();
        let store = MediaStore::S3(bucket_store);
        let processed = process(&photo(), &CheckOptions::default()).unwrap();
        store.put_image(&processed).await.unwrap();

        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(RAVE);
        command
            .args(common::serve_args(
                &dir.path().join("data"),
                &[
                    "--store",
                    "dynamodb",
                    "--table",
                    &format!("rave-cli-media-{}", std::process::id()),
                    "--media-bucket",
                    &bucket,
                    "--media-endpoint",
                    &s3,
                ],
            ))
            .env("AWS_ACCESS_KEY_ID", "local")
            .env("AWS_SECRET_ACCESS_KEY", "local")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("RAVE_REGION", "us-east-1")
            .env("RAVE_ENDPOINT", variable("RAVE_DYNAMODB_ENDPOINT"));
        let server = common::Server::start(command);

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
}

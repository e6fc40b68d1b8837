//! `rave export --format google-product-reviews` through the binary: it
//! validates against Google's schema and is the very document `rave serve`
//! answers at /v1/feeds/google-product-reviews.xml over the same store.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{RAVE, serve};

const PUBLIC: &str = "https://reviews.shop.example";

fn rave(args: &[&str]) -> Output {
    Command::new(RAVE).args(args).output().expect("run rave")
}

fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Google's schema, kept beside the server's feed tests.
fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rave-server/tests/fixtures/google-product-reviews/product_reviews.xsd")
}

fn xmllint(args: &[&str], file: &Path) -> Output {
    Command::new("xmllint")
        .args(args)
        .arg(file)
        .output()
        .expect("xmllint is missing: scripts/test.sh installs it (Debian package libxml2-utils)")
}

#[tokio::test]
async fn the_exported_feed_validates_and_is_what_serve_answers() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    succeeded(&rave(&[
        "load",
        "--data",
        data,
        "--products",
        "12",
        "--comments",
        "700",
        "--seed",
        "5",
    ]));

    let exported = dir.path().join("feed.xml");
    let stderr = succeeded(&rave(&[
        "export",
        "--data",
        data,
        "--format",
        "google-product-reviews",
        "--public-url",
        PUBLIC,
        "--feed-publisher",
        "Kettle & Co.",
        "--output",
        exported.to_str().unwrap(),
    ]));
    assert!(stderr.contains("exported 700 reviews"), "{stderr}");
    let valid = xmllint(
        &["--noout", "--schema", schema().to_str().unwrap()],
        &exported,
    );
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
    let count = xmllint(&["--xpath", "count(/feed/reviews/review)"], &exported);
    assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), "700");
    let publisher = xmllint(&["--xpath", "string(/feed/publisher/name)"], &exported);
    assert_eq!(
        String::from_utf8_lossy(&publisher.stdout).trim(),
        "Kettle & Co."
    );

    // The same store through the route: byte for byte the same document.
    let server = serve(
        Path::new(data),
        &[
            "--admin-token",
            "feed-token",
            "--public-url",
            PUBLIC,
            "--feed-publisher",
            "Kettle & Co.",
            "--no-aggregator",
            "--no-webhook-delivery",
        ],
    );
    let answered = reqwest::Client::new()
        .get(format!(
            "{}/v1/feeds/google-product-reviews.xml",
            server.base
        ))
        .bearer_auth("feed-token")
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), reqwest::StatusCode::OK);
    let answered = answered.bytes().await.unwrap();
    assert!(
        answered.as_ref() == std::fs::read(&exported).unwrap().as_slice(),
        "the route and the export differ"
    );
}

#[test]
fn the_feed_export_needs_a_public_url_and_refuses_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let missing = rave(&[
        "export",
        "--data",
        data,
        "--format",
        "google-product-reviews",
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--public-url"));
    let bad = rave(&[
        "export",
        "--data",
        data,
        "--format",
        "google-product-reviews",
        "--public-url",
        "localhost:8080",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--public-url \"localhost:8080\""));
    let author = rave(&[
        "export",
        "--data",
        data,
        "--format",
        "google-product-reviews",
        "--public-url",
        PUBLIC,
        "--author",
        "ann",
    ]);
    assert!(!author.status.success());
    assert!(String::from_utf8_lossy(&author.stderr).contains("--author exports NDJSON only"));
}

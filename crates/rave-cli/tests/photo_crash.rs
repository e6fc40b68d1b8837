//! The crash the photos' order of writes is for: `rave serve` killed with
//! SIGKILL between a photo's renditions and the comment naming them — once
//! exactly there (the moderation hook, asked after the photos are stored
//! and before the comment is written, never answers), and once at whatever
//! point four uploaders have reached. Then `rave reconcile --fix`:
//! afterwards no stored photo is one that no comment names, no comment
//! names a photo that is not stored, and every acknowledged comment is
//! there with its photo.
//!
//! Each scenario runs on both deployments (`common::backend`): the embedded
//! store with `<data>/media`, and `--store dynamodb` on DynamoDB Local with
//! the photos in a bucket of the S3-compatible server, reconciled by
//! `rave reconcile --store dynamodb --media-bucket …`.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::backend::{Backend, photo_form};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PRODUCT: &str = "tent";

/// Posts comments with one photo each, a new photo every time, until
/// stopped or the server goes; returns the acknowledged comments' ids.
fn uploaders(base: &str, clients: u32, stop: &Arc<AtomicBool>) -> Arc<Mutex<Vec<String>>> {
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    for client in 0..clients {
        let (stop, acknowledged) = (stop.clone(), acknowledged.clone());
        let url = format!("{base}/v1/products/{PRODUCT}/comments");
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let photo = rave_media::sample_photo(640, 480, client * 1_000_000 + n);
                let comment = json!({"author": format!("camper{client}"), "language": "en", "rating": 4, "body": format!("Pitched in five minutes ({n}).")});
                let form = photo_form(&comment, &[("tent.jpg", photo)]);
                let Ok(response) = http.post(&url).multipart(form).send().await else {
                    break;
                };
                if response.status() != StatusCode::CREATED {
                    break;
                }
                let Ok(created) = response.json::<Value>().await else {
                    break;
                };
                let id = created["id"].as_str().expect("an id").to_owned();
                acknowledged.lock().expect("not poisoned").push(id);
            }
        });
    }
    acknowledged
}

/// `rave reconcile` with no grace period (nothing is in flight: the server
/// is dead); its standard output.
fn reconcile(backend: &Backend, extra: &[&str]) -> String {
    let mut args = vec!["--orphan-grace-minutes", "0"];
    args.extend(extra);
    backend.reconcile(&args)
}

/// The `photos:` summary line of a reconcile.
fn photo_line(said: &str) -> &str {
    said.lines()
        .find(|line| line.starts_with("photos:"))
        .unwrap_or_else(|| panic!("no photos line in {said}"))
}

/// A moderation hook that takes every request and never answers; the
/// receiver hears of each request as it arrives.
async fn silent_hook() -> (String, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/moderate", listener.local_addr().unwrap());
    let (asked, heard) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut request).await;
            let _ = asked.send(());
            held.push(socket);
        }
    });
    (url, heard)
}

/// Every comment of the product (none waits for a moderator here, so its
/// listing shows each).
async fn listed(base: &str) -> Vec<Value> {
    common::walk(
        &reqwest::Client::new(),
        base,
        &format!("/v1/products/{PRODUCT}/comments"),
    )
    .await
}

async fn a_kill_after_the_photo_and_before_its_comment_leaves_an_orphan_that_reconcile_removes(
    backend: &Backend,
) {
    let (hook, mut heard) = silent_hook().await;
    let mut server = backend.serve(&[
        "--moderation-hook",
        &hook,
        "--moderation-hook-timeout",
        "60",
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = uploaders(&server.base, 1, &stop);
    // The hook is asked once the photo is stored, before the comment is
    // written: the moment to die.
    tokio::time::timeout(Duration::from_secs(120), heard.recv())
        .await
        .expect("the hook was asked");
    server.kill();
    stop.store(true, Ordering::Relaxed);
    assert!(acknowledged.lock().unwrap().is_empty());
    let stored = backend.stored_photos().await;
    assert_eq!(stored.len(), 1, "the photo was stored");
    let orphan = stored.first().unwrap();
    assert_eq!(backend.renditions_of(orphan).await, 4, "all its renditions");

    let found = reconcile(backend, &[]);
    assert!(photo_line(&found).contains(" 1 orphans"), "{found}");
    assert!(
        found.contains(&format!("orphan photo {orphan}: no comment names it")),
        "{found}"
    );
    assert_eq!(
        backend.stored_photos().await.len(),
        1,
        "reported, not deleted"
    );
    let fixed = reconcile(backend, &["--fix"]);
    assert!(
        fixed.contains(&format!(
            "orphan photo {orphan}: no comment names it, written"
        )),
        "{fixed}"
    );
    let again = reconcile(backend, &[]);
    let line = photo_line(&again);
    assert!(
        line.starts_with("photos: 0 stored, 0 named by comments: 0 orphans"),
        "{line}"
    );
    for clean in [" 0 missing", " 0 references drifted"] {
        assert!(line.contains(clean), "{line}");
    }
    assert!(backend.stored_photos().await.is_empty());
    assert_eq!(backend.renditions_of(orphan).await, 0, "no rendition left");
    // No comment was written, so none names a missing photo.
    let server = backend.serve(&[]);
    assert!(listed(&server.base).await.is_empty());
}

async fn a_kill_under_uploads_leaves_nothing_reconcile_does_not_mend(backend: &Backend) {
    let mut server = backend.serve(&[]);
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = uploaders(&server.base, 4, &stop);
    let started = Instant::now();
    while acknowledged.lock().unwrap().len() < 12 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "uploads did not get going"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SIGKILL with four uploads in flight, each somewhere between its
    // photo's check, its renditions' writes and its comment's.
    server.kill();
    stop.store(true, Ordering::Relaxed);
    let acknowledged: Vec<String> = acknowledged.lock().unwrap().clone();

    let first = reconcile(backend, &["--fix"]);
    eprintln!("after the crash: {}", photo_line(&first));
    let again = reconcile(backend, &[]);
    let line = photo_line(&again);
    for clean in [" 0 orphans", " 0 missing", " 0 references drifted"] {
        assert!(line.contains(clean), "{line}");
    }

    // From outside: every acknowledged comment with its photo, and the
    // photos stored are exactly the ones comments name.
    let server = backend.serve(&[]);
    let http = reqwest::Client::new();
    let mut named = BTreeSet::new();
    for id in &acknowledged {
        let comment: Value = http
            .get(format!("{}/v1/comments/{id}", server.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let media = comment["media"].as_array().expect("media");
        assert_eq!(media.len(), 1, "{comment}");
        let thumbnail = media[0]["thumbnail_url"].as_str().unwrap();
        let served = http
            .get(format!("{}{thumbnail}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), StatusCode::OK, "{thumbnail}");
    }
    for comment in listed(&server.base).await {
        for photo in comment["media"].as_array().into_iter().flatten() {
            named.insert(photo["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(backend.stored_photos().await, named);
    assert!(named.len() >= acknowledged.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_the_photo_and_before_its_comment_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    a_kill_after_the_photo_and_before_its_comment_leaves_an_orphan_that_reconcile_removes(
        &Backend::embedded(dir.path()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kill_under_uploads_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    a_kill_under_uploads_leaves_nothing_reconcile_does_not_mend(&Backend::embedded(dir.path()))
        .await;
}

#[cfg(feature = "dynamodb")]
mod on_dynamodb {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_kill_after_the_photo_and_before_its_comment_on_dynamodb_with_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::dynamodb(dir.path(), "crash").await;
        a_kill_after_the_photo_and_before_its_comment_leaves_an_orphan_that_reconcile_removes(
            &backend,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_kill_under_uploads_on_dynamodb_with_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::dynamodb(dir.path(), "crash-uploads").await;
        a_kill_under_uploads_leaves_nothing_reconcile_does_not_mend(&backend).await;
    }
}

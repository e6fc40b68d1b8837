//! The crash the photos' order of writes is for: `rave serve` killed with
//! SIGKILL between a photo's renditions and the comment naming them — once
//! exactly there (the moderation hook, asked after the photos are stored
//! and before the comment is written, never answers), and once at whatever
//! point four uploaders have reached. Then `rave reconcile --fix`:
//! afterwards no stored photo is one that no comment names, no comment
//! names a photo that is not stored, and every acknowledged comment is
//! there with its photo.

mod common;

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{RAVE, serve};
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
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
                let form = Form::new()
                    .part(
                        "comment",
                        Part::text(comment.to_string())
                            .mime_str("application/json")
                            .expect("a media type"),
                    )
                    .part(
                        "photo",
                        Part::bytes(photo)
                            .file_name("tent.jpg")
                            .mime_str("image/jpeg")
                            .expect("a media type"),
                    );
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

/// `rave reconcile` on the data directory; its standard output.
fn reconcile(data: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new(RAVE)
        .arg("reconcile")
        .arg("--data")
        .arg(data)
        .args(["--orphan-grace-minutes", "0"])
        .args(extra)
        .output()
        .expect("run rave reconcile");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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

/// The names of the photos stored in the data directory's media store.
fn stored_photos(data: &std::path::Path) -> BTreeSet<String> {
    match std::fs::read_dir(data.join("media")) {
        Err(_) => BTreeSet::new(),
        Ok(entries) => entries
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with('.'))
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_the_photo_and_before_its_comment_leaves_an_orphan_that_reconcile_removes() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, mut heard) = silent_hook().await;
    let mut server = serve(
        dir.path(),
        &[
            "--moderation-hook",
            &hook,
            "--moderation-hook-timeout",
            "60",
        ],
    );
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
    assert_eq!(stored_photos(dir.path()).len(), 1, "the photo was stored");

    let found = reconcile(dir.path(), &[]);
    assert!(photo_line(&found).contains(" 1 orphans"), "{found}");
    reconcile(dir.path(), &["--fix"]);
    let again = reconcile(dir.path(), &[]);
    let line = photo_line(&again);
    assert!(line.starts_with("photos: 0 stored"), "{line}");
    assert!(stored_photos(dir.path()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kill_under_uploads_leaves_nothing_reconcile_does_not_mend() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &[]);
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

    let first = reconcile(dir.path(), &["--fix"]);
    eprintln!("after the crash: {}", photo_line(&first));
    let again = reconcile(dir.path(), &[]);
    let line = photo_line(&again);
    for clean in [" 0 orphans", " 0 missing", " 0 references drifted"] {
        assert!(line.contains(clean), "{line}");
    }

    // From outside: every acknowledged comment with its photo, and the
    // photos stored are exactly the ones comments name.
    let server = serve(dir.path(), &[]);
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
    drop(server);
    let export = Command::new(RAVE)
        .args(["export", "--data"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(export.status.success());
    for line in String::from_utf8_lossy(&export.stdout).lines() {
        let comment: Value = serde_json::from_str(line).unwrap();
        for photo in comment["media"].as_array().into_iter().flatten() {
            named.insert(photo["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(stored_photos(dir.path()), named);
    assert!(named.len() >= acknowledged.len());
}

//! `rave reconcile` and the photos, through the binary: orphan blobs (a
//! crash between the blob and its comment) older than the grace period are
//! deleted by `--fix` and young ones kept; a comment naming a photo whose
//! blob is missing loses the photo. The missing photo and the young orphan
//! also on `--store dynamodb` with the bucket (`common::backend`), where
//! reconcile checks the photos only and says the statistics were not
//! recounted.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::RAVE;
use common::backend::{Backend, photo_form};
use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment, NewPhoto, PhotoId};
use rave_engine::Engine;
use rave_media::{CheckOptions, DiskStore, MediaStore, process};

/// A photo; each width gives another.
fn jpeg(width: u32) -> Vec<u8> {
    rave_media::sample_photo(width, 300, 0)
}

fn media(data: &Path) -> MediaStore {
    MediaStore::Disk(DiskStore::open(data.join("media")).unwrap())
}

/// Stores a photo as an upload does, written `age` ago.
async fn stored(data: &Path, width: u32, age: Duration) -> NewPhoto {
    let processed = process(&jpeg(width), &CheckOptions::default()).unwrap();
    media(data).put_image(&processed).await.unwrap();
    let directory = data.join("media").join(processed.id.as_str());
    for file in std::fs::read_dir(&directory).unwrap() {
        let path = file.unwrap().path();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
    }
    let (width, height) = processed.display_dimensions().unwrap();
    NewPhoto {
        id: PhotoId::parse(processed.id.as_str()).unwrap(),
        width,
        height,
    }
}

/// The domain over the data directory, while no rave runs on it.
fn domain(data: &Path) -> Comments<Engine> {
    Comments::new(
        Engine::open(data).unwrap(),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([1; 32]),
            moderation: Moderation::Off,
        },
    )
}

async fn comment_with(comments: &Comments<Engine>, photos: &[&NewPhoto]) -> String {
    let new = NewComment {
        media: photos.iter().map(|photo| (*photo).clone()).collect(),
        attributes: Default::default(),
        author: "ann".into(),
        language: "en".into(),
        rating: 5,
        title: None,
        body: "Lovely colour.".into(),
        created_at: None,
    };
    comments
        .create("shirt", new, None)
        .await
        .unwrap()
        .comment
        .id
}

fn reconcile(data: &Path, extra: &[&str]) -> String {
    let out = Command::new(RAVE)
        .arg("reconcile")
        .arg("--data")
        .arg(data)
        .args(extra)
        .output()
        .expect("run rave");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn is_stored(data: &Path, photo: &NewPhoto) -> bool {
    data.join("media").join(photo.id.as_str()).is_dir()
}

#[tokio::test]
async fn fix_deletes_old_orphans_keeps_young_ones_and_repairs_missing_photos() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let hour = Duration::from_secs(3600);
    let named = stored(data, 400, hour).await;
    let orphan = stored(data, 401, hour).await;
    let young = stored(data, 402, Duration::from_secs(60)).await;
    let lost = stored(data, 403, hour).await;
    let (kept_id, repaired_id) = {
        let comments = domain(data);
        comments.ensure_table().await.unwrap();
        let kept = comment_with(&comments, &[&named]).await;
        let repaired = comment_with(&comments, &[&named, &lost]).await;
        (kept, repaired)
    };
    // The lost photo's blob goes behind rave's back.
    std::fs::remove_dir_all(data.join("media").join(lost.id.as_str())).unwrap();

    // Without --fix: reported, nothing changed.
    let report = reconcile(data, &[]);
    assert!(
        report.contains(&format!("orphan photo {}: no comment names it", orphan.id)),
        "{report}"
    );
    assert!(
        report.contains(&format!("unnamed photo {}", young.id)),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "missing photo {} of comment {repaired_id}",
            lost.id
        )),
        "{report}"
    );
    assert!(
        report.contains("photos: 3 stored, 2 named by comments: 1 orphans, 1 too young to judge (under 10 min), 1 missing, 0 references drifted\n"),
        "{report}"
    );
    assert!(report.trim_end().ends_with(": 0 items drifted"), "{report}");
    assert!(is_stored(data, &orphan));
    assert_eq!(domain(data).get(&repaired_id).await.unwrap().media.len(), 2);

    let report = reconcile(data, &["--fix"]);
    assert!(report.contains("deleted"), "{report}");
    assert!(report.contains("removed from the comment"), "{report}");
    assert!(!is_stored(data, &orphan), "the old orphan is deleted");
    assert!(
        is_stored(data, &young),
        "a young one may be an upload in flight"
    );
    assert!(is_stored(data, &named));
    {
        let comments = domain(data);
        let repaired = comments.get(&repaired_id).await.unwrap();
        assert_eq!(repaired.media.len(), 1);
        assert_eq!(repaired.media[0].id, named.id);
        assert_eq!(repaired.body, "Lovely colour.");
        assert_eq!(comments.get(&kept_id).await.unwrap().media.len(), 1);
        assert!(!comments.photo_referenced(&lost.id).await.unwrap());
        assert!(comments.photo_referenced(&named.id).await.unwrap());
    }

    // Nothing is left to repair; a shorter grace period takes the young one.
    let report = reconcile(data, &[]);
    assert!(
        report.contains("photos: 2 stored, 1 named by comments: 0 orphans, 1 too young to judge (under 10 min), 0 missing, 0 references drifted\n"),
        "{report}"
    );
    reconcile(data, &["--fix", "--orphan-grace-minutes", "0"]);
    assert!(!is_stored(data, &young));
    assert!(is_stored(data, &named));
}

/// A comment naming a photo whose renditions went behind rave's back, and
/// a photo stored a moment ago that no comment names, through `rave serve`
/// and `rave reconcile` on `backend`.
async fn a_missing_photo_is_removed_from_its_comment_and_a_young_one_kept(
    backend: &Backend,
) -> String {
    let mut server = backend.serve(&[]);
    let comment = serde_json::json!({"author": "ann", "language": "en", "rating": 5, "body": "Lovely colour."});
    let response = reqwest::Client::new()
        .post(format!("{}/v1/products/shirt/comments", server.base))
        .multipart(photo_form(
            &comment,
            &[("a.jpg", jpeg(500)), ("b.jpg", jpeg(501))],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::CREATED);
    let created: serde_json::Value = response.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let kept = created["media"][0]["id"].as_str().unwrap().to_owned();
    let lost = created["media"][1]["id"].as_str().unwrap().to_owned();
    // The embedded store admits one process at a time.
    assert!(server.terminate().success());

    let store = backend.media();
    store
        .delete_image(&rave_media::MediaId::parse(&lost).unwrap())
        .await
        .unwrap();
    let young = process(&jpeg(502), &CheckOptions::default()).unwrap();
    store.put_image(&young).await.unwrap();

    let report = backend.reconcile(&[]);
    assert!(
        report.contains(&format!(
            "missing photo {lost} of comment {id}: its renditions are not all stored\n"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("unnamed photo {}", young.id)),
        "{report}"
    );
    assert!(
        report.contains("photos: 2 stored, 2 named by comments: 0 orphans, 1 too young to judge (under 10 min), 1 missing, 0 references drifted\n"),
        "{report}"
    );

    let fixed = backend.reconcile(&["--fix"]);
    assert!(fixed.contains("removed from the comment"), "{fixed}");
    let again = backend.reconcile(&[]);
    assert!(
        again.contains("photos: 2 stored, 1 named by comments: 0 orphans, 1 too young to judge (under 10 min), 0 missing, 0 references drifted\n"),
        "{again}"
    );
    assert_eq!(
        backend.stored_photos().await,
        [kept.clone(), young.id.as_str().to_owned()].into(),
        "the young one is kept: an upload may be writing its comment"
    );

    let server = backend.serve(&[]);
    let comment: serde_json::Value = reqwest::get(format!("{}/v1/comments/{id}", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let media = comment["media"].as_array().unwrap();
    assert_eq!(media.len(), 1, "{comment}");
    assert_eq!(media[0]["id"], kept.as_str());
    assert_eq!(comment["body"], "Lovely colour.");
    again
}

#[tokio::test]
async fn a_missing_photo_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let report = a_missing_photo_is_removed_from_its_comment_and_a_young_one_kept(
        &Backend::embedded(dir.path()),
    )
    .await;
    assert!(report.trim_end().ends_with(": 0 items drifted"), "{report}");
}

#[cfg(feature = "dynamodb")]
mod on_dynamodb {
    use super::*;

    #[tokio::test]
    async fn a_missing_photo_on_dynamodb_with_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::dynamodb(dir.path(), "reconcile").await;
        let report =
            a_missing_photo_is_removed_from_its_comment_and_a_young_one_kept(&backend).await;
        // The rest of reconcile does not run there, and it says so last.
        let last = report.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("statistics: not recounted on --store dynamodb"),
            "{report}"
        );
    }

    #[test]
    fn reconcile_on_dynamodb_needs_the_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(RAVE)
            .args(["reconcile", "--store", "dynamodb", "--data"])
            .arg(dir.path())
            .env(
                "RAVE_ENDPOINT",
                common::backend::variable("RAVE_DYNAMODB_ENDPOINT"),
            )
            .env("RAVE_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "local")
            .env("AWS_SECRET_ACCESS_KEY", "local")
            .output()
            .expect("run rave");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--media-bucket"), "{stderr}");
    }
}

//! `rave reconcile` and the photos, through the binary: orphan blobs (a
//! crash between the blob and its comment) older than the grace period are
//! deleted by `--fix` and young ones kept; a comment naming a photo whose
//! blob is missing loses the photo.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::RAVE;
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

//! One suite over every media store backend: the disk store always; the S3
//! store (with the `s3` feature) against the S3-compatible server that
//! `./scripts/test.sh` starts (moto in server mode), whose address is in
//! `RAVE_S3_ENDPOINT`.

mod common;

use std::time::{Duration, SystemTime};

use rave_media::{
    CheckOptions, DiskStore, Encoding, MediaId, MediaKey, MediaStore, Rendition, Size, process,
};

fn key(id: &MediaId, size: Size, encoding: Encoding) -> MediaKey {
    MediaKey {
        id: id.clone(),
        rendition: Rendition { size, encoding },
    }
}

/// put, get, list, delete and delete_image, as every backend must do them.
async fn behaves_as_a_media_store(store: &MediaStore) {
    assert_eq!(store.list().await.unwrap(), vec![]);
    let upload = common::jpeg(500, 400);
    let photo = process(&upload, &CheckOptions::default()).unwrap();
    store.put_image(&photo).await.unwrap();

    let mut listed = store.list().await.unwrap();
    let mut expected: Vec<MediaKey> = Rendition::all()
        .map(|rendition| MediaKey {
            id: photo.id.clone(),
            rendition,
        })
        .collect();
    expected.sort();
    listed.sort();
    assert_eq!(listed, expected);

    for encoded in &photo.renditions {
        let key = MediaKey {
            id: photo.id.clone(),
            rendition: encoded.rendition,
        };
        let blob = store.get(&key).await.unwrap().expect("stored");
        assert_eq!(blob.bytes, encoded.bytes);
        assert_eq!(blob.content_type, encoded.rendition.encoding.content_type());
        assert!(
            blob.etag.starts_with('"') && blob.etag.ends_with('"') && blob.etag.len() > 2,
            "{}",
            blob.etag
        );
    }
    let display = store
        .get(&key(&photo.id, Size::Display, Encoding::Webp))
        .await
        .unwrap()
        .unwrap();
    let thumbnail = store
        .get(&key(&photo.id, Size::Thumbnail, Encoding::Webp))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(
        display.etag, thumbnail.etag,
        "different bytes, different ETags"
    );

    // A second photo, then one rendition and one photo removed.
    let other = process(&common::png(90, 60), &CheckOptions::default()).unwrap();
    store.put_image(&other).await.unwrap();
    assert_eq!(store.list().await.unwrap().len(), 8);
    let removed = key(&photo.id, Size::Thumbnail, Encoding::Jpeg);
    store.delete(&removed).await.unwrap();
    assert_eq!(store.get(&removed).await.unwrap(), None);
    store.delete(&removed).await.unwrap(); // removing twice is no error
    assert_eq!(store.list().await.unwrap().len(), 7);

    // Photo by photo, with when each was written (a store's clock may be
    // a little apart from ours: an object store's times are whole seconds).
    let photos = store.photos().await.unwrap();
    let mut ids: Vec<&MediaId> = photos.iter().map(|p| &p.id).collect();
    ids.sort();
    let mut expected_ids = vec![&photo.id, &other.id];
    expected_ids.sort();
    assert_eq!(ids, expected_ids);
    for listed in &photos {
        let complete = listed.id == other.id;
        assert_eq!(listed.is_complete(), complete, "{}", listed.id);
        assert_eq!(listed.renditions.len(), if complete { 4 } else { 3 });
        let age = SystemTime::now()
            .duration_since(listed.modified)
            .unwrap_or_default();
        assert!(age < Duration::from_secs(600), "written just now: {age:?}");
        assert!(
            listed.modified > SystemTime::now() - Duration::from_secs(600),
            "not a default time"
        );
    }
    store.delete_image(&photo.id).await.unwrap();
    let left = store.list().await.unwrap();
    assert_eq!(left.len(), 4);
    assert!(left.iter().all(|key| key.id == other.id));
    assert_eq!(
        store
            .get(&key(
                &MediaId::of_upload(b"never stored"),
                Size::Display,
                Encoding::Jpeg
            ))
            .await
            .unwrap(),
        None
    );
    store.delete_image(&other.id).await.unwrap();
    assert_eq!(store.list().await.unwrap(), vec![]);
}

#[tokio::test]
async fn disk_store_behaves_as_a_media_store() {
    let directory = tempfile::tempdir().unwrap();
    let store = MediaStore::Disk(DiskStore::open(directory.path().join("media")).unwrap());
    behaves_as_a_media_store(&store).await;
    // Photos' directories go with their last rendition.
    let entries = std::fs::read_dir(directory.path().join("media"))
        .unwrap()
        .count();
    assert_eq!(entries, 0);
}

#[tokio::test]
async fn disk_store_writes_whole_files_and_ignores_partial_ones() {
    let directory = tempfile::tempdir().unwrap();
    let disk = DiskStore::open(directory.path()).unwrap();
    let store = MediaStore::Disk(disk.clone());
    let id = MediaId::of_upload(b"a photo");
    let display = key(&id, Size::Display, Encoding::Jpeg);
    store.put(&display, b"first bytes").await.unwrap();
    store.put(&display, b"second, longer bytes").await.unwrap();

    // Only the final file is there: the temporary one was renamed over it.
    let photo_directory = disk.root().join(id.as_str());
    let names: Vec<String> = std::fs::read_dir(&photo_directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["display.jpg".to_owned()]);
    assert_eq!(
        std::fs::read(photo_directory.join("display.jpg")).unwrap(),
        b"second, longer bytes"
    );

    // What a crash in the middle of a write leaves is never listed or read.
    std::fs::write(photo_directory.join(".thumb.jpg.x1y2z3.partial"), b"half").unwrap();
    std::fs::write(disk.root().join("stray-file"), b"?").unwrap();
    std::fs::create_dir(disk.root().join("not-an-id")).unwrap();
    assert_eq!(store.list().await.unwrap(), vec![display.clone()]);
    assert_eq!(
        store
            .get(&key(&id, Size::Thumbnail, Encoding::Jpeg))
            .await
            .unwrap(),
        None
    );
    let blob = store.get(&display).await.unwrap().unwrap();
    assert_eq!(blob.content_type, "image/jpeg");
    // The ETag is the SHA-256 of the bytes.
    assert_eq!(
        blob.etag,
        format!("\"{}\"", MediaId::of_upload(b"second, longer bytes"))
    );
}

/// What a crash leaves in a photo's directory is the photo's, to be
/// removed with it: a directory holding only a cut-short write is listed as
/// a photo without renditions, and deleting a photo removes its directory
/// whole, cut-short writes included.
#[tokio::test]
async fn disk_store_lists_and_removes_what_a_crash_left() {
    let directory = tempfile::tempdir().unwrap();
    let disk = DiskStore::open(directory.path()).unwrap();
    let store = MediaStore::Disk(disk.clone());

    let cut_short = MediaId::of_upload(b"cut short before its first rendition");
    let cut_directory = disk.root().join(cut_short.as_str());
    std::fs::create_dir(&cut_directory).unwrap();
    std::fs::write(cut_directory.join(".display.webp.a1b2.partial"), b"half").unwrap();
    let partly = MediaId::of_upload(b"cut short after one rendition");
    store
        .put(&key(&partly, Size::Display, Encoding::Webp), b"whole")
        .await
        .unwrap();
    let partly_directory = disk.root().join(partly.as_str());
    std::fs::write(partly_directory.join(".thumb.jpg.c3d4.partial"), b"half").unwrap();

    let photos = store.photos().await.unwrap();
    let listed: Vec<(&MediaId, usize)> = photos
        .iter()
        .map(|photo| (&photo.id, photo.renditions.len()))
        .collect();
    let mut expected = vec![(&cut_short, 0), (&partly, 1)];
    expected.sort();
    assert_eq!(listed, expected);
    assert!(
        store
            .list()
            .await
            .unwrap()
            .iter()
            .all(|key| key.id == partly)
    );

    store.delete_image(&cut_short).await.unwrap();
    store.delete_image(&partly).await.unwrap();
    assert!(!cut_directory.exists() && !partly_directory.exists());
    assert!(store.photos().await.unwrap().is_empty());
    // Deleting what is not there is no error.
    store.delete_image(&partly).await.unwrap();
}

#[cfg(feature = "s3")]
mod s3 {
    use rave_media::{MediaStore, S3Store};

    fn endpoint() -> String {
        std::env::var("RAVE_S3_ENDPOINT").unwrap_or_else(|_| {
            panic!(
                "RAVE_S3_ENDPOINT is not set: run ./scripts/test.sh, which starts an S3-compatible server"
            )
        })
    }

    fn unique_bucket(case: &str) -> String {
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{case}-{unique}")
    }

    #[tokio::test]
    async fn s3_store_behaves_as_a_media_store() {
        let store = S3Store::local(&endpoint(), &unique_bucket("rave-media"));
        store.create_bucket().await.unwrap();
        store.create_bucket().await.unwrap(); // an existing bucket of ours is fine
        super::behaves_as_a_media_store(&MediaStore::S3(store)).await;
    }

    #[tokio::test]
    async fn s3_store_reports_a_missing_bucket() {
        let store = MediaStore::S3(S3Store::local(&endpoint(), &unique_bucket("missing")));
        let error = store.list().await.expect_err("no such bucket");
        assert!(error.to_string().contains("ListObjectsV2"), "{error}");
    }
}

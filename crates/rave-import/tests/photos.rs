//! Imported photos on the embedded engine and a disk media store, fetched
//! from a local server of good and bad images: a good image becomes the
//! comment's photo (its renditions stored, its URL replaced); a page named
//! `.jpg`, a body that stalls past the time limit, one past the size limit
//! (told or not), a redirect to another scheme and too many images refuse
//! their row by line, skipped or fatal, storing nothing of it; loopback is
//! refused unless allowed; a second import fetches nothing and creates
//! nothing; photos a row carries are kept when the store holds them.

#[path = "support/image_server.rs"]
mod image_server;

use std::time::Duration;

use image_server::ImageServer;
use rave_comments::{
    Comment, Comments, Config, CursorKey, Language, Moderation, NewPhoto, PhotoId,
};
use rave_engine::Engine;
use rave_import::{
    CsvImport, ImportPhotos, ImportRow, Options, PhotoOptions, Platform, ProductMap, Progress,
    RowError, RunError, run,
};
use rave_media::{DiskStore, MediaId, MediaStore};

struct Shop {
    comments: Comments<Engine>,
    media: MediaStore,
    _dir: tempfile::TempDir,
}

async fn shop() -> Shop {
    let dir = tempfile::tempdir().unwrap();
    let comments = Comments::new(
        Engine::open(dir.path().join("store")).unwrap(),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([7; 32]),
            moderation: Moderation::Off,
        },
    );
    comments.ensure_table().await.unwrap();
    let media = MediaStore::Disk(DiskStore::open(dir.path().join("media")).unwrap());
    Shop {
        comments,
        media,
        _dir: dir,
    }
}

fn options(allow_private: bool) -> PhotoOptions {
    PhotoOptions {
        allow_private,
        fetch_timeout: Duration::from_secs(1),
        ..PhotoOptions::default()
    }
}

/// Okendo's columns, one row per case; `{}` is the image server.
fn export(server: &ImageServer) -> String {
    let url = |path: &str| server.url(path);
    let six: Vec<String> = (0..6).map(|_| url("/good.jpg")).collect();
    let rows = [
        ("Ann", url("/good.jpg")),
        ("Bo", url("/page.jpg")),
        ("Cy", url("/slow.jpg")),
        ("Di", url("/large.jpg")),
        ("Ed", url("/declared-large.jpg")),
        (
            "Fy",
            [url("/to-good.jpg"), url("/good.jpg"), url("/other.jpg")].join(","),
        ),
        ("Gu", six.join(",")),
        ("Ha", String::new()),
        ("Io", url("/to-file.jpg")),
    ];
    let mut csv = "name,body,handle,rating,dateCreated,imageUrls\n".to_owned();
    for (day, (author, images)) in rows.iter().enumerate() {
        csv.push_str(&format!(
            "{author},Photos of the mug.,mug,5,2024-03-{:02},\"{images}\"\n",
            day + 1
        ));
    }
    csv
}

fn rows(csv: &str) -> CsvImport<std::io::Cursor<Vec<u8>>> {
    let options = Options {
        mapping: Platform::Okendo.mapping(),
        default_language: Some(Language::parse("en").unwrap()),
        products: ProductMap::default(),
    };
    CsvImport::new(std::io::Cursor::new(csv.as_bytes().to_vec()), options).unwrap()
}

async fn stored(comments: &Comments<Engine>) -> Vec<Comment> {
    let (mut page, _) = comments.export_page(0, 1, None).await.unwrap();
    page.sort_by(|a, b| a.author.cmp(&b.author));
    page
}

/// The photo ids the media store holds renditions of (each has four).
async fn photos_in(media: &MediaStore) -> Vec<String> {
    let keys = media.list().await.unwrap();
    let mut ids: Vec<String> = keys.iter().map(|key| key.id.as_str().to_owned()).collect();
    ids.dedup();
    for id in &ids {
        assert_eq!(keys.iter().filter(|k| k.id.as_str() == id).count(), 4);
    }
    ids
}

fn id_of(bytes: &[u8]) -> String {
    MediaId::of_upload(bytes).as_str().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn good_images_become_photos_and_bad_ones_refuse_their_rows() {
    let server = ImageServer::start().await;
    let shop = shop().await;
    let photos = ImportPhotos::new(shop.media.clone(), &options(true)).unwrap();
    let csv = export(&server);
    let first = run(&shop.comments, rows(&csv), true, Some(&photos), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        (first.rows_read, first.imported, first.skipped, first.photos),
        (9, 3, 6, 3),
        "{first:?}"
    );
    let refused: Vec<(u64, Option<&str>, &str)> = first
        .errors
        .iter()
        .map(|e| (e.line, e.field, e.reason.as_str()))
        .collect();
    let expected = [
        (3, "image 1 of 1: the file is markup"),
        (4, "image 1 of 1: took longer than 1 s"),
        (5, "image 1 of 1: runs past the 10485760 bytes accepted"),
        (
            6,
            "image 1 of 1: is 11534336 bytes, more than the 10485760 accepted",
        ),
        (8, "6 images, at most 5 per review"),
        (10, "image 1 of 1: answered HTTP 302 Found"),
    ];
    assert_eq!(refused.len(), expected.len(), "{refused:?}");
    for ((line, field, reason), (expected_line, starts)) in refused.iter().zip(expected) {
        assert_eq!((*line, *field), (expected_line, Some("image_urls")));
        assert!(reason.starts_with(starts), "line {line}: {reason}");
        assert!(!reason.contains("http://"), "no URL in a report: {reason}");
    }

    let good = id_of(&ImageServer::good());
    let other = id_of(&image_server::jpeg(640, 480, 0x5a));
    let comments = stored(&shop.comments).await;
    let shown: Vec<(&str, Vec<&str>, usize)> = comments
        .iter()
        .map(|c| {
            let ids = c.media.iter().map(|p| p.id.as_str()).collect();
            (c.author.as_str(), ids, c.image_urls.len())
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("Ann", vec![good.as_str()], 0),
            // Two URLs of one file are one photo.
            ("Fy", vec![good.as_str(), other.as_str()], 0),
            ("Ha", vec![], 0),
        ]
    );
    let ann = &comments[0].media[0];
    assert_eq!((ann.width, ann.height), (640, 480));
    let mut held = photos_in(&shop.media).await;
    held.sort();
    let mut expected = vec![good.clone(), other.clone()];
    expected.sort();
    assert_eq!(held, expected, "only the stored rows' photos are kept");

    // The same file again: the stored rows are not fetched again.
    let fetched = |server: &ImageServer| {
        ["/good.jpg", "/other.jpg", "/to-good.jpg"].map(|path| server.requests(path))
    };
    let before = fetched(&server);
    let again = run(&shop.comments, rows(&csv), true, Some(&photos), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        (
            again.imported,
            again.already_present,
            again.skipped,
            again.photos
        ),
        (0, 3, 6, 0),
        "{again:?}"
    );
    assert_eq!(fetched(&server), before);
    assert_eq!(stored(&shop.comments).await, comments);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fatal_bad_image_stores_the_rows_before_it_and_nothing_after() {
    let server = ImageServer::start().await;
    let shop = shop().await;
    let photos = ImportPhotos::new(shop.media.clone(), &options(true)).unwrap();
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Ann,Fine.,mug,5,2024-03-01,{}\n\
         Bo,A page.,mug,5,2024-03-02,{}\n\
         Cy,Fine too.,mug,5,2024-03-03,{}\n",
        server.url("/good.jpg"),
        server.url("/page.jpg"),
        server.url("/other.jpg"),
    );
    let (error, progress): (RunError, Progress) = run(
        &shop.comments,
        rows(&csv),
        false,
        Some(&photos),
        &mut |_| {},
    )
    .await
    .unwrap_err();
    let RunError::BadRow(RowError {
        line,
        field,
        reason,
    }) = error
    else {
        panic!("{error}");
    };
    assert_eq!((line, field), (3, Some("image_urls")));
    assert!(reason.contains("markup"), "{reason}");
    assert_eq!((progress.imported, progress.photos), (1, 1));
    let authors: Vec<String> = stored(&shop.comments)
        .await
        .into_iter()
        .map(|c| c.author)
        .collect();
    assert_eq!(authors, ["Ann"]);
    assert_eq!(photos_in(&shop.media).await, [id_of(&ImageServer::good())]);
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_is_refused_unless_allowed_and_no_fetch_keeps_the_urls() {
    let server = ImageServer::start().await;
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Ann,Fine.,mug,5,2024-03-01,{}\n",
        server.url("/good.jpg"),
    );
    let shop = shop().await;
    let strict = ImportPhotos::new(shop.media.clone(), &options(false)).unwrap();
    let progress = run(&shop.comments, rows(&csv), true, Some(&strict), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(progress.skipped, 1);
    let error = &progress.errors[0];
    assert_eq!((error.line, error.field), (2, Some("image_urls")));
    assert!(
        error
            .reason
            .contains("127.0.0.1 resolves to 127.0.0.1, a loopback"),
        "{error}"
    );
    assert_eq!(server.all_requests(), 0);

    let references = PhotoOptions {
        fetch: false,
        ..options(false)
    };
    let keeping = ImportPhotos::new(shop.media.clone(), &references).unwrap();
    let progress = run(
        &shop.comments,
        rows(&csv),
        true,
        Some(&keeping),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!((progress.imported, progress.photos), (1, 0));
    let comment = &stored(&shop.comments).await[0];
    assert_eq!(comment.image_urls, [server.url("/good.jpg")]);
    assert!(comment.media.is_empty());
    assert_eq!(server.all_requests(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn photos_a_row_carries_are_kept_only_when_the_store_holds_them() {
    let shop = shop().await;
    let held = rave_media::process(&ImageServer::good(), &Default::default()).unwrap();
    shop.media.put_image(&held).await.unwrap();
    let photo = |id: &str| NewPhoto {
        id: PhotoId::parse(id).unwrap(),
        width: 640,
        height: 480,
    };
    let missing = "f".repeat(64);
    let carrying = |photos: Vec<NewPhoto>| {
        let csv = "name,body,handle,rating,dateCreated\n\
                   Ann,Kept.,mug,5,2024-03-01\n\
                   Bo,Lost.,mug,5,2024-03-02\n";
        let mut rows: Vec<ImportRow> = rows(csv).map(Result::unwrap).collect();
        for (row, photo) in rows.iter_mut().zip(photos) {
            row.comment.comment.media = vec![photo];
        }
        rows.into_iter().map(Ok)
    };
    let photos = ImportPhotos::new(shop.media.clone(), &options(false)).unwrap();
    let progress = run(
        &shop.comments,
        carrying(vec![photo(held.id.as_str()), photo(&missing)]),
        true,
        Some(&photos),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!((progress.imported, progress.skipped), (1, 1));
    let error = &progress.errors[0];
    assert_eq!((error.line, error.field), (3, Some("media")));
    assert!(
        error.reason.contains(&format!(
            "the photo {missing} is not in this server's media store"
        )),
        "{error}"
    );
    let comments = stored(&shop.comments).await;
    assert_eq!(comments[0].media[0].id.as_str(), held.id.as_str());

    // An import that keeps no photos refuses a row naming one.
    let fresh = self::shop().await;
    let progress = run(
        &fresh.comments,
        carrying(vec![photo(held.id.as_str())]),
        true,
        None,
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!((progress.imported, progress.skipped), (1, 1));
    assert_eq!(progress.errors[0].field, Some("media"));
}

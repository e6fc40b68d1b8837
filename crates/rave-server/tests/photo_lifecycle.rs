//! Photos after their upload, through the real HTTP server: approved or
//! rejected one by one, and their blobs gone with the last comment that
//! names them (delete, reject, erasure).
//!
//! Uploads are another route's; the comments here get their photos through
//! the domain (`NewComment.media`) after the blobs are put into the store,
//! as an upload does.

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

#[path = "common/photos.rs"]
mod photos;

use rave_comments::{Moderation, NewComment, NewPhoto, PhotoStatus};
use rave_media::{DiskStore, MediaStore};
use rave_server::ServerConfig;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use server::{TOKEN, TestServer};

struct Served {
    server: TestServer,
    store: MediaStore,
    _media_dir: tempfile::TempDir,
}

async fn serving(moderation: Moderation) -> Served {
    let media_dir = tempfile::tempdir().unwrap();
    let store = MediaStore::Disk(DiskStore::open(media_dir.path()).unwrap());
    let served = store.clone();
    let server = server::start_serving(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        moderation,
        None,
        async move |state, _| (state.with_media(served), None),
    )
    .await;
    Served {
        server,
        store,
        _media_dir: media_dir,
    }
}

impl Served {
    /// A photo stored as an upload stores it; each `width` gives another.
    async fn stored_photo(&self, width: u32) -> NewPhoto {
        photos::stored(&self.store, width, 300, 0).await
    }

    async fn comment(&self, author: &str, photos: &[&NewPhoto]) -> String {
        let new = NewComment {
            media: photos.iter().map(|photo| (*photo).clone()).collect(),
            attributes: Default::default(),
            author: author.into(),
            language: "en".into(),
            rating: 4,
            title: Some("Fits".into()),
            body: "True to size.".into(),
            created_at: None,
        };
        self.server
            .comments
            .create("p-1", new, None)
            .await
            .unwrap()
            .comment
            .id
    }

    /// The status of every rendition URL of `photo`.
    async fn served(&self, photo: &NewPhoto) -> Vec<StatusCode> {
        let mut statuses = Vec::new();
        for name in ["display.webp", "display.jpg", "thumb.webp", "thumb.jpg"] {
            let url = format!("{}/media/{}/{name}", self.server.base, photo.id);
            statuses.push(self.server.client.get(url).send().await.unwrap().status());
        }
        statuses
    }

    async fn is_served(&self, photo: &NewPhoto) -> bool {
        let statuses = self.served(photo).await;
        assert!(
            statuses.iter().all(|s| *s == statuses[0]),
            "all renditions or none: {statuses:?}"
        );
        statuses[0] == StatusCode::OK
    }

    async fn post(&self, path: &str) -> (StatusCode, Value) {
        self.server.call(Method::POST, path, None, true).await
    }
}

#[tokio::test]
async fn one_photo_is_approved_without_touching_the_text_or_the_others() {
    let s = serving(Moderation::Pre).await;
    let (a, b) = (s.stored_photo(400).await, s.stored_photo(401).await);
    let id = s.comment("ann", &[&a, &b]).await;
    let before = s.server.comments.get(&id).await.unwrap();

    let (status, body) = s
        .post(&format!("/v1/comments/{id}/media/{}/approve", a.id))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], id.as_str());
    assert_eq!(body["status"], "pending", "the text still waits");
    assert_eq!(body["body"], "True to size.");
    let after = s.server.comments.get(&id).await.unwrap();
    let statuses: Vec<_> = after.media.iter().map(|p| p.status).collect();
    assert_eq!(statuses, [PhotoStatus::Published, PhotoStatus::Pending]);
    assert_eq!(after.body, before.body);
    assert_eq!(after.status, before.status);

    // Again: a published photo stays as it is.
    let (status, _) = s
        .post(&format!("/v1/comments/{id}/media/{}/approve", a.id))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s.server.comments.get(&id).await.unwrap(), after);
    assert!(s.is_served(&a).await && s.is_served(&b).await);

    let (status, trail) = s
        .server
        .call(
            Method::GET,
            "/v1/admin/audit?action=photo.approve",
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let entry = &trail["entries"][0];
    assert_eq!(entry["target_kind"], "comment");
    assert_eq!(entry["target_id"], id.as_str());
    assert_eq!(entry["detail"], format!("photo {}", a.id).as_str());
}

#[tokio::test]
async fn a_rejected_photo_leaves_its_comment_and_its_blob_goes() {
    let s = serving(Moderation::Pre).await;
    let (a, b) = (s.stored_photo(400).await, s.stored_photo(401).await);
    let id = s.comment("ann", &[&a, &b]).await;

    let (status, body) = s
        .post(&format!("/v1/comments/{id}/media/{}/reject", b.id))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "pending");
    assert_eq!(body["body"], "True to size.");
    let after = s.server.comments.get(&id).await.unwrap();
    assert_eq!(after.media.len(), 1);
    assert_eq!(after.media[0].id, a.id);
    assert_eq!(after.media[0].status, PhotoStatus::Pending);
    assert!(
        !s.is_served(&b).await,
        "the rejected photo's URLs answer 404"
    );
    assert!(s.is_served(&a).await);

    // Rejected already: not found, and nothing changes.
    let (status, body) = s
        .post(&format!("/v1/comments/{id}/media/{}/reject", b.id))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(s.server.comments.get(&id).await.unwrap(), after);

    let (_, trail) = s
        .server
        .call(
            Method::GET,
            "/v1/admin/audit?action=photo.reject",
            None,
            true,
        )
        .await;
    assert_eq!(trail["entries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_photo_two_comments_carry_stays_until_both_are_gone() {
    let s = serving(Moderation::Off).await;
    let (shared, own) = (s.stored_photo(400).await, s.stored_photo(401).await);
    let first = s.comment("ann", &[&shared, &own]).await;
    let second = s.comment("ben", &[&shared]).await;

    let (status, _) = s
        .server
        .call(Method::DELETE, &format!("/v1/comments/{first}"), None, true)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(!s.is_served(&own).await, "deleted with its only comment");
    assert!(s.is_served(&shared).await, "the second comment carries it");

    // A photo's rejection keeps a blob another comment names, too.
    let third = s.comment("cat", &[&shared]).await;
    let (status, _) = s
        .post(&format!("/v1/comments/{third}/media/{}/reject", shared.id))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(s.is_served(&shared).await);

    let (status, _) = s.post(&format!("/v1/comments/{second}/reject")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(!s.is_served(&shared).await, "gone with its last comment");
}

#[tokio::test]
async fn an_erased_authors_photos_answer_404_at_once() {
    let s = serving(Moderation::Off).await;
    let (a, b, kept) = (
        s.stored_photo(400).await,
        s.stored_photo(401).await,
        s.stored_photo(402).await,
    );
    s.comment("Ann Lee", &[&a]).await;
    s.comment("Ann Lee", &[&b, &kept]).await;
    s.comment("ben", &[&kept]).await;

    let (status, body) = s
        .server
        .call(Method::DELETE, "/v1/authors/Ann%20Lee/comments", None, true)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["erased"], 2);
    assert!(!s.is_served(&a).await);
    assert!(!s.is_served(&b).await);
    assert!(s.is_served(&kept).await, "ben's comment carries it");
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_refused_and_change_nothing() {
    let s = serving(Moderation::Pre).await;
    let a = s.stored_photo(400).await;
    let id = s.comment("ann", &[&a]).await;
    let before = s.server.comments.get(&id).await.unwrap();
    let absent = "0".repeat(64);
    for action in ["approve", "reject"] {
        let cases = [
            (
                format!(
                    "/v1/comments/{id}/media/{}/{action}",
                    a.id.as_str().to_uppercase()
                ),
                StatusCode::BAD_REQUEST,
                Some("media_id"),
            ),
            (
                format!("/v1/comments/{id}/media/not-a-photo/{action}"),
                StatusCode::BAD_REQUEST,
                Some("media_id"),
            ),
            (
                format!("/v1/comments/{id}/media/{absent}/{action}"),
                StatusCode::NOT_FOUND,
                None,
            ),
            (
                format!(
                    "/v1/comments/01JD3X0000000000000000000Z/media/{}/{action}",
                    a.id
                ),
                StatusCode::NOT_FOUND,
                None,
            ),
            (
                format!("/v1/comments/nope/media/{}/{action}", a.id),
                StatusCode::NOT_FOUND,
                None,
            ),
        ];
        for (path, expected, field) in cases {
            let (status, body) = s.post(&path).await;
            assert_eq!(status, expected, "{path}: {body}");
            assert_eq!(body["field"].as_str(), field, "{path}: {body}");
            if let Some(field) = field {
                assert!(
                    body["detail"].as_str().unwrap().starts_with(field),
                    "{body}"
                );
            }
        }
        // Without a token of scope moderate.
        let (status, _) = s
            .server
            .call(
                Method::POST,
                &format!("/v1/comments/{id}/media/{}/{action}", a.id),
                None,
                false,
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(s.server.comments.get(&id).await.unwrap(), before);
    assert!(s.is_served(&a).await);
}

#[tokio::test]
async fn the_photo_endpoints_are_in_the_openapi_document() {
    let s = serving(Moderation::Off).await;
    let (status, doc) = s
        .server
        .call(Method::GET, "/openapi.json", None, false)
        .await;
    assert_eq!(status, StatusCode::OK);
    for action in ["approve", "reject"] {
        let path = format!("/v1/comments/{{id}}/media/{{media_id}}/{action}");
        let operation = &doc["paths"][&path]["post"];
        assert!(operation.is_object(), "{path} missing");
        assert_eq!(operation["security"][0]["access_token"][0], "moderate");
        let names: Vec<_> = operation["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["id", "media_id"]);
        for code in ["200", "400", "401", "404"] {
            assert!(operation["responses"][code].is_object(), "{path} {code}");
        }
    }
}

//! Photos gone with their last comment, through the binary on both
//! deployments (`common::backend`): a comment's deletion, a photo's
//! rejection, a comment's rejection and an author's erasure remove the
//! renditions from the media store itself (the data directory's `media/`,
//! or the bucket on the S3-compatible server beside DynamoDB Local), and
//! the photos' URLs answer 404, while a photo another comment carries
//! stays. The test lists the store after each removal, not only the URLs:
//! a URL answering 404 with the objects left in the bucket would be a leak.
//!
//! `crates/rave-server/tests/photo_lifecycle.rs` covers the same in process
//! (with the audit trail and the refusals).

mod common;

use common::backend::{Backend, photo_form};
use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "lifecycle-admin-token";
const PRODUCT: &str = "boots";

/// A photo; each `seed` gives another file, so another photo id.
fn photo(seed: u32) -> (&'static str, Vec<u8>) {
    ("boots.jpg", rave_media::sample_photo(320, 240, seed))
}

struct Scenario<'a> {
    backend: &'a Backend,
    base: String,
    http: reqwest::Client,
}

impl Scenario<'_> {
    /// Posts a comment by `author` with `photos`; answers its id and its
    /// photos' ids, in order.
    async fn post(&self, author: &str, photos: &[(&str, Vec<u8>)]) -> (String, Vec<String>) {
        let comment =
            json!({"author": author, "language": "en", "rating": 4, "body": "Dry feet all day."});
        let response = self
            .http
            .post(format!("{}/v1/products/{PRODUCT}/comments", self.base))
            .multipart(photo_form(&comment, photos))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let created: Value = response.json().await.unwrap();
        let media = created["media"].as_array().expect("media");
        assert_eq!(media.len(), photos.len(), "{created}");
        let ids = media
            .iter()
            .map(|photo| photo["id"].as_str().unwrap().to_owned())
            .collect();
        (created["id"].as_str().unwrap().to_owned(), ids)
    }

    /// A staff request; answers its status.
    async fn staff(&self, method: reqwest::Method, path: &str) -> StatusCode {
        let response = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert!(
            status.is_success(),
            "{path}: {status} {}",
            response.text().await.unwrap_or_default()
        );
        status
    }

    /// Asserts photo `id` is stored whole and served, or neither: each of
    /// its four renditions in the store and at its URL.
    async fn assert_kept(&self, id: &str, kept: bool, why: &str) {
        let renditions = self.backend.renditions_of(id).await;
        assert_eq!(
            renditions,
            if kept { 4 } else { 0 },
            "{why}: photo {id} has {renditions} renditions in the media store"
        );
        for name in ["display.webp", "display.jpg", "thumb.webp", "thumb.jpg"] {
            let status = self
                .http
                .get(format!("{}/media/{id}/{name}", self.base))
                .send()
                .await
                .unwrap()
                .status();
            let expected = if kept {
                StatusCode::OK
            } else {
                StatusCode::NOT_FOUND
            };
            assert_eq!(status, expected, "{why}: /media/{id}/{name}");
        }
    }
}

/// The scenario both deployments go through.
async fn blobs_go_from_the_store_with_their_last_comment(backend: &Backend) {
    let server = backend.serve(&["--admin-token", TOKEN]);
    let s = Scenario {
        backend,
        base: server.base.clone(),
        http: reqwest::Client::new(),
    };
    use reqwest::Method;

    // A comment's deletion: its own photo goes, one another comment
    // carries (the same file, so the same photo) stays.
    let (first, first_photos) = s.post("ann", &[photo(1), photo(2)]).await;
    let (second, second_photos) = s.post("ben", &[photo(1)]).await;
    let (shared, own) = (&first_photos[0], &first_photos[1]);
    assert_eq!(&second_photos[0], shared, "one file, one photo");
    s.assert_kept(own, true, "posted").await;
    s.assert_kept(shared, true, "posted").await;
    let status = s
        .staff(Method::DELETE, &format!("/v1/comments/{first}"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    s.assert_kept(own, false, "its only comment deleted").await;
    s.assert_kept(shared, true, "the second comment carries it")
        .await;

    // A photo's rejection: that photo goes, its comment and the comment's
    // other photo stay.
    let (third, third_photos) = s.post("cat", &[photo(3), photo(4)]).await;
    let (rejected, beside) = (&third_photos[0], &third_photos[1]);
    let status = s
        .staff(
            Method::POST,
            &format!("/v1/comments/{third}/media/{rejected}/reject"),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    s.assert_kept(rejected, false, "rejected").await;
    s.assert_kept(beside, true, "its comment's other photo")
        .await;
    let status = s
        .http
        .get(format!("{}/v1/comments/{third}", s.base))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::OK, "the comment stays");

    // A comment's rejection: the last comment carrying the shared photo.
    let status = s
        .staff(Method::POST, &format!("/v1/comments/{second}/reject"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    s.assert_kept(shared, false, "its last comment rejected")
        .await;

    // An author's erasure: every photo of theirs goes, at once, but one
    // another author's comment carries too.
    let (_, erased_one) = s.post("Dan Erased", &[photo(5)]).await;
    let (_, erased_two) = s.post("Dan Erased", &[photo(6), photo(7)]).await;
    let (_, others) = s.post("eve", &[photo(7)]).await;
    assert_eq!(others[0], erased_two[1]);
    let response = s
        .http
        .delete(format!("{}/v1/authors/Dan%20Erased/comments", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let erased: Value = response.json().await.unwrap();
    assert_eq!(erased["erased"], 2, "{erased}");
    s.assert_kept(&erased_one[0], false, "its author erased")
        .await;
    s.assert_kept(&erased_two[0], false, "its author erased")
        .await;
    s.assert_kept(&others[0], true, "eve's comment carries it")
        .await;

    // What is left in the store is exactly what comments still name.
    let expected: std::collections::BTreeSet<String> = [beside.clone(), others[0].clone()].into();
    assert_eq!(backend.stored_photos().await, expected);
}

#[tokio::test]
async fn blobs_go_with_their_last_comment_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    blobs_go_from_the_store_with_their_last_comment(&Backend::embedded(dir.path())).await;
}

#[cfg(feature = "dynamodb")]
#[tokio::test]
async fn blobs_go_with_their_last_comment_on_dynamodb_with_the_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::dynamodb(dir.path(), "lifecycle").await;
    blobs_go_from_the_store_with_their_last_comment(&backend).await;
}

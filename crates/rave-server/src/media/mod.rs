//! Photos served from the media store: `GET /media/{hash}/{size}`.
//!
//! A rendition never changes once stored (its name comes from the upload's
//! hash), so it is served with an immutable `Cache-Control` for a year and
//! its store's `ETag`; `If-None-Match` is answered 304. The content type is
//! the rendition's own (its name fixes it), with `nosniff`, so a browser
//! never takes a photo for anything else. A name that is not a rendition's
//! is answered 404 like a missing photo: the store is never asked.
//!
//! `links` makes the URLs every other surface gives for a photo; `locks`
//! serialises an upload and a deletion of the same photo; `removal`
//! deletes the blobs of photos no comment names any more; `moderation`
//! approves or rejects one photo of a comment.

mod links;
mod locks;
pub(crate) mod moderation;
pub(crate) mod removal;

pub use links::{InvalidMediaUrl, MediaLinks};
pub(crate) use locks::PhotoLocks;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_media::MediaKey;

use crate::caching;
use crate::error::{ApiError, ApiResult};
use crate::responses::{NoSuchMedia, Unavailable};
use crate::state::AppState;

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

#[utoipa::path(
    get,
    path = "/media/{hash}/{size}",
    tag = "pages",
    summary = "A photo of a comment, in one of its renditions",
    description = "Photos are stored re-encoded, without metadata, under the SHA-256 of the upload. Each has four renditions: display.webp and display.jpg (long edge at most 1600 px), thumb.webp and thumb.jpg (at most 320 px). Immutable: served with Cache-Control for a year and an ETag; If-None-Match answers 304.",
    params(
        ("hash" = String, Path, description = "The photo's id: 64 lower-case hex digits", pattern = "^[0-9a-f]{64}$"),
        ("size" = String, Path, description = "The rendition", pattern = "^(display|thumb)\\.(webp|jpg)$"),
        ("If-None-Match" = Option<String>, Header, description = "The ETag of this rendition: 304"),
    ),
    responses(
        (status = 200, description = "The rendition", content(
            (Vec<u8> = "image/webp"),
            (Vec<u8> = "image/jpeg"),
        )),
        (status = 304, description = "Not modified since the ETag given"),
        NoSuchMedia,
        Unavailable,
    )
)]
pub(crate) async fn get_media(
    State(state): State<AppState>,
    Path((hash, size)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let missing = || ApiError::not_found("no such photo or rendition");
    let store = state.media.as_ref().ok_or_else(missing)?;
    let key = MediaKey::parse(&format!("{hash}/{size}")).ok_or_else(missing)?;
    let blob = store.get(&key).await.map_err(|error| {
        tracing::error!(%error, %key, "reading a photo from the media store");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the media store cannot serve now",
        )
    })?;
    let blob = blob.ok_or_else(missing)?;
    let tag = HeaderValue::from_str(&blob.etag).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the media store gave an invalid ETag",
        )
    })?;
    let cache_control = HeaderValue::from_static(IMMUTABLE);
    if caching::not_modified(&headers, &tag) {
        return Ok(caching::not_modified_response(tag, cache_control));
    }
    let mut response = (
        [
            (header::CONTENT_TYPE, blob.content_type),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Body::from(blob.bytes),
    )
        .into_response();
    caching::stamp(&mut response, tag, cache_control);
    Ok(response)
}

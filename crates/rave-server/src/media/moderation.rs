//! One photo of a comment approved or rejected by a moderator, without
//! touching the comment's text or its other photos:
//! `POST /v1/comments/{id}/media/{media_id}/approve` and `/reject`.
//!
//! Both need the `moderate` scope and are written to the audit trail like
//! the comment's own approval and rejection (`photo.approve`,
//! `photo.reject`, the comment as target, the photo in the detail). A rejected
//! photo leaves the comment in the same write as its reference, and its
//! blob is deleted before the answer unless another comment names the same
//! photo (`removal`).

use crate::json::Json;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use rave_access::Target;
use rave_comments::{CommentsError, PhotoId};

use crate::api::CommentBody;
use crate::callers::{Authorized, Moderate};
use crate::error::{ApiError, ApiResult};
use crate::media::removal;
use crate::responses::{BadRequest, Contended, NotFound, TokenRefused, Unavailable};
use crate::state::AppState;

/// A photo's path: the comment id and the photo's id, the latter checked
/// (a 400 naming `media_id` when it is not one).
#[derive(Debug)]
pub(crate) struct PhotoPath {
    comment: String,
    photo: PhotoId,
}

impl<S: Send + Sync> FromRequestParts<S> for PhotoPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path((comment, media_id)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("path: {e}")))?;
        let photo = PhotoId::parse(&media_id).map_err(|_| ApiError {
            field: Some("media_id".into()),
            ..ApiError::bad_request("media_id: must be a photo id (64 lower-case hex digits)")
        })?;
        Ok(PhotoPath { comment, photo })
    }
}

impl PhotoPath {
    /// What the audit trail names: the comment, as its own moderation
    /// does (so the comment's trail shows its photos' too).
    fn target(&self) -> Target {
        Target::new("comment", &self.comment)
    }

    /// The audit entry's detail: which photo.
    fn detail(&self) -> Option<String> {
        Some(format!("photo {}", self.photo))
    }
}

/// The domain's not-found, said of the photo: the comment may exist
/// without carrying it.
fn photo_not_found(error: CommentsError) -> ApiError {
    match error {
        CommentsError::NotFound => {
            ApiError::not_found("no comment with this id carries this photo")
        }
        other => other.into(),
    }
}

#[utoipa::path(
    post,
    path = "/v1/comments/{id}/media/{media_id}/approve",
    tag = "admin",
    summary = "Approve one photo of a comment (scope moderate)",
    description = "Publishes the photo without touching the comment's text, status or other photos. Approving a published photo changes nothing.",
    params(
        ("id" = String, Path, description = "Comment id"),
        ("media_id" = String, Path, description = "The photo's id: 64 lower-case hex digits", pattern = "^[0-9a-f]{64}$"),
    ),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The comment", body = CommentBody),
        BadRequest,
        TokenRefused,
        NotFound,
        Contended,
        Unavailable,
    )
)]
pub(crate) async fn approve_photo(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    path: PhotoPath,
) -> ApiResult<Json<CommentBody>> {
    let comment = state
        .comments
        .approve_photo(&path.comment, &path.photo)
        .await
        .map_err(photo_not_found)?;
    staff
        .record(&state, "photo.approve", path.target(), path.detail())
        .await;
    Ok(Json(CommentBody::staff(comment, &state.media_links)))
}

#[utoipa::path(
    post,
    path = "/v1/comments/{id}/media/{media_id}/reject",
    tag = "admin",
    summary = "Reject one photo of a comment (scope moderate)",
    description = "Removes the photo from the comment without touching its text, status or other photos, and deletes the photo's stored renditions unless another comment carries the same photo: its URLs then answer 404.",
    params(
        ("id" = String, Path, description = "Comment id"),
        ("media_id" = String, Path, description = "The photo's id: 64 lower-case hex digits", pattern = "^[0-9a-f]{64}$"),
    ),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The comment, without the photo", body = CommentBody),
        BadRequest,
        TokenRefused,
        NotFound,
        Contended,
        Unavailable,
    )
)]
pub(crate) async fn reject_photo(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    path: PhotoPath,
) -> ApiResult<Json<CommentBody>> {
    let (comment, unreferenced) = state
        .comments
        .reject_photo(&path.comment, &path.photo)
        .await
        .map_err(photo_not_found)?;
    removal::delete_unreferenced(&state, &unreferenced).await;
    staff
        .record(&state, "photo.reject", path.target(), path.detail())
        .await;
    Ok(Json(CommentBody::staff(comment, &state.media_links)))
}

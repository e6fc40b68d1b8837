//! Deleting the blobs of photos no comment names any more: after a
//! comment's deletion or rejection, a photo's rejection, an author's
//! erasure.
//!
//! The domain answers which photos lost their last reference with the
//! write that removed them; each is checked again under its photo lock
//! (`locks`) right before its blob goes, since an identical upload may have
//! named it again in between. The blobs are deleted before the request is
//! answered, so an erased author's or a rejected photo's URLs answer 404 at
//! once. A blob that cannot be deleted now (the store failing) is logged
//! and left: the comment is already gone, and no reference names the blob,
//! so `rave reconcile --fix` removes it as an orphan.

use rave_comments::PhotoId;
use rave_media::{MediaId, ProcessedImage};

use crate::state::AppState;

/// Deletes what a post stored for a comment the domain then refused (a
/// moderation rule's or the hook's refusal, an order already used): the
/// comment names none of them, so each goes unless another comment names
/// it.
pub(crate) async fn delete_refused_uploads(state: &AppState, stored: &[ProcessedImage]) {
    let photos: Vec<PhotoId> = stored
        .iter()
        .filter_map(|image| PhotoId::parse(image.id.as_str()).ok())
        .collect();
    delete_unreferenced(state, &photos).await;
}

/// Deletes the blob of each of `photos` that no comment names (checked
/// under the photo's lock).
pub(crate) async fn delete_unreferenced(state: &AppState, photos: &[PhotoId]) {
    let Some(store) = &state.media else {
        return;
    };
    // Held across the checks and the deletions, as an upload holds them
    // across its puts and its comment's write.
    let _locked = state.photo_locks.lock_all(photos).await;
    for photo in photos {
        match state.comments.photo_referenced(photo).await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(error) => {
                tracing::error!(%error, %photo, "checking a photo's references; its blob is left for reconcile");
                continue;
            }
        }
        let Some(id) = MediaId::parse(photo.as_str()) else {
            continue;
        };
        if let Err(error) = store.delete_image(&id).await {
            tracing::error!(%error, %photo, "deleting a photo's blob; it is left for reconcile");
        }
    }
}

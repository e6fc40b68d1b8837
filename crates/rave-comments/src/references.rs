//! Which photos are still named by a comment, from their references
//! (`table::photo`): what decides whether a stored blob may go.
//!
//! The domain never deletes a blob (it knows no media store); a write that
//! removes photos (a comment's deletion or rejection, a photo's rejection,
//! an author's erasure) tells its caller which of them no comment names
//! any more, and the caller deletes those blobs. Between that answer and
//! the blob's deletion an identical upload may name the photo again, so
//! the caller asks [`is_referenced`] once more under its own lock right
//! before deleting.

use std::sync::Arc;

use rave_store::Store;

use crate::access::TableAccess;
use crate::error::Result;
use crate::photos::PhotoId;
use crate::table::photo;

/// Whether any comment names `photo` (a consistent read of its references).
pub(crate) async fn is_referenced<S: Store>(
    access: &TableAccess<S>,
    photo: &PhotoId,
) -> Result<bool> {
    let mut input = access.query_input(None, photo::partition(photo));
    input.consistent_read = true;
    input.limit = Some(1);
    Ok(!access.query(input).await?.items.is_empty())
}

/// Those of `photos` no comment names any more, in the order given.
pub(crate) async fn unreferenced<S: Store>(
    access: &Arc<TableAccess<S>>,
    photos: impl IntoIterator<Item = PhotoId>,
) -> Result<Vec<PhotoId>> {
    let mut left = Vec::new();
    for photo in photos {
        if !is_referenced(access, &photo).await? {
            left.push(photo);
        }
    }
    Ok(left)
}

//! A comment's photos as a webhook payload carries them: each photo's id,
//! size and status, and its URLs when the binary says where photos are
//! reached.
//!
//! Where a photo is reached (rave's own `/media` under the public URL, a
//! bucket, a CDN) is the server's knowledge (`rave_server::MediaLinks`),
//! and rave-server depends on this crate, not the other way: so the
//! binary hands that knowledge over at construction as a [`PhotoLinks`]
//! (`WebhookConfig::photo_links`), and every URL in a payload is the one
//! the API and the pages give. Without it (no `--public-url`: a relative
//! path would mean nothing to a receiver) photos carry no URLs.

use std::fmt;

use rave_comments::{Photo, PhotoId, PhotoStatus};
use serde::Serialize;

/// The URLs of one photo's renditions: WebP, and JPEG as the fallback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhotoUrls {
    /// The display size in WebP.
    pub url: String,
    pub thumbnail_url: String,
    /// The display size in JPEG.
    pub fallback_url: String,
    pub thumbnail_fallback_url: String,
}

/// Where photos are reached from outside rave.
pub trait PhotoLinks: fmt::Debug + Send + Sync {
    fn urls(&self, photo: &PhotoId) -> PhotoUrls;
}

/// One photo in a payload, in the API's shape.
#[derive(Debug, Serialize)]
pub(crate) struct PayloadPhoto<'a> {
    id: &'a PhotoId,
    #[serde(flatten)]
    urls: Option<PhotoUrls>,
    width: u32,
    height: u32,
    status: PhotoStatus,
}

/// `media` as a payload shows it.
pub(crate) fn payload_media<'a>(
    media: &'a [Photo],
    links: Option<&dyn PhotoLinks>,
) -> Vec<PayloadPhoto<'a>> {
    media
        .iter()
        .map(|photo| PayloadPhoto {
            id: &photo.id,
            urls: links.map(|links| links.urls(&photo.id)),
            width: photo.width,
            height: photo.height,
            status: photo.status,
        })
        .collect()
}

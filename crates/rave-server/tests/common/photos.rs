//! Photos for comments made in the tests: a picture encoded as a JPEG, put
//! through rave-media's checks and renditions into a media store, and the
//! reference a `NewComment` carries for it.

#![allow(dead_code)] // each test file uses its own share of these

use rave_comments::{NewPhoto, PhotoId};
use rave_media::{CheckOptions, MediaStore, ProcessedImage, process};

/// A `width` × `height` JPEG whose pixels depend on `seed`, so each seed is
/// a different upload (photos are named by their bytes' hash).
pub fn jpeg(width: u32, height: u32, seed: u8) -> Vec<u8> {
    rave_media::sample_photo(width, height, u32::from(seed))
}

/// The photo of `bytes`, processed and stored as an upload's would be.
pub async fn store(media: &MediaStore, bytes: &[u8]) -> (NewPhoto, ProcessedImage) {
    let processed = process(bytes, &CheckOptions::default()).expect("a good photo");
    media.put_image(&processed).await.expect("storing a photo");
    let (width, height) = processed.display_dimensions().expect("a display size");
    let photo = NewPhoto {
        id: PhotoId::parse(processed.id.as_str()).expect("a photo id"),
        width,
        height,
    };
    (photo, processed)
}

/// [`store`] of a `width` × `height` picture of `seed`.
pub async fn stored(media: &MediaStore, width: u32, height: u32, seed: u8) -> NewPhoto {
    store(media, &jpeg(width, height, seed)).await.0
}

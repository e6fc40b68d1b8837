//! How an import treats its rows' photos, and the limits of a fetch (an
//! upload's: 5 photos of at most 10 MiB).

use std::time::Duration;

use rave_media::CheckOptions;

/// Photos one review may bring from its image URLs, as an upload may.
pub const DEFAULT_MAX_PHOTOS: usize = 5;
/// The largest image file fetched, as an upload's largest photo.
pub const DEFAULT_MAX_PHOTO_BYTES: u64 = 10 << 20;
/// The longest one fetch may take, connecting and reading included.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// How an import treats the photos of its rows.
#[derive(Debug, Clone)]
pub struct PhotoOptions {
    /// Fetch image URLs; `false` (`--no-fetch-images`) keeps them on the
    /// comment as references only, as imports did before photos.
    pub fetch: bool,
    /// Let image URLs reach loopback, private, link-local and metadata
    /// addresses (`--import-allow-private`).
    pub allow_private: bool,
    pub max_photos: usize,
    pub max_photo_bytes: u64,
    pub fetch_timeout: Duration,
    /// The decoding limits of every fetched file (an upload's).
    pub check: CheckOptions,
}

impl Default for PhotoOptions {
    fn default() -> PhotoOptions {
        PhotoOptions {
            fetch: true,
            allow_private: false,
            max_photos: DEFAULT_MAX_PHOTOS,
            max_photo_bytes: DEFAULT_MAX_PHOTO_BYTES,
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            check: CheckOptions::default(),
        }
    }
}

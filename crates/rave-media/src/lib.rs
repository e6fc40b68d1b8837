//! Photos in reviews: an upload checked as hostile input, re-encoded into
//! the renditions that are stored and served, and the stores that keep them.
//!
//! ```text
//! upload bytes ──check──► CheckedImage ──render──► ProcessedImage ──MediaStore::put_image──► disk or bucket
//!   (type from bytes, container,        (display ≤ 1600 px, thumb ≤ 320 px,
//!    pixel limit, decode under limits)   each WebP + JPEG, no metadata)
//! ```
//!
//! * `format` — the type from the first bytes (JPEG, PNG, WebP; HEIC, AVIF,
//!   GIF and markup refused by name).
//! * `container` — the framing walked before decoding: truncation, bytes
//!   after the image's end (polyglots), animation.
//! * `check` — the pixel limit from the header, then the decode under
//!   `image::Limits`, the EXIF orientation applied to the pixels.
//! * `render` — the renditions, and why WebP (libwebp) plus JPEG.
//! * `key` — ids (SHA-256 of the upload) and `<id>/<size>.<ext>` keys.
//! * `sample` — synthetic photos for demo and benchmark data.
//! * `store` — [`MediaStore`]: [`DiskStore`], and `S3Store` with the `s3`
//!   feature; durability before acknowledgement.
//!
//! [`process`] runs check and render: what an upload handler calls (on a
//! blocking thread: decoding a 12 MP photo takes a good fraction of a
//! second of CPU).

mod check;
mod container;
mod error;
mod format;
mod image_type;
mod key;
mod process;
mod render;
mod sample;
mod store;

pub use check::{CheckOptions, CheckedImage, check};
pub use error::{Refusal, RenderError, StoreError};
pub use image_type::ImageType;
pub use key::{Encoding, MediaId, MediaKey, Rendition, Size};
pub use process::{ProcessError, process};
pub use render::{EncodedRendition, ProcessedImage, render};
pub use sample::sample_photo;
pub use store::{Blob, DiskStore, MediaStore, StoredPhoto};
#[cfg(feature = "s3")]
pub use store::{S3Options, S3Store};

//! Why an image is refused, and why the store failed.
//!
//! [`Refusal`] is the uploader's fault: each variant's message is written to
//! be shown as it is in a 4xx answer (it names what was wrong with the file,
//! never a path or an internal detail of the server). [`StoreError`] is the
//! server's: a 5xx.

use crate::image_type::ImageType;

/// Why `check` refused an upload. `#[non_exhaustive]`: new checks may come.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    #[error("the file is empty")]
    Empty,
    #[error("the file is markup (HTML, SVG or XML), not a JPEG, PNG or WebP image")]
    Markup,
    #[error("the file is not a JPEG, PNG or WebP image")]
    UnknownType,
    #[error("{format} images are not accepted: {reason}")]
    UnsupportedType {
        format: &'static str,
        reason: &'static str,
    },
    #[error("the image is {width} × {height} pixels, more than the {max_pixels} pixels accepted")]
    TooManyPixels {
        width: u32,
        height: u32,
        max_pixels: u64,
    },
    #[error("decoding the {format} image would need more memory than the server allows")]
    TooMuchMemory { format: ImageType },
    #[error("animated images are not accepted (the {format} file has several frames)")]
    Animated { format: ImageType },
    #[error("the {format} file is truncated")]
    Truncated { format: ImageType },
    #[error("{extra} bytes follow the end of the {format} image")]
    TrailingData { format: ImageType, extra: usize },
    #[error("the {format} file is corrupt: {detail}")]
    Corrupt { format: ImageType, detail: String },
}

/// Why a store operation failed (the server's fault, not the uploader's).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("media store I/O on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("media bucket {operation} of {key}: {message}")]
    Bucket {
        operation: &'static str,
        key: String,
        message: String,
    },
    #[error("the blocking media store task failed: {0}")]
    Task(String),
}

/// Why encoding a rendition failed (an encoder's refusal of pixels that
/// decoded fine; the server's fault).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    #[error("encoding the {rendition} rendition: {detail}")]
    Encode {
        rendition: &'static str,
        detail: String,
    },
}

//! The checks an upload passes before anything of it is kept: its type from
//! its bytes, its container whole and ending where the image ends, one
//! frame, its dimensions under the pixel limit (read from the header,
//! before any pixel is decoded), then a full decode under
//! [`image::Limits`] so no allocation can exceed `max_alloc` whatever the
//! header claimed. EXIF orientation is applied to the decoded pixels, so
//! what is re-encoded is upright and needs no metadata.

use std::io::Cursor;

use image::codecs::jpeg::JpegDecoder;
use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::error::ImageError;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder};

use crate::container;
use crate::error::Refusal;
use crate::format;
use crate::image_type::ImageType;

/// How much an upload may cost to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    /// Width × height above which an image is refused from its header.
    pub max_pixels: u64,
    /// The most a decoder may allocate for one image, in bytes.
    pub max_alloc: u64,
}

impl Default for CheckOptions {
    /// 40 megapixels (above any phone's default resolution: 12 to 24 MP,
    /// 48 to 50 MP only in the "high resolution" modes), and 256 MiB, which
    /// a 40 MP image decoded as RGB (120 MB) with its decoder's buffers fits.
    fn default() -> Self {
        CheckOptions {
            max_pixels: 40_000_000,
            max_alloc: 256 * 1024 * 1024,
        }
    }
}

/// An upload that passed every check: upright pixels, no metadata.
#[derive(Debug)]
pub struct CheckedImage {
    pub format: ImageType,
    pub pixels: DynamicImage,
}

impl CheckedImage {
    /// Width and height as shown (after the EXIF orientation).
    pub fn dimensions(&self) -> (u32, u32) {
        (self.pixels.width(), self.pixels.height())
    }
}

/// Checks `bytes` as an untrusted upload and decodes it.
pub fn check(bytes: &[u8], options: &CheckOptions) -> Result<CheckedImage, Refusal> {
    let format = format::sniff(bytes)?;
    let layout = container::walk(format, bytes)?;
    if layout.animated {
        return Err(Refusal::Animated { format });
    }
    let refusal = |error| decode_refusal(format, error);
    let pixels = match format {
        ImageType::Jpeg => decode(
            JpegDecoder::new(Cursor::new(bytes)).map_err(refusal)?,
            format,
            options,
        ),
        ImageType::Png => {
            let decoder = PngDecoder::new(Cursor::new(bytes)).map_err(refusal)?;
            // The container walk saw no acTL; the decoder is asked too, so
            // the two readings of the file cannot disagree.
            if decoder.is_apng().map_err(refusal)? {
                return Err(Refusal::Animated { format });
            }
            decode(decoder, format, options)
        }
        ImageType::Webp => {
            let decoder = WebPDecoder::new(Cursor::new(bytes)).map_err(refusal)?;
            if decoder.has_animation() {
                return Err(Refusal::Animated { format });
            }
            decode(decoder, format, options)
        }
    }?;
    Ok(CheckedImage { format, pixels })
}

fn decode(
    mut decoder: impl ImageDecoder,
    format: ImageType,
    options: &CheckOptions,
) -> Result<DynamicImage, Refusal> {
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > options.max_pixels {
        return Err(Refusal::TooManyPixels {
            width,
            height,
            max_pixels: options.max_pixels,
        });
    }
    if width == 0 || height == 0 {
        return Err(Refusal::Corrupt {
            format,
            detail: "the image has no pixels".to_owned(),
        });
    }
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(options.max_alloc);
    decoder
        .set_limits(limits.clone())
        .map_err(|error| decode_refusal(format, error))?;
    // The decoders bound their own buffers by the limits; the buffer the
    // pixels are decoded into is the caller's to reserve, as `ImageReader`
    // does.
    limits
        .reserve(decoder.total_bytes())
        .map_err(|error| decode_refusal(format, error))?;
    // A broken EXIF block only loses its orientation: the metadata is
    // dropped anyway, and the pixels decode without it.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut pixels =
        DynamicImage::from_decoder(decoder).map_err(|error| decode_refusal(format, error))?;
    pixels.apply_orientation(orientation);
    Ok(pixels)
}

fn decode_refusal(format: ImageType, error: ImageError) -> Refusal {
    match error {
        ImageError::Limits(_) => Refusal::TooMuchMemory { format },
        ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            Refusal::Truncated { format }
        }
        other => Refusal::Corrupt {
            format,
            detail: other.to_string(),
        },
    }
}

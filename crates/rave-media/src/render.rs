//! Checked pixels re-encoded as the renditions that are stored and served.
//!
//! Each size is encoded twice: lossy WebP (libwebp, through the `webp`
//! crate) and baseline JPEG (the `image` crate's encoder) as the fallback
//! for clients without WebP. Neither encoder is given any metadata, so no
//! EXIF, XMP, ICC or comment block from the upload survives; the
//! orientation was applied to the pixels by the check.
//!
//! Why WebP and not AVIF (measurements in docs/photos.md, from
//! `benches/process.rs` on a 2-core machine): libwebp (C, built by the
//! `libwebp-sys` crate with cc) encodes the display size of a real 9 MP
//! photo in about 220 ms on a heavily shared machine, three times JPEG's
//! time, into a file 2.7 times smaller, and every browser rave's embed
//! supports decodes WebP. AVIF would need rav1e (through `ravif`), the
//! largest dependency the build would have; it was not built or measured.
//!
//! Downscaling uses the Catmull-Rom filter: sharper than a triangle, and
//! with a support of 2 where Lanczos3's is 3, so fewer taps per pixel on a
//! 12 MP source (resizing is most of `render`'s time); the thumbnail is made
//! from the display size rather than from the original for the same reason.

use image::imageops::FilterType;
use image::{DynamicImage, GenericImageView};

use crate::check::CheckedImage;
use crate::error::RenderError;
use crate::key::{Encoding, MediaId, Rendition, Size};

/// libwebp's quality (0–100) for the lossy renditions.
const WEBP_QUALITY: f32 = 78.0;
/// The JPEG encoder's quality (1–100) for the fallback renditions.
const JPEG_QUALITY: u8 = 82;

/// One encoded rendition.
#[derive(Debug, Clone)]
pub struct EncodedRendition {
    pub rendition: Rendition,
    pub width: u32,
    pub height: u32,
    pub bytes: Vec<u8>,
}

/// A photo ready to store: its id and its four renditions.
#[derive(Debug, Clone)]
pub struct ProcessedImage {
    pub id: MediaId,
    pub renditions: Vec<EncodedRendition>,
}

impl ProcessedImage {
    /// The rendition of `size` in `encoding`.
    pub fn rendition(&self, size: Size, encoding: Encoding) -> Option<&EncodedRendition> {
        self.renditions
            .iter()
            .find(|encoded| encoded.rendition == Rendition { size, encoding })
    }

    /// Width and height of the display size (what a client lays out).
    pub fn display_dimensions(&self) -> Option<(u32, u32)> {
        self.rendition(Size::Display, Encoding::Jpeg)
            .map(|encoded| (encoded.width, encoded.height))
    }
}

/// Encodes the renditions of a checked upload whose bytes hash to `id`.
pub fn render(id: MediaId, checked: &CheckedImage) -> Result<ProcessedImage, RenderError> {
    let display = fit(&checked.pixels, Size::Display.long_edge());
    let thumbnail = fit(&display, Size::Thumbnail.long_edge());
    let mut renditions = Vec::with_capacity(4);
    for (size, pixels) in [(Size::Display, &display), (Size::Thumbnail, &thumbnail)] {
        for encoding in Encoding::ALL {
            let rendition = Rendition { size, encoding };
            renditions.push(EncodedRendition {
                rendition,
                width: pixels.width(),
                height: pixels.height(),
                bytes: encode(pixels, rendition)?,
            });
        }
    }
    Ok(ProcessedImage { id, renditions })
}

/// `pixels` shrunk so its long edge is at most `long_edge` (never enlarged).
fn fit(pixels: &DynamicImage, long_edge: u32) -> DynamicImage {
    let (width, height) = pixels.dimensions();
    if width.max(height) <= long_edge {
        return pixels.clone();
    }
    // `resize` keeps the aspect ratio within the bounds given.
    pixels.resize(long_edge, long_edge, FilterType::CatmullRom)
}

fn encode(pixels: &DynamicImage, rendition: Rendition) -> Result<Vec<u8>, RenderError> {
    let failed = |detail: String| RenderError::Encode {
        rendition: match (rendition.size, rendition.encoding) {
            (Size::Display, Encoding::Webp) => "display WebP",
            (Size::Display, Encoding::Jpeg) => "display JPEG",
            (Size::Thumbnail, Encoding::Webp) => "thumbnail WebP",
            (Size::Thumbnail, Encoding::Jpeg) => "thumbnail JPEG",
        },
        detail,
    };
    let (width, height) = pixels.dimensions();
    match rendition.encoding {
        Encoding::Webp => {
            let encoded = if pixels.has_alpha() {
                let rgba = pixels.to_rgba8();
                webp::Encoder::from_rgba(&rgba, width, height).encode_simple(false, WEBP_QUALITY)
            } else {
                let rgb = pixels.to_rgb8();
                webp::Encoder::from_rgb(&rgb, width, height).encode_simple(false, WEBP_QUALITY)
            };
            encoded
                .map(|memory| memory.to_vec())
                .map_err(|error| failed(format!("{error:?}")))
        }
        Encoding::Jpeg => {
            let rgb = flatten_on_white(pixels);
            let mut bytes = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY)
                .encode_image(&rgb)
                .map_err(|error| failed(error.to_string()))?;
            Ok(bytes)
        }
    }
}

/// RGB pixels with any transparency composited on white (JPEG has no
/// alpha; black, the default of a plain conversion, would show as such).
fn flatten_on_white(pixels: &DynamicImage) -> image::RgbImage {
    if !pixels.has_alpha() {
        return pixels.to_rgb8();
    }
    let rgba = pixels.to_rgba8();
    image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let over_white = |channel: u8| {
            let alpha = u16::from(a);
            ((u16::from(channel) * alpha + 255 * (255 - alpha) + 127) / 255) as u8
        };
        image::Rgb([over_white(r), over_white(g), over_white(b)])
    })
}

//! Which kind of image a file is, decided from its first bytes only: never
//! from its name or the type its uploader declared.
//!
//! Signatures: JPEG's SOI marker followed by a marker (ITU-T T.81 B.1.1.3),
//! PNG's eight-byte signature (PNG spec 5.2), WebP's RIFF header with the
//! `WEBP` form type (RFC 9649 §2.4), and the ISO base media file's `ftyp`
//! box (ISO/IEC 14496-12 §4.3) whose brand says HEIC or AVIF.

use crate::error::Refusal;
use crate::image_type::ImageType;

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

// Neither has a decoder here that is both pure Rust and established: the
// `image` crate decodes AVIF only through the C library dav1d, the pure-Rust
// AVIF decoders are months old, and HEIC needs libheif (C) and an HEVC
// decoder. Phones that take HEIC photos export JPEG when sharing.
const NO_DECODER: &str = "rave has no maintained pure-Rust decoder for them; \
    upload the photo as JPEG, PNG or WebP";

/// The type of `bytes`, or why they are none rave accepts.
pub fn sniff(bytes: &[u8]) -> Result<ImageType, Refusal> {
    if bytes.is_empty() {
        return Err(Refusal::Empty);
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(ImageType::Jpeg);
    }
    if bytes.starts_with(PNG_SIGNATURE) {
        return Ok(ImageType::Png);
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Ok(ImageType::Webp);
    }
    if let Some(format) = iso_media_image(bytes) {
        return Err(Refusal::UnsupportedType {
            format,
            reason: NO_DECODER,
        });
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Err(Refusal::UnsupportedType {
            format: "GIF",
            reason: "only JPEG, PNG and WebP are",
        });
    }
    if looks_like_markup(bytes) {
        return Err(Refusal::Markup);
    }
    Err(Refusal::UnknownType)
}

/// "HEIC" or "AVIF" when `bytes` open with an `ftyp` box of those brands.
fn iso_media_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() < 12 || &bytes[4..8] != b"ftyp" {
        return None;
    }
    match &bytes[8..12] {
        b"avif" | b"avis" => Some("AVIF"),
        b"heic" | b"heix" | b"heim" | b"heis" | b"hevc" | b"hevx" | b"mif1" | b"msf1" => {
            Some("HEIC")
        }
        _ => None,
    }
}

/// Text that starts like HTML, SVG or XML once a byte order mark and
/// whitespace are skipped: named apart so the uploader learns what they sent.
fn looks_like_markup(bytes: &[u8]) -> bool {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    text.iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|first| *first == b'<')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_signature() {
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0rest"), Ok(ImageType::Jpeg));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest"), Ok(ImageType::Png));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Ok(ImageType::Webp));
    }

    #[test]
    fn markup_and_unknown_bytes_are_refused_by_name() {
        assert_eq!(sniff(b""), Err(Refusal::Empty));
        assert_eq!(sniff(b"\xEF\xBB\xBF  <html>"), Err(Refusal::Markup));
        assert_eq!(sniff(b"<svg onload=alert(1)>"), Err(Refusal::Markup));
        assert_eq!(sniff(b"hello"), Err(Refusal::UnknownType));
        assert!(matches!(
            sniff(b"\0\0\0\x18ftypheic\0\0\0\0"),
            Err(Refusal::UnsupportedType { format: "HEIC", .. })
        ));
        assert!(matches!(
            sniff(b"\0\0\0\x18ftypavif\0\0\0\0"),
            Err(Refusal::UnsupportedType { format: "AVIF", .. })
        ));
        assert!(matches!(
            sniff(b"GIF89a...."),
            Err(Refusal::UnsupportedType { format: "GIF", .. })
        ));
    }
}

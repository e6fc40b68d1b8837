//! The file's container walked before any pixel is decoded: where the image
//! ends (so bytes after it, the mark of a polyglot, are refused), whether it
//! is whole (a decoder may paint a truncated file grey rather than fail),
//! and whether it is animated.
//!
//! Each walk follows its format's own framing and reads lengths only:
//! * JPEG (ITU-T T.81 B.1–B.2): marker segments with a 16-bit length, the
//!   entropy-coded data after SOS scanned for the next marker (an `FF`
//!   followed by `00` is a stuffed byte, `D0`–`D7` a restart marker), up to
//!   EOI (`FFD9`). Phones append further whole JPEGs after the first EOI
//!   (the Multi-Picture Format's secondary images, CIPA DC-007 §5.2, and
//!   HDR gain maps), so what follows EOI is accepted only when it is
//!   itself a sequence of whole JPEGs.
//! * PNG (PNG spec §5.3, §11.3.3): chunks of length, type, data and CRC up
//!   to IEND; an `acTL` chunk makes it an APNG (APNG spec, "acTL").
//! * WebP (RFC 9649 §2): the RIFF size must cover exactly the file; an
//!   `ANIM`/`ANMF` chunk or the VP8X animation flag makes it animated.

use crate::error::Refusal;
use crate::image_type::ImageType;

/// What the walk learnt; `Err` when the framing is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub animated: bool,
}

/// Walks `bytes`, already sniffed as `format`.
pub fn walk(format: ImageType, bytes: &[u8]) -> Result<Layout, Refusal> {
    match format {
        ImageType::Jpeg => walk_jpeg(bytes),
        ImageType::Png => walk_png(bytes),
        ImageType::Webp => walk_webp(bytes),
    }
}

fn truncated(format: ImageType) -> Refusal {
    Refusal::Truncated { format }
}

fn corrupt(format: ImageType, detail: &str) -> Refusal {
    Refusal::Corrupt {
        format,
        detail: detail.to_owned(),
    }
}

fn walk_jpeg(bytes: &[u8]) -> Result<Layout, Refusal> {
    let mut end = jpeg_end(bytes)?;
    // The primary image is what gets decoded; what follows must be whole
    // JPEGs as well, or it is a payload riding along.
    while end < bytes.len() {
        let rest = &bytes[end..];
        if !rest.starts_with(&[0xFF, 0xD8, 0xFF]) {
            return Err(Refusal::TrailingData {
                format: ImageType::Jpeg,
                extra: rest.len(),
            });
        }
        end += jpeg_end(rest)?;
    }
    Ok(Layout { animated: false })
}

/// The offset just past the EOI of the JPEG that `bytes` opens with.
fn jpeg_end(bytes: &[u8]) -> Result<usize, Refusal> {
    const FORMAT: ImageType = ImageType::Jpeg;
    let byte_at = |at: usize| bytes.get(at).copied().ok_or(truncated(FORMAT));
    let mut at = 2; // past SOI
    loop {
        if byte_at(at)? != 0xFF {
            return Err(corrupt(FORMAT, "a marker was expected"));
        }
        // Any number of FF fill bytes may precede a marker (B.1.1.2).
        while byte_at(at)? == 0xFF {
            at += 1;
        }
        let marker = byte_at(at)?;
        at += 1;
        match marker {
            0xD9 => return Ok(at),
            0xD8 => return Err(corrupt(FORMAT, "a second start of image inside the image")),
            0x01 | 0xD0..=0xD7 => {}
            0x00 => return Err(corrupt(FORMAT, "a stuffed byte outside entropy-coded data")),
            _ => {
                let length = usize::from(u16::from_be_bytes([byte_at(at)?, byte_at(at + 1)?]));
                if length < 2 {
                    return Err(corrupt(
                        FORMAT,
                        "a marker segment shorter than its length field",
                    ));
                }
                at += length;
                if at > bytes.len() {
                    return Err(truncated(FORMAT));
                }
                if marker == 0xDA {
                    at = entropy_coded_end(bytes, at).ok_or(truncated(FORMAT))?;
                }
            }
        }
    }
}

/// The offset of the marker that ends the entropy-coded data starting at
/// `at`, or `None` when the file ends first.
fn entropy_coded_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let offset = bytes.get(at..)?.iter().position(|byte| *byte == 0xFF)?;
        at += offset;
        match bytes.get(at + 1)? {
            0x00 | 0xD0..=0xD7 => at += 2,
            _ => return Some(at),
        }
    }
}

fn walk_png(bytes: &[u8]) -> Result<Layout, Refusal> {
    const FORMAT: ImageType = ImageType::Png;
    let mut at = 8; // past the signature
    let mut animated = false;
    let mut first = true;
    loop {
        let header = bytes.get(at..at + 8).ok_or(truncated(FORMAT))?;
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        // §5.3: a chunk's length is at most 2^31 - 1.
        if length > i32::MAX as u32 {
            return Err(corrupt(FORMAT, "a chunk longer than the format allows"));
        }
        let chunk_type = &header[4..8];
        if first && chunk_type != b"IHDR" {
            return Err(corrupt(FORMAT, "the first chunk is not IHDR"));
        }
        first = false;
        animated |= chunk_type == b"acTL";
        // type, data, CRC
        let end = at + 8 + length as usize + 4;
        if end > bytes.len() {
            return Err(truncated(FORMAT));
        }
        if chunk_type == b"IEND" {
            if end < bytes.len() {
                return Err(Refusal::TrailingData {
                    format: FORMAT,
                    extra: bytes.len() - end,
                });
            }
            return Ok(Layout { animated });
        }
        at = end;
    }
}

fn walk_webp(bytes: &[u8]) -> Result<Layout, Refusal> {
    const FORMAT: ImageType = ImageType::Webp;
    let riff_size = bytes
        .get(4..8)
        .map(|size| u32::from_le_bytes([size[0], size[1], size[2], size[3]]))
        .ok_or(truncated(FORMAT))?;
    let end = 8 + riff_size as usize;
    if end > bytes.len() {
        return Err(truncated(FORMAT));
    }
    if end < bytes.len() {
        return Err(Refusal::TrailingData {
            format: FORMAT,
            extra: bytes.len() - end,
        });
    }
    let mut animated = false;
    let mut at = 12; // past RIFF, size, WEBP
    while at < end {
        let header = bytes.get(at..at + 8).ok_or(truncated(FORMAT))?;
        let fourcc = &header[0..4];
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let data = at + 8;
        if data + size > end {
            return Err(truncated(FORMAT));
        }
        match fourcc {
            b"ANIM" | b"ANMF" => animated = true,
            // RFC 9649 §2.7: the VP8X flags byte, A (animation) is bit 1.
            b"VP8X" => animated |= bytes.get(data).is_some_and(|flags| flags & 0x02 != 0),
            _ => {}
        }
        // Chunks are padded to an even size (§2.3).
        at = data + size + (size & 1);
    }
    Ok(Layout { animated })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_chunk(chunk_type: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
        chunk.extend_from_slice(chunk_type);
        chunk.extend_from_slice(data);
        chunk.extend_from_slice(&[0; 4]); // the CRC is the decoder's to check
        chunk
    }

    fn png(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
        for chunk in chunks {
            file.extend_from_slice(chunk);
        }
        file
    }

    #[test]
    fn png_framing() {
        let ihdr = png_chunk(b"IHDR", &[0; 13]);
        let iend = png_chunk(b"IEND", &[]);
        let plain = png(&[ihdr.clone(), png_chunk(b"IDAT", &[1, 2]), iend.clone()]);
        assert_eq!(walk_png(&plain), Ok(Layout { animated: false }));
        let apng = png(&[ihdr.clone(), png_chunk(b"acTL", &[0; 8]), iend.clone()]);
        assert_eq!(walk_png(&apng), Ok(Layout { animated: true }));
        let mut polyglot = plain.clone();
        polyglot.extend_from_slice(b"<script>");
        assert_eq!(
            walk_png(&polyglot),
            Err(Refusal::TrailingData {
                format: ImageType::Png,
                extra: 8
            })
        );
        assert_eq!(
            walk_png(&plain[..plain.len() - 3]),
            Err(Refusal::Truncated {
                format: ImageType::Png
            })
        );
        let headless = png(&[png_chunk(b"IDAT", &[]), iend]);
        assert!(matches!(walk_png(&headless), Err(Refusal::Corrupt { .. })));
    }

    #[test]
    fn jpeg_framing() {
        // SOI, an APP0 of 2 data bytes, SOS (length 2 for the test), data
        // with a stuffed FF00 and a restart marker, EOI.
        let jpeg =
            b"\xFF\xD8\xFF\xE0\x00\x04ab\xFF\xDA\x00\x02\x12\xFF\x00\x34\xFF\xD0\x56\xFF\xD9";
        assert_eq!(walk_jpeg(jpeg), Ok(Layout { animated: false }));
        let mut two = jpeg.to_vec();
        two.extend_from_slice(jpeg);
        assert_eq!(walk_jpeg(&two), Ok(Layout { animated: false }));
        let mut polyglot = jpeg.to_vec();
        polyglot.extend_from_slice(b"<html>");
        assert_eq!(
            walk_jpeg(&polyglot),
            Err(Refusal::TrailingData {
                format: ImageType::Jpeg,
                extra: 6
            })
        );
        for cut in 3..jpeg.len() {
            assert_eq!(
                walk_jpeg(&jpeg[..cut]),
                Err(Refusal::Truncated {
                    format: ImageType::Jpeg
                }),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn webp_framing() {
        let mut webp = b"RIFF\x10\0\0\0WEBPVP8X\x0a\0\0\0".to_vec();
        webp.extend_from_slice(&[0; 10]);
        // RIFF size: 4 (WEBP) + 8 + 10 = 22
        webp[4] = 22;
        assert_eq!(walk_webp(&webp), Ok(Layout { animated: false }));
        let mut animated = webp.clone();
        animated[20] = 0x02;
        assert_eq!(walk_webp(&animated), Ok(Layout { animated: true }));
        let mut polyglot = webp.clone();
        polyglot.push(b'<');
        assert!(matches!(
            walk_webp(&polyglot),
            Err(Refusal::TrailingData { extra: 1, .. })
        ));
        assert!(matches!(
            walk_webp(&webp[..webp.len() - 1]),
            Err(Refusal::Truncated { .. })
        ));
    }
}

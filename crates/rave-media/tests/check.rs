//! `check` and `process` on good and hostile uploads.

mod common;

use common::*;
use image::{GenericImageView, ImageFormat};
use proptest::prelude::*;
use rave_media::{
    CheckOptions, Encoding, ImageType, MediaId, Refusal, Rendition, Size, check, process,
};

fn refusal(bytes: &[u8]) -> Refusal {
    check(bytes, &CheckOptions::default()).expect_err("the file should be refused")
}

#[test]
fn good_images_of_each_type_are_accepted_with_their_dimensions() {
    for (bytes, format) in [
        (jpeg(640, 480), ImageType::Jpeg),
        (png(300, 500), ImageType::Png),
        (webp(333, 222), ImageType::Webp),
    ] {
        let checked = check(&bytes, &CheckOptions::default()).expect("accepted");
        assert_eq!(checked.format, format);
        let expected = match format {
            ImageType::Jpeg => (640, 480),
            ImageType::Png => (300, 500),
            ImageType::Webp => (333, 222),
        };
        assert_eq!(checked.dimensions(), expected, "{format}");
    }
}

#[test]
fn renditions_fit_their_sizes_and_decode_as_their_encoding() {
    let upload = png(3000, 2000);
    let processed = process(&upload, &CheckOptions::default()).expect("processed");
    assert_eq!(processed.id, MediaId::of_upload(&upload));
    assert_eq!(processed.renditions.len(), 4);
    assert_eq!(processed.display_dimensions(), Some((1600, 1067)));
    for encoded in &processed.renditions {
        let expected = match encoded.rendition.size {
            Size::Display => (1600, 1067),
            Size::Thumbnail => (320, 213),
        };
        assert_eq!((encoded.width, encoded.height), expected);
        let format = match encoded.rendition.encoding {
            Encoding::Webp => ImageFormat::WebP,
            Encoding::Jpeg => ImageFormat::Jpeg,
        };
        assert_eq!(image::guess_format(&encoded.bytes).ok(), Some(format));
        let decoded = image::load_from_memory_with_format(&encoded.bytes, format)
            .expect("a rendition decodes");
        assert_eq!(decoded.dimensions(), expected);
    }
}

#[test]
fn small_images_are_not_enlarged() {
    let processed = process(&jpeg(200, 100), &CheckOptions::default()).expect("processed");
    for encoded in &processed.renditions {
        assert_eq!((encoded.width, encoded.height), (200, 100));
    }
}

#[test]
fn html_named_jpg_is_refused_as_markup() {
    let page = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>";
    assert_eq!(refusal(page), Refusal::Markup);
}

#[test]
fn svg_with_script_is_refused_as_markup() {
    let svg = br#"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>"#;
    assert_eq!(refusal(svg), Refusal::Markup);
}

#[test]
fn decompression_bomb_is_refused_before_decoding_and_memory_stays_low() {
    let bomb = decompression_bomb();
    assert!(bomb.len() < 4 << 20, "the bomb is {} bytes", bomb.len());
    assert_eq!(
        refusal(&bomb),
        Refusal::TooManyPixels {
            width: 50_000,
            height: 50_000,
            max_pixels: 40_000_000
        }
    );
    // Past the pixel limit, the decoder's allocation limit still holds.
    let generous = CheckOptions {
        max_pixels: u64::MAX,
        ..CheckOptions::default()
    };
    assert_eq!(
        check(&bomb, &generous).expect_err("refused"),
        Refusal::TooMuchMemory {
            format: ImageType::Png
        }
    );
    let peak = peak_rss();
    assert!(peak < 256 << 20, "peak RSS {peak} bytes");
}

#[test]
fn truncated_files_are_refused() {
    let whole = jpeg(400, 300);
    for cut in [whole.len() / 2, whole.len() - 2, 600] {
        assert_eq!(
            refusal(&whole[..cut]),
            Refusal::Truncated {
                format: ImageType::Jpeg
            },
            "JPEG cut at {cut}"
        );
    }
    let whole = png(100, 100);
    assert_eq!(
        refusal(&whole[..whole.len() - 20]),
        Refusal::Truncated {
            format: ImageType::Png
        }
    );
    let whole = webp(100, 100);
    assert_eq!(
        refusal(&whole[..whole.len() - 20]),
        Refusal::Truncated {
            format: ImageType::Webp
        }
    );
}

#[test]
fn corrupt_pixels_are_refused() {
    let mut broken = png(64, 64);
    // Flip a byte inside IDAT's data: its CRC no longer matches.
    let idat = broken
        .windows(4)
        .position(|window| window == b"IDAT")
        .expect("an IDAT");
    broken[idat + 10] ^= 0xFF;
    assert!(matches!(
        refusal(&broken),
        Refusal::Corrupt {
            format: ImageType::Png,
            ..
        }
    ));
}

#[test]
fn polyglots_are_refused() {
    let script = b"<html><script>alert(1)</script></html>";
    for (image, format) in [
        (jpeg(32, 32), ImageType::Jpeg),
        (png(32, 32), ImageType::Png),
    ] {
        let mut polyglot = image.clone();
        polyglot.extend_from_slice(script);
        assert_eq!(
            refusal(&polyglot),
            Refusal::TrailingData {
                format,
                extra: script.len()
            }
        );
    }
    // A WebP whose RIFF size stops short of the file.
    let mut webp = webp(32, 32);
    webp.extend_from_slice(script);
    assert!(matches!(
        refusal(&webp),
        Refusal::TrailingData {
            format: ImageType::Webp,
            ..
        }
    ));
    // A ZIP archive after the PNG (the classic GIFAR/PNG+ZIP polyglot).
    let mut zip = png(16, 16);
    zip.extend_from_slice(b"PK\x03\x04\x14\0\0\0\0\0");
    assert!(matches!(refusal(&zip), Refusal::TrailingData { .. }));
}

#[test]
fn jpegs_followed_by_whole_jpegs_are_accepted() {
    // Phones store a second picture (MPF, gain maps) after the first EOI.
    let mut multi = jpeg(64, 48);
    multi.extend_from_slice(&jpeg(32, 24));
    let checked = check(&multi, &CheckOptions::default()).expect("accepted");
    assert_eq!(checked.dimensions(), (64, 48));
}

#[test]
fn animated_images_are_refused() {
    let apng =
        png_with_chunk_after_header(&png(16, 16), &png_chunk(b"acTL", &[0, 0, 0, 2, 0, 0, 0, 0]));
    assert_eq!(
        refusal(&apng),
        Refusal::Animated {
            format: ImageType::Png
        }
    );
    assert_eq!(
        refusal(&animated_webp(16, 16)),
        Refusal::Animated {
            format: ImageType::Webp
        }
    );
}

#[test]
fn heic_avif_and_gif_are_refused_with_a_reason() {
    for (bytes, name) in [
        (&b"\0\0\0\x18ftypheic\0\0\0\0mif1heic"[..], "HEIC"),
        (&b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf"[..], "AVIF"),
        (&b"GIF89a\x01\0\x01\0\0\0\0;"[..], "GIF"),
    ] {
        let refused = refusal(bytes);
        assert!(
            matches!(refused, Refusal::UnsupportedType { format, .. } if format == name),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("JPEG"), "{refused}");
    }
}

#[test]
fn gps_exif_is_gone_from_every_rendition_and_the_photo_is_upright() {
    // Orientation 6: the camera was turned; the stored pixels are 400 × 300
    // and the photo is shown rotated 90° clockwise, 300 × 400.
    let upload = jpeg_with_gps_exif(400, 300, 6);
    let exif = exif::Reader::new()
        .read_from_container(&mut std::io::Cursor::new(&upload))
        .expect("the upload carries EXIF");
    assert!(
        exif.get_field(exif::Tag::GPSLatitude, exif::In::PRIMARY)
            .is_some()
    );

    let processed = process(&upload, &CheckOptions::default()).expect("processed");
    for encoded in &processed.renditions {
        let read =
            exif::Reader::new().read_from_container(&mut std::io::Cursor::new(&encoded.bytes));
        assert!(read.is_err(), "{:?} carries EXIF", encoded.rendition);
        assert!(
            !encoded.bytes.windows(6).any(|window| window == b"Exif\0\0"),
            "{:?} carries an Exif block",
            encoded.rendition
        );
        if encoded.rendition
            == (Rendition {
                size: Size::Display,
                encoding: Encoding::Jpeg,
            })
        {
            assert_eq!((encoded.width, encoded.height), (300, 400));
        }
    }
}

#[test]
fn refusals_read_as_reasons_for_the_uploader() {
    let message = refusal(&decompression_bomb()).to_string();
    assert_eq!(
        message,
        "the image is 50000 × 50000 pixels, more than the 40000000 pixels accepted"
    );
    assert_eq!(
        refusal(b"<html>").to_string(),
        "the file is markup (HTML, SVG or XML), not a JPEG, PNG or WebP image"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_bytes_are_checked_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = check(&bytes, &CheckOptions::default());
    }

    #[test]
    fn damaged_images_are_checked_without_panicking(
        which in 0usize..3,
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = match which {
            0 => jpeg(24, 16),
            1 => png(24, 16),
            _ => webp(24, 16),
        };
        for (at, value) in damage {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        let keep = cut.index(bytes.len()).max(bytes.len() / 2);
        let _ = check(&bytes[..keep], &CheckOptions::default());
    }
}

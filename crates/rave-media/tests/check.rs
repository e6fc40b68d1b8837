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

/// The markers of a JPEG's segments before its first scan (SOS ends the
/// walk: what follows is entropy-coded data).
fn jpeg_markers(bytes: &[u8]) -> Vec<u8> {
    assert_eq!(&bytes[..2], [0xFF, 0xD8], "SOI");
    let mut markers = Vec::new();
    let mut at = 2;
    while at + 4 <= bytes.len() {
        assert_eq!(bytes[at], 0xFF, "a marker at {at}");
        let marker = bytes[at + 1];
        markers.push(marker);
        if marker == 0xDA {
            break;
        }
        at += 2 + usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
    }
    markers
}

/// The chunks of a WebP file (RFC 9649 §2.3): each FourCC, and the VP8X
/// header's flags when there is one.
fn webp_chunks(bytes: &[u8]) -> (Vec<[u8; 4]>, Option<u8>) {
    assert_eq!((&bytes[..4], &bytes[8..12]), (&b"RIFF"[..], &b"WEBP"[..]));
    let (mut chunks, mut flags) = (Vec::new(), None);
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let fourcc: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
        let size = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        if &fourcc == b"VP8X" {
            flags = Some(bytes[at + 8]);
        }
        chunks.push(fourcc);
        at += 8 + size + size % 2;
    }
    (chunks, flags)
}

/// Asserts that no rendition of `upload` keeps any of its metadata: no
/// segment or chunk that carries metadata, and none of the `secrets` (bytes
/// only the upload's metadata held) anywhere in the file.
fn assert_no_metadata_survives(upload: &[u8], secrets: &[&[u8]]) {
    let processed = process(upload, &CheckOptions::default()).expect("processed");
    assert_eq!(processed.renditions.len(), 4);
    for encoded in &processed.renditions {
        let which = encoded.rendition;
        for secret in secrets {
            assert!(
                !encoded
                    .bytes
                    .windows(secret.len())
                    .any(|window| window == *secret),
                "{which:?} carries {:?}",
                String::from_utf8_lossy(secret)
            );
        }
        match which.encoding {
            Encoding::Jpeg => {
                // APP0 (JFIF) is the encoder's own; every other APPn
                // (APP1 EXIF/XMP, APP2 ICC, APP13 IPTC...) and COM would be
                // metadata.
                let markers = jpeg_markers(&encoded.bytes);
                assert_eq!(markers.last(), Some(&0xDA), "{which:?}: a scan");
                for marker in markers {
                    assert!(
                        !(0xE1..=0xEF).contains(&marker) && marker != 0xFE,
                        "{which:?} has a segment FF{marker:02X}"
                    );
                }
            }
            Encoding::Webp => {
                let (chunks, flags) = webp_chunks(&encoded.bytes);
                for chunk in &chunks {
                    assert!(
                        [*b"VP8 ", *b"VP8L", *b"VP8X", *b"ALPH"].contains(chunk),
                        "{which:?} has a chunk {:?}",
                        String::from_utf8_lossy(chunk)
                    );
                }
                // VP8X's ICC (0x20), EXIF (0x08) and XMP (0x04) flags.
                if let Some(flags) = flags {
                    assert_eq!(flags & 0x2C, 0, "{which:?}: VP8X flags {flags:#04x}");
                }
            }
        }
    }
}

const XMP_SECRET: &[u8] = b"Ann Lee at 12 Hidden Lane";
const ICC_SECRET: &[u8] = b"rave-test-profile";
const COMMENT_SECRET: &[u8] = b"shot from the neighbour's garden";

/// An XMP packet naming the photographer and the place.
fn xmp_packet() -> Vec<u8> {
    let mut packet = br#"<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator=""#.to_vec();
    packet.extend_from_slice(XMP_SECRET);
    packet.extend_from_slice(br#""/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>"#);
    packet
}

/// A small ICC profile (ICC.1:2010 §7.2): a 128-byte header with the
/// `acsp` signature and a description tag holding `ICC_SECRET`.
fn icc_profile() -> Vec<u8> {
    let mut description = b"desc\0\0\0\0".to_vec();
    description.extend_from_slice(&(ICC_SECRET.len() as u32 + 1).to_be_bytes());
    description.extend_from_slice(ICC_SECRET);
    description.push(0);
    let tag_table_end = 128 + 4 + 12;
    let size = tag_table_end + description.len();
    let mut profile = vec![0u8; 128];
    profile[..4].copy_from_slice(&(size as u32).to_be_bytes());
    profile[8..12].copy_from_slice(&[2, 0x10, 0, 0]); // version 2.1
    profile[12..16].copy_from_slice(b"mntr");
    profile[16..20].copy_from_slice(b"RGB ");
    profile[20..24].copy_from_slice(b"XYZ ");
    profile[36..40].copy_from_slice(b"acsp");
    profile.extend_from_slice(&1u32.to_be_bytes());
    profile.extend_from_slice(b"desc");
    profile.extend_from_slice(&(tag_table_end as u32).to_be_bytes());
    profile.extend_from_slice(&(description.len() as u32).to_be_bytes());
    profile.extend_from_slice(&description);
    profile
}

#[test]
fn xmp_icc_and_comment_blocks_are_gone_from_every_rendition_of_a_jpeg() {
    let mut xmp = b"http://ns.adobe.com/xap/1.0/\0".to_vec();
    xmp.extend_from_slice(&xmp_packet());
    // ICC.1:2010 Annex B.4: the profile in APP2 chunks, here one of one.
    let mut icc = b"ICC_PROFILE\0".to_vec();
    icc.extend_from_slice(&[1, 1]);
    icc.extend_from_slice(&icc_profile());
    let upload = jpeg_with_segments(
        &jpeg(400, 300),
        &[(0xE1, xmp), (0xE2, icc), (0xFE, COMMENT_SECRET.to_vec())],
    );
    // The upload carries each block where a reader looks for it.
    let markers = jpeg_markers(&upload);
    assert_eq!(markers[..3], [0xE1, 0xE2, 0xFE], "{markers:02X?}");
    for secret in [XMP_SECRET, ICC_SECRET, COMMENT_SECRET] {
        assert!(upload.windows(secret.len()).any(|window| window == secret));
    }
    assert_no_metadata_survives(
        &upload,
        &[
            XMP_SECRET,
            b"http://ns.adobe.com/xap/1.0/",
            b"ICC_PROFILE",
            ICC_SECRET,
            COMMENT_SECRET,
        ],
    );
}

#[test]
fn text_chunks_are_gone_from_every_rendition_of_a_png() {
    // tEXt: keyword, NUL, Latin-1 text (PNG spec §11.3.4.3).
    let mut text = b"Comment\0".to_vec();
    text.extend_from_slice(COMMENT_SECRET);
    // iTXt: keyword, NUL, compression flag and method, language tag, NUL,
    // translated keyword, NUL, UTF-8 text (§11.3.4.5): XMP as Adobe puts it.
    let mut international = b"XML:com.adobe.xmp\0\0\0\0\0".to_vec();
    international.extend_from_slice(&xmp_packet());
    let upload = png_with_chunk_after_header(
        &png_with_chunk_after_header(&png(300, 200), &png_chunk(b"tEXt", &text)),
        &png_chunk(b"iTXt", &international),
    );
    for secret in [XMP_SECRET, COMMENT_SECRET] {
        assert!(upload.windows(secret.len()).any(|window| window == secret));
    }
    assert_no_metadata_survives(
        &upload,
        &[XMP_SECRET, b"XML:com.adobe.xmp", COMMENT_SECRET, b"Comment"],
    );
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

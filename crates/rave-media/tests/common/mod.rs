//! Images made in the tests: good ones of each type, and the hostile ones.

#![allow(dead_code)] // each test file uses its own share of these

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, RgbImage};

/// A photo-like picture: gradients with some texture, so encoders have
/// detail to keep.
pub fn picture(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        let texture = ((x * 7 + y * 13) % 17) as u8;
        image::Rgb([
            (x * 255 / width.max(1)) as u8 ^ texture,
            (y * 255 / height.max(1)) as u8,
            ((x + y) % 256) as u8,
        ])
    }))
}

pub fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), format)
        .expect("encoding a test image");
    bytes
}

pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    encoded(&picture(width, height), ImageFormat::Jpeg)
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    encoded(&picture(width, height), ImageFormat::Png)
}

/// A lossy WebP (VP8) from libwebp.
pub fn webp(width: u32, height: u32) -> Vec<u8> {
    let rgb = picture(width, height).to_rgb8();
    webp::Encoder::from_rgb(&rgb, width, height)
        .encode_simple(false, 80.0)
        .expect("encoding a test WebP")
        .to_vec()
}

/// A PNG chunk with its CRC (PNG spec §5.3).
pub fn png_chunk(chunk_type: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(chunk_type);
    chunk.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(chunk_type);
    crc.update(data);
    chunk.extend_from_slice(&crc.finalize().to_be_bytes());
    chunk
}

/// `png` with `chunk` inserted right after IHDR (8 signature bytes, IHDR's
/// 25).
pub fn png_with_chunk_after_header(png: &[u8], chunk: &[u8]) -> Vec<u8> {
    let mut file = png[..33].to_vec();
    file.extend_from_slice(chunk);
    file.extend_from_slice(&png[33..]);
    file
}

/// A RIFF chunk with its padding (RFC 9649 §2.3).
pub fn riff_chunk(fourcc: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = fourcc.to_vec();
    chunk.extend_from_slice(&(data.len() as u32).to_le_bytes());
    chunk.extend_from_slice(data);
    if data.len() % 2 == 1 {
        chunk.push(0);
    }
    chunk
}

pub fn riff_webp(chunks: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = chunks.concat();
    let mut file = b"RIFF".to_vec();
    file.extend_from_slice(&(4 + body.len() as u32).to_le_bytes());
    file.extend_from_slice(b"WEBP");
    file.extend_from_slice(&body);
    file
}

/// A two-frame animated WebP (RFC 9649 §2.7: VP8X with the animation flag,
/// ANIM, one ANMF per frame holding a VP8 bitstream).
pub fn animated_webp(width: u32, height: u32) -> Vec<u8> {
    let still = webp(width, height);
    // The still file is RIFF, size, WEBP, then its one VP8 chunk.
    let vp8 = still[12..].to_vec();
    let canvas = |value: u32| (value - 1).to_le_bytes()[..3].to_vec();
    let mut vp8x = vec![0x02, 0, 0, 0];
    vp8x.extend(canvas(width));
    vp8x.extend(canvas(height));
    let mut frame = vec![0; 6]; // X and Y offsets
    frame.extend(canvas(width));
    frame.extend(canvas(height));
    frame.extend_from_slice(&[100, 0, 0, 0]); // duration, flags
    frame.extend_from_slice(&vp8);
    riff_webp(&[
        riff_chunk(b"VP8X", &vp8x),
        riff_chunk(b"ANIM", &[0, 0, 0, 0, 0, 0]),
        riff_chunk(b"ANMF", &frame),
        riff_chunk(b"ANMF", &frame),
    ])
}

/// A JPEG with an APP1 Exif segment right after SOI holding GPS position
/// and `orientation` (TIFF tag 274), written with kamadak-exif.
pub fn jpeg_with_gps_exif(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    use exif::experimental::Writer;
    use exif::{Field, In, Rational, Tag, Value};
    let fields = [
        Field {
            tag: Tag::Orientation,
            ifd_num: In::PRIMARY,
            value: Value::Short(vec![orientation]),
        },
        Field {
            tag: Tag::GPSLatitudeRef,
            ifd_num: In::PRIMARY,
            value: Value::Ascii(vec![b"N".to_vec()]),
        },
        Field {
            tag: Tag::GPSLatitude,
            ifd_num: In::PRIMARY,
            value: Value::Rational(vec![
                Rational::from((48, 1)),
                Rational::from((51, 1)),
                Rational::from((2970, 100)),
            ]),
        },
        Field {
            tag: Tag::GPSLongitudeRef,
            ifd_num: In::PRIMARY,
            value: Value::Ascii(vec![b"E".to_vec()]),
        },
        Field {
            tag: Tag::GPSLongitude,
            ifd_num: In::PRIMARY,
            value: Value::Rational(vec![
                Rational::from((2, 1)),
                Rational::from((17, 1)),
                Rational::from((4020, 100)),
            ]),
        },
    ];
    let mut writer = Writer::new();
    for field in &fields {
        writer.push_field(field);
    }
    let mut tiff = Cursor::new(Vec::new());
    writer.write(&mut tiff, false).expect("writing EXIF");
    let tiff = tiff.into_inner();
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    jpeg_with_segments(&jpeg(width, height), &[(0xE1, app1)])
}

/// `jpeg` with marker segments (marker byte, payload) inserted right after
/// SOI, in order, each with its length (ITU T.81 §B.1.1.4).
pub fn jpeg_with_segments(jpeg: &[u8], segments: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut file = jpeg[..2].to_vec();
    for (marker, payload) in segments {
        file.extend_from_slice(&[0xFF, *marker]);
        let length = u16::try_from(payload.len() + 2).expect("a segment under 64 KiB");
        file.extend_from_slice(&length.to_be_bytes());
        file.extend_from_slice(payload);
    }
    file.extend_from_slice(&jpeg[2..]);
    file
}

/// A 50,000 × 50,000 8-bit greyscale PNG of zeros: 2.5 GB of pixels in
/// about 2.4 MB. Its IDAT is one deflate stream made of a compressed run of
/// zeros repeated: each run ends with a full flush (byte-aligned, no back
/// references across it), so repeating it is valid deflate; the Adler-32 of
/// n zero bytes is (n mod 65521) << 16 | 1 (RFC 1950 §9).
pub fn decompression_bomb() -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    const SIDE: u32 = 50_000;
    let raw_len: u64 = u64::from(SIDE) * (u64::from(SIDE) + 1); // a filter byte per row
    const RUN: usize = 1 << 20;
    let compress_zeros = |len: usize, flush: FlushCompress| {
        let mut compressor = Compress::new(Compression::best(), false);
        let mut out = Vec::with_capacity(len / 500 + 64);
        compressor
            .compress_vec(&vec![0; len], &mut out, flush)
            .expect("deflate");
        assert_eq!(
            compressor.total_in(),
            len as u64,
            "the output buffer was too small"
        );
        out
    };
    let run = compress_zeros(RUN, FlushCompress::Full);
    let runs = raw_len / RUN as u64;
    let rest = (raw_len % RUN as u64) as usize;
    let mut idat = vec![0x78, 0xDA]; // zlib header: deflate, 32 KiB window
    for _ in 0..runs {
        idat.extend_from_slice(&run);
    }
    idat.extend_from_slice(&compress_zeros(rest, FlushCompress::Finish));
    let adler = (((raw_len % 65521) as u32) << 16) | 1;
    idat.extend_from_slice(&adler.to_be_bytes());

    let mut ihdr = SIDE.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&SIDE.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit greyscale
    let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
    file.extend(png_chunk(b"IHDR", &ihdr));
    file.extend(png_chunk(b"IDAT", &idat));
    file.extend(png_chunk(b"IEND", &[]));
    file
}

/// This process's peak resident memory (VmHWM), in bytes.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|value| value.parse().ok())
        .expect("a number of kB");
    kib * 1024
}

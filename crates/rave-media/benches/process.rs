//! What one 12-megapixel phone photo costs: `check` (sniff, container walk,
//! decode) and `process` (check, both sizes, WebP and JPEG each), and each
//! encoder alone on the display size. `cargo bench -p rave-media`; figures
//! for this project's machine are in docs/photos.md.
//!
//! The photo is synthetic (no image ships with rave): smooth gradients with
//! sensor-like noise, 4000 × 3000, JPEG quality 90 as phones save them. Set
//! `RAVE_MEDIA_BENCH_PHOTO` to a JPEG file to measure a real photo instead.

use criterion::{Criterion, criterion_group, criterion_main};
use rave_media::{CheckOptions, MediaId, check, process, render, sample_photo};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let upload = match std::env::var_os("RAVE_MEDIA_BENCH_PHOTO") {
        Some(path) => std::fs::read(path).expect("reading RAVE_MEDIA_BENCH_PHOTO"),
        None => sample_photo(4000, 3000, 0),
    };
    let options = CheckOptions::default();
    let mut group = c.benchmark_group("photo");
    group.sample_size(10);
    group.bench_function("check", |b| {
        b.iter(|| check(black_box(&upload), &options).expect("accepted"))
    });
    group.bench_function("process", |b| {
        b.iter(|| process(black_box(&upload), &options).expect("processed"))
    });
    let checked = check(&upload, &options).expect("accepted");
    group.bench_function("render", |b| {
        b.iter(|| render(MediaId::of_upload(&upload), black_box(&checked)).expect("rendered"))
    });
    // Each encoder alone on the display size: what choosing the format costs.
    let display = checked
        .pixels
        .resize(1600, 1600, image::imageops::FilterType::CatmullRom)
        .to_rgb8();
    group.bench_function("encode display WebP q78", |b| {
        b.iter(|| {
            webp::Encoder::from_rgb(black_box(&display), display.width(), display.height())
                .encode_simple(false, 78.0)
                .expect("encoded")
        })
    });
    group.bench_function("encode display JPEG q82", |b| {
        b.iter(|| {
            let mut bytes = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 82)
                .encode_image(black_box(&display))
                .expect("encoded");
            bytes
        })
    });
    group.finish();

    let processed = process(&upload, &options).expect("processed");
    for encoded in &processed.renditions {
        println!(
            "{:?}: {} × {}, {} bytes (upload {} bytes)",
            encoded.rendition,
            encoded.width,
            encoded.height,
            encoded.bytes.len(),
            upload.len()
        );
    }
    assert_eq!(
        image::guess_format(&upload).ok(),
        Some(image::ImageFormat::Jpeg)
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

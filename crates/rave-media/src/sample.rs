//! Synthetic photos for demo and benchmark data (`rave load --photos`, the
//! benches): no image ships with rave, and a flat test card would compress
//! and resize unlike a real photo. These are smooth gradients (a sky over
//! hills) with sensor-like grain, saved as JPEG at quality 90 as phones
//! save them; `seed` shifts the scene and the grain, so each seed gives a
//! different file (and so a different photo id).

use std::io::Cursor;

use image::{DynamicImage, RgbImage};

/// A JPEG of `width` × `height` pixels, the same bytes for the same seed.
pub fn sample_photo(width: u32, height: u32, seed: u32) -> Vec<u8> {
    let mut state: u32 = (0x9E37_79B9 ^ seed.wrapping_mul(0x85EB_CA6B)) | 1;
    let mut grain = move || {
        // xorshift32: a cheap, reproducible grain
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 13) as f32 - 6.0
    };
    let phase = (seed % 97) as f32 * 0.37;
    let pixels = RgbImage::from_fn(width, height, |x, y| {
        let (fx, fy) = (x as f32 / width as f32, y as f32 / height as f32);
        let sky = 200.0 - 120.0 * fy + 30.0 * (fx * 9.0 + phase).sin();
        let hill = 90.0 + 60.0 * ((fx * 5.0 + fy * 3.0 + phase).sin() * (fy * 7.0).cos());
        let mut channel = |value: f32| (value + grain()).clamp(0.0, 255.0) as u8;
        image::Rgb([channel(hill), channel((sky + hill) / 2.0), channel(sky)])
    });
    let mut bytes = Vec::new();
    // Encoding pixels into a Vec cannot fail.
    let _ = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut Cursor::new(&mut bytes), 90)
        .encode_image(&DynamicImage::ImageRgb8(pixels));
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_accepted_photo() {
        let photo = sample_photo(64, 48, 1);
        assert_eq!(photo, sample_photo(64, 48, 1));
        assert_ne!(photo, sample_photo(64, 48, 2));
        let checked = crate::check(&photo, &crate::CheckOptions::default()).unwrap();
        assert_eq!((checked.pixels.width(), checked.pixels.height()), (64, 48));
    }
}

//! What a listing page and its structured data both show of a comment,
//! worked out once for both: its name, its time, and its published photos'
//! URLs (from `MediaLinks`, the one place photo URLs come from; a photo
//! still waiting for a moderator is never shown).

use std::borrow::Cow;

use rave_comments::{Comment, Photo};
use rave_media::{Encoding, Size};

use crate::media::MediaLinks;

/// Characters of a body a review without a title is named by.
const NAME_FROM_BODY: usize = 80;

/// A review's name: its title, or the start of its body.
fn review_name(comment: &Comment) -> Cow<'_, str> {
    if !comment.title.trim().is_empty() {
        return Cow::Borrowed(&comment.title);
    }
    match comment.body.char_indices().nth(NAME_FROM_BODY) {
        Some((end, _)) => Cow::Owned(format!("{}…", &comment.body[..end])),
        None => Cow::Borrowed(&comment.body),
    }
}

/// One published photo of a comment as a listing shows it: a thumbnail
/// (WebP with its JPEG fallback) linking to the display size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ShownPhoto {
    pub(super) thumbnail_webp: String,
    pub(super) thumbnail_jpeg: String,
    /// What the thumbnail links to and the structured data names: the
    /// display size in JPEG, which every browser and crawler reads.
    pub(super) display_jpeg: String,
    /// The thumbnail's size in pixels, so the page keeps its room before
    /// the image arrives.
    pub(super) thumbnail_width: u32,
    pub(super) thumbnail_height: u32,
}

impl ShownPhoto {
    fn new(photo: &Photo, links: &MediaLinks) -> ShownPhoto {
        let (thumbnail_width, thumbnail_height) = thumbnail_size(photo.width, photo.height);
        ShownPhoto {
            thumbnail_webp: links.url(&photo.id, Size::Thumbnail, Encoding::Webp),
            thumbnail_jpeg: links.url(&photo.id, Size::Thumbnail, Encoding::Jpeg),
            display_jpeg: links.url(&photo.id, Size::Display, Encoding::Jpeg),
            thumbnail_width,
            thumbnail_height,
        }
    }
}

/// The thumbnail's size, from the display size a photo records: rave-media
/// makes the thumbnail by shrinking the display size until its long edge
/// fits [`Size::Thumbnail`], keeping the aspect ratio (never enlarging).
/// Rounded to the nearest pixel; a pixel off the encoder's rounding still
/// gives the browser the right aspect ratio, which is what keeps the layout
/// from shifting.
fn thumbnail_size(width: u32, height: u32) -> (u32, u32) {
    let edge = u64::from(Size::Thumbnail.long_edge());
    let long = u64::from(width.max(height));
    if long <= edge {
        return (width, height);
    }
    let scale = |side: u32| {
        let scaled = (u64::from(side) * edge + long / 2) / long;
        u32::try_from(scaled.max(1)).unwrap_or(1)
    };
    (scale(width), scale(height))
}

/// What the page and its structured data both show of a comment, worked
/// out once for both.
pub(super) struct Shown<'a> {
    pub(super) comment: &'a Comment,
    /// Its title, or the start of its body.
    pub(super) name: Cow<'a, str>,
    /// When it was written, as RFC 3339.
    pub(super) published: String,
    /// Its published photos, in the order the author gave them.
    pub(super) photos: Vec<ShownPhoto>,
}

impl<'a> Shown<'a> {
    pub(super) fn new(comment: &'a Comment, links: &MediaLinks) -> Shown<'a> {
        Shown {
            comment,
            name: review_name(comment),
            published: comment.created_at.to_string(),
            photos: comment
                .media
                .iter()
                .filter(|photo| photo.is_published())
                .map(|photo| ShownPhoto::new(photo, links))
                .collect(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use rave_comments::{Language, PhotoId, PhotoStatus, ProductId, Rating, Status, Timestamp};

    use super::*;

    /// A published 4-star comment with `title` and `body`.
    pub(in crate::pages) fn comment(title: &str, body: &str) -> Comment {
        Comment {
            id: "c1".into(),
            product_id: ProductId::parse("p").unwrap(),
            author: "a".into(),
            language: Language::parse("en").unwrap(),
            rating: Rating::new(4).unwrap(),
            title: title.into(),
            body: body.into(),
            created_at: Timestamp::parse("2026-01-02T03:04:05.006Z").unwrap(),
            status: Status::Published,
            held_by: None,
            reply: None,
            verified_purchase: false,
            votes: Default::default(),
            source: None,
            image_urls: Vec::new(),
            media: Vec::new(),
            incentivized: false,
            attributes: Default::default(),
            reports: Default::default(),
            queued_at: None,
            group: None,
        }
    }

    /// A photo of `width` × `height` pixels named by `byte` repeated.
    pub(in crate::pages) fn photo(
        byte: &str,
        width: u32,
        height: u32,
        status: PhotoStatus,
    ) -> Photo {
        Photo {
            id: PhotoId::parse(&byte.repeat(64)).unwrap(),
            width,
            height,
            status,
        }
    }

    #[test]
    fn only_published_photos_are_shown_with_their_thumbnail_size() {
        let mut with_photos = comment("t", "b");
        with_photos.media = vec![
            photo("a", 1600, 1200, PhotoStatus::Published),
            photo("b", 800, 600, PhotoStatus::Pending),
            photo("c", 900, 1600, PhotoStatus::Published),
        ];
        let shown = Shown::new(&with_photos, &MediaLinks::served_at("https://r.example"));
        let a = "a".repeat(64);
        assert_eq!(
            shown.photos,
            [
                ShownPhoto {
                    thumbnail_webp: format!("https://r.example/media/{a}/thumb.webp"),
                    thumbnail_jpeg: format!("https://r.example/media/{a}/thumb.jpg"),
                    display_jpeg: format!("https://r.example/media/{a}/display.jpg"),
                    thumbnail_width: 320,
                    thumbnail_height: 240,
                },
                ShownPhoto::new(
                    &with_photos.media[2],
                    &MediaLinks::served_at("https://r.example")
                ),
            ]
        );
        assert_eq!(
            (
                shown.photos[1].thumbnail_width,
                shown.photos[1].thumbnail_height
            ),
            (180, 320)
        );
    }

    #[test]
    fn small_photos_keep_their_size_and_thin_ones_keep_a_pixel() {
        assert_eq!(thumbnail_size(300, 200), (300, 200));
        assert_eq!(thumbnail_size(1600, 1), (320, 1));
        assert_eq!(thumbnail_size(1000, 333), (320, 107));
    }

    #[test]
    fn a_review_is_named_by_its_title_or_the_first_80_characters_of_its_body() {
        assert_eq!(review_name(&comment("Good", "x")), "Good");
        let exactly = "é".repeat(NAME_FROM_BODY);
        assert_eq!(review_name(&comment(" ", &exactly)), exactly);
        let longer = format!("{exactly}ü");
        assert_eq!(review_name(&comment("", &longer)), format!("{exactly}…"));
        let unnamed = comment("", &longer);
        let shown = Shown::new(&unnamed, &MediaLinks::default());
        assert_eq!(shown.published, "2026-01-02T03:04:05.006Z");
    }
}

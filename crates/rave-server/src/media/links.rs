//! Where a photo's renditions are reached from outside: the URLs the API,
//! the pages, the embed, the JSON-LD, webhooks and the feeds give.
//!
//! By default rave serves them itself (`/media/<id>/<rendition>`), under
//! its `--public-url` when one is set so that a webhook's receiver or a
//! feed's reader can follow them, else as a path on rave's own origin (the
//! embed resolves it against the API it talks to). A bucket's own URL or a
//! CDN in front of the bucket can be named instead (`--media-url`): the
//! store keys renditions `<id>/<rendition>`, so the same path follows it.

use rave_comments::PhotoId;
use rave_media::{Encoding, Rendition, Size};

/// The base every rendition URL starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaLinks {
    /// Without a trailing `/`: `/media`, `https://reviews.shop.example/media`
    /// or a bucket's or CDN's URL.
    base: String,
}

impl Default for MediaLinks {
    fn default() -> MediaLinks {
        MediaLinks {
            base: "/media".to_owned(),
        }
    }
}

/// A `--media-url` that cannot be a base of URLs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--media-url {0:?} must be an absolute http or https URL without spaces, query or fragment, such as https://cdn.shop.example/reviews"
)]
pub struct InvalidMediaUrl(String);

impl MediaLinks {
    /// Renditions served by rave itself, reached at `public_url` (as given
    /// by `--public-url`, already checked).
    pub fn served_at(public_url: &str) -> MediaLinks {
        MediaLinks {
            base: format!("{}/media", public_url.trim_end_matches('/')),
        }
    }

    /// Renditions reached at a bucket's URL or a CDN's (`--media-url`).
    pub fn external(url: &str) -> Result<MediaLinks, InvalidMediaUrl> {
        let invalid = || InvalidMediaUrl(url.to_owned());
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .ok_or_else(invalid)?;
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty()
            || url.chars().any(|c| {
                c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '<' | '>' | '"')
            })
        {
            return Err(invalid());
        }
        Ok(MediaLinks {
            base: url.trim_end_matches('/').to_owned(),
        })
    }

    /// The origin (`scheme://host[:port]`) photos are served from when it
    /// is named (a public URL, a bucket, a CDN); `None` for rave's own
    /// origin. What a page's content policy lets images come from.
    pub fn origin(&self) -> Option<&str> {
        let scheme = if self.base.starts_with("https://") {
            "https://"
        } else if self.base.starts_with("http://") {
            "http://"
        } else {
            return None;
        };
        let host_end = self.base[scheme.len()..]
            .find('/')
            .map_or(self.base.len(), |at| scheme.len() + at);
        Some(&self.base[..host_end])
    }

    /// The URL of one rendition of a photo.
    pub fn url(&self, photo: &PhotoId, size: Size, encoding: Encoding) -> String {
        let rendition = Rendition { size, encoding };
        format!("{}/{photo}/{}", self.base, rendition.file_name())
    }
}

/// Webhook payloads name photos as the API does (rave-webhooks cannot
/// depend on this crate, so the binary hands the links over).
impl rave_webhooks::PhotoLinks for MediaLinks {
    fn urls(&self, photo: &PhotoId) -> rave_webhooks::PhotoUrls {
        rave_webhooks::PhotoUrls {
            url: self.url(photo, Size::Display, Encoding::Webp),
            thumbnail_url: self.url(photo, Size::Thumbnail, Encoding::Webp),
            fallback_url: self.url(photo, Size::Display, Encoding::Jpeg),
            thumbnail_fallback_url: self.url(photo, Size::Thumbnail, Encoding::Jpeg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn photo() -> PhotoId {
        PhotoId::parse(&"ab".repeat(32)).unwrap()
    }

    #[test]
    fn renditions_are_served_by_rave_unless_told_otherwise() {
        let id = "ab".repeat(32);
        assert_eq!(
            MediaLinks::default().url(&photo(), Size::Thumbnail, Encoding::Webp),
            format!("/media/{id}/thumb.webp")
        );
        assert_eq!(
            MediaLinks::served_at("https://reviews.shop.example/").url(
                &photo(),
                Size::Display,
                Encoding::Jpeg
            ),
            format!("https://reviews.shop.example/media/{id}/display.jpg")
        );
        assert_eq!(
            MediaLinks::external("https://cdn.shop.example/reviews/")
                .unwrap()
                .url(&photo(), Size::Display, Encoding::Webp),
            format!("https://cdn.shop.example/reviews/{id}/display.webp")
        );
    }

    #[test]
    fn the_origin_is_named_only_when_photos_come_from_an_address_given() {
        assert_eq!(MediaLinks::default().origin(), None);
        assert_eq!(
            MediaLinks::served_at("https://reviews.shop.example:8443/rave").origin(),
            Some("https://reviews.shop.example:8443")
        );
        assert_eq!(
            MediaLinks::external("http://cdn.shop.example")
                .unwrap()
                .origin(),
            Some("http://cdn.shop.example")
        );
    }

    #[test]
    fn a_media_url_is_an_absolute_http_url() {
        for bad in [
            "cdn.shop.example",
            "ftp://cdn.shop.example",
            "https://",
            "https://cdn.shop.example/?a=1",
            "https://cdn.shop.example/a b",
            "javascript:alert(1)",
        ] {
            assert!(MediaLinks::external(bad).is_err(), "{bad}");
        }
    }
}

//! Where the public reaches rave (`--public-url`), and whose reviews a feed
//! carries: what a feed needs to name rave's pages.

use crate::media::MediaLinks;

/// Where the public reaches rave, and whose reviews the feeds carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedSite {
    /// `http(s)://host[/path]`, without a trailing `/`.
    public_url: String,
    /// The publisher's name (the shop's).
    pub(super) publisher: String,
}

/// A `--public-url` or publisher name that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidFeedSite(String);

impl FeedSite {
    /// `public_url` is an absolute http(s) URL whose host has a dot (Google
    /// refuses other addresses), without spaces, query or fragment; the
    /// publisher defaults to its host.
    pub fn new(public_url: &str, publisher: Option<&str>) -> Result<FeedSite, InvalidFeedSite> {
        let invalid = || {
            InvalidFeedSite(format!(
                "--public-url {public_url:?} must be an absolute http or https URL with a public host name, such as https://reviews.shop.example, without spaces, query or fragment"
            ))
        };
        let rest = public_url
            .strip_prefix("https://")
            .or_else(|| public_url.strip_prefix("http://"))
            .ok_or_else(invalid)?;
        let host = rest.split('/').next().unwrap_or_default();
        let host_name = host.rsplit_once(':').map_or(host, |(name, _port)| name);
        if !host_name.contains('.')
            || host_name.starts_with('.')
            || host_name.ends_with('.')
            || public_url.chars().any(|c| {
                c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '<' | '>' | '"')
            })
        {
            return Err(invalid());
        }
        let publisher = match publisher {
            Some(name) if name.trim().is_empty() || name.chars().any(char::is_control) => {
                return Err(InvalidFeedSite(format!(
                    "the publisher name {name:?} must have a visible character and no control characters"
                )));
            }
            Some(name) => name.to_owned(),
            None => host_name.to_owned(),
        };
        Ok(FeedSite {
            public_url: public_url.trim_end_matches('/').to_owned(),
            publisher,
        })
    }

    /// Where the public reaches rave, without a trailing `/`.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The shop's name, as feeds and review requests give it.
    pub fn publisher(&self) -> &str {
        &self.publisher
    }

    /// Where a feed names photos: `configured` (the server's links) when
    /// they are absolute (a public URL, a bucket, a CDN), else rave's own
    /// `/media` under the public URL, since a feed is read elsewhere.
    pub fn media_links(&self, configured: &MediaLinks) -> MediaLinks {
        match configured.origin() {
            Some(_) => configured.clone(),
            None => MediaLinks::served_at(&self.public_url),
        }
    }

    /// rave's page of a product.
    pub(super) fn product_url(&self, product: &rave_comments::ProductId) -> String {
        format!("{}/products/{product}", self.public_url)
    }

    /// A comment's anchor on its product's page (`id="comment-…"`).
    pub(super) fn comment_url(&self, comment: &rave_comments::Comment) -> String {
        format!(
            "{}#comment-{}",
            self.product_url(&comment.product_id),
            comment.id
        )
    }
}

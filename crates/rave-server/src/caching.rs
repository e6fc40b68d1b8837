//! HTTP caching for a crawled, CDN-fronted front end: `ETag`s derived from
//! what a response shows, `Cache-Control` by kind of page, and 304s.
//!
//! Everything of a product a response shows changes its revision (the
//! aggregator raises it with every change to a visible comment of the
//! product; a new product record has a new one), so the `ETag` of a
//! product's listing, statistics or page is computed from one request for
//! two items (the product's statistics and record), and `If-None-Match` is
//! answered without reading a comment. The leaderboard spans products: its `ETag` is the digest of the
//! body. The revision follows the aggregator, so a page can be revalidated
//! as unchanged for the aggregator's lag (tens of milliseconds) after a
//! write.
//!
//! The `ETag` is a digest of the revision, the route and the query; weak
//! `If-None-Match` comparison answers 304. `Cache-Control` follows the kind
//! of page (`CachePolicy`). A middleware does this for the JSON listings,
//! statistics, product records and the leaderboard; the page handlers do it
//! themselves. Both keep what they answer by its tag (`answers`) unless the
//! request says `Cache-Control: no-cache` (`wants_fresh`).

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// How long caches may keep each kind of response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// First pages of listings, product pages and fragments; statistics;
    /// the leaderboard: what changes with every new comment.
    pub first_pages: Duration,
    /// Keyset pages of older comments, which change only when one of their
    /// comments does.
    pub older_pages: Duration,
}

impl Default for CachePolicy {
    fn default() -> CachePolicy {
        CachePolicy {
            first_pages: Duration::from_secs(10),
            older_pages: Duration::from_secs(300),
        }
    }
}

impl CachePolicy {
    /// The `Cache-Control` of a response; `older` for keyset pages.
    pub fn cache_control(&self, older: bool) -> HeaderValue {
        let age = if older {
            self.older_pages
        } else {
            self.first_pages
        };
        HeaderValue::from_str(&format!("public, max-age={}", age.as_secs()))
            .unwrap_or(HeaderValue::from_static("no-cache"))
    }
}

/// A strong entity tag: the digest of what names the representation.
pub(crate) fn entity_tag(parts: &[&[u8]]) -> HeaderValue {
    let mut digest = Sha256::new();
    // Another release may render the same data differently.
    digest.update(env!("CARGO_PKG_VERSION").as_bytes());
    for part in parts {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part);
    }
    let tag = format!("\"{}\"", hex::encode(&digest.finalize()[..16]));
    HeaderValue::from_str(&tag).unwrap_or(HeaderValue::from_static("\"\""))
}

/// Whether `If-None-Match` names `tag` (weak comparison, as RFC 9110 asks
/// for this header), or is `*`.
pub(crate) fn not_modified(headers: &HeaderMap, tag: &HeaderValue) -> bool {
    let tag = tag.as_bytes();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate).as_bytes() == tag
        })
}

/// Whether the request asks not to be answered from what was kept
/// (`Cache-Control: no-cache`, RFC 9111 §5.2.1.4): the answer is then read
/// afresh, as on a first request, and kept for the next.
pub(crate) fn wants_fresh(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|directive| directive.trim().eq_ignore_ascii_case("no-cache"))
}

/// Adds the validator and the freshness to a response.
pub(crate) fn stamp(response: &mut Response, tag: HeaderValue, cache_control: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ETAG, tag);
    headers.insert(header::CACHE_CONTROL, cache_control);
}

/// A 304 carrying what the 200 would have: validator and freshness.
pub(crate) fn not_modified_response(tag: HeaderValue, cache_control: HeaderValue) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    stamp(&mut response, tag, cache_control);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn if_none_match(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_stars() {
        let tag = entity_tag(&[b"a"]);
        let text = tag.to_str().unwrap().to_owned();
        assert!(not_modified(&if_none_match(&text), &tag));
        assert!(not_modified(&if_none_match(&format!("W/{text}")), &tag));
        assert!(not_modified(
            &if_none_match(&format!("\"x\", {text}")),
            &tag
        ));
        assert!(not_modified(&if_none_match("*"), &tag));
        assert!(!not_modified(&if_none_match("\"x\""), &tag));
        assert!(!not_modified(&HeaderMap::new(), &tag));
    }

    #[test]
    fn no_cache_asks_for_a_fresh_answer() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_str(value).unwrap());
            wants_fresh(&headers)
        };
        assert!(with("no-cache"));
        assert!(with("max-age=0, No-Cache"));
        assert!(!with("max-age=0"));
        assert!(!with("no-cache-please"));
        assert!(!wants_fresh(&HeaderMap::new()));
    }

    #[test]
    fn entity_tags_tell_their_parts_apart() {
        assert_ne!(entity_tag(&[b"ab", b"c"]), entity_tag(&[b"a", b"bc"]));
        assert_eq!(entity_tag(&[b"a"]), entity_tag(&[b"a"]));
    }
}

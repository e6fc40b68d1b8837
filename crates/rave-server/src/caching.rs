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

use std::fmt::Write;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::answers::Answer;

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
pub fn entity_tag(parts: &[&[u8]]) -> HeaderValue {
    let mut digest = Sha256::new();
    // Another release may render the same data differently.
    digest.update(env!("CARGO_PKG_VERSION").as_bytes());
    for part in parts {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part);
    }
    let mut tag = String::with_capacity(34);
    tag.push('"');
    for byte in &digest.finalize()[..16] {
        let _ = write!(tag, "{byte:02x}");
    }
    tag.push('"');
    HeaderValue::from_str(&tag).unwrap_or(HeaderValue::from_static("\"\""))
}

/// Whether `If-None-Match` names `tag` (weak comparison, as RFC 9110 asks
/// for this header), or is `*`.
pub fn not_modified(headers: &HeaderMap, tag: &HeaderValue) -> bool {
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

/// Adds the validator and the freshness to a response.
pub fn stamp(response: &mut Response, tag: HeaderValue, cache_control: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ETAG, tag);
    headers.insert(header::CACHE_CONTROL, cache_control);
}

/// A 304 carrying what the 200 would have: validator and freshness.
pub fn not_modified_response(tag: HeaderValue, cache_control: HeaderValue) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    stamp(&mut response, tag, cache_control);
    response
}

/// The JSON routes caches may keep.
enum Cacheable<'a> {
    /// A product's listing (`older` with a cursor) or statistics.
    Product {
        product: &'a str,
        kind: &'static str,
        older: bool,
    },
    Leaderboard,
}

fn cacheable<'a>(path: &'a str, query: &str) -> Option<Cacheable<'a>> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    let has = |name: &str, value: Option<&str>| {
        pairs
            .iter()
            .any(|(n, v)| n == name && value.is_none_or(|value| v == value))
    };
    match segments.as_slice() {
        ["v1", "products", product, "comments"] if !has("explain", Some("true")) => {
            Some(Cacheable::Product {
                product,
                kind: "comments",
                older: has("cursor", None),
            })
        }
        ["v1", "products", product, "stats"] => Some(Cacheable::Product {
            product,
            kind: "stats",
            older: false,
        }),
        ["v1", "products", product] => Some(Cacheable::Product {
            product,
            kind: "product",
            older: false,
        }),
        ["v1", "leaderboard"] => Some(Cacheable::Leaderboard),
        _ => None,
    }
}

/// Largest body the leaderboard's digest reads (100 rows are far less).
const MAX_DIGESTED_BODY: usize = 1 << 20;
/// Largest body read to be kept (a listing page of 100 of the largest
/// comments is far less).
const MAX_KEPT_BODY: usize = 16 << 20;

/// Validators, freshness and 304s for the JSON listings, statistics and the
/// leaderboard, around their handlers (the HTML pages do their own).
pub async fn json_routes(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::GET {
        return next.run(request).await;
    }
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    let Some(route) = cacheable(&path, &query) else {
        return next.run(request).await;
    };
    let headers = request.headers().clone();
    let policy = state.cache_policy;
    match route {
        Cacheable::Product {
            product,
            kind,
            older,
        } => {
            // Taken before anything the answer shows is read (`answers`).
            let generation = state.answers.generation();
            // An id the domain refuses gets its error from the handler.
            let Ok(revision) = state.comments.product_revision(product).await else {
                return next.run(request).await;
            };
            let tag = entity_tag(&[
                kind.as_bytes(),
                revision.as_bytes(),
                path.as_bytes(),
                query.as_bytes(),
            ]);
            let cache_control = policy.cache_control(older);
            if not_modified(&headers, &tag) {
                return not_modified_response(tag, cache_control);
            }
            if let Some(answer) = state.answers.get(&tag, generation) {
                state.metrics.answer_reused(kind);
                let mut response = Response::new(Body::from(answer.body));
                *response.headers_mut() = answer.headers;
                stamp(&mut response, tag, cache_control);
                return response;
            }
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                return response;
            }
            let (parts, body) = response.into_parts();
            let Ok(body) = axum::body::to_bytes(body, MAX_KEPT_BODY).await else {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            };
            state.answers.keep(
                tag.clone(),
                generation,
                Answer {
                    headers: parts.headers.clone(),
                    body: body.clone(),
                },
            );
            let mut response = Response::from_parts(parts, Body::from(body));
            stamp(&mut response, tag, cache_control);
            response
        }
        Cacheable::Leaderboard => {
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                return response;
            }
            let (mut parts, body) = response.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, MAX_DIGESTED_BODY).await else {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            };
            let tag = entity_tag(&[b"leaderboard", &bytes]);
            let cache_control = policy.cache_control(false);
            if not_modified(&headers, &tag) {
                return not_modified_response(tag, cache_control);
            }
            parts.headers.insert(header::ETAG, tag);
            parts.headers.insert(header::CACHE_CONTROL, cache_control);
            Response::from_parts(parts, Body::from(bytes))
        }
    }
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
    fn entity_tags_tell_their_parts_apart() {
        assert_ne!(entity_tag(&[b"ab", b"c"]), entity_tag(&[b"a", b"bc"]));
        assert_eq!(entity_tag(&[b"a"]), entity_tag(&[b"a"]));
    }

    #[test]
    fn only_public_reads_are_cacheable() {
        let older = |path, query| match cacheable(path, query) {
            Some(Cacheable::Product { older, .. }) => Some(older),
            Some(Cacheable::Leaderboard) => Some(false),
            None => None,
        };
        assert_eq!(older("/v1/products/p/comments", ""), Some(false));
        assert_eq!(older("/v1/products/p/comments", "cursor=x"), Some(true));
        assert_eq!(older("/v1/products/p/comments", "explain=true"), None);
        assert_eq!(older("/v1/products/p/stats", "language=en"), Some(false));
        assert_eq!(older("/v1/leaderboard", ""), Some(false));
        assert_eq!(older("/v1/comments/x", ""), None);
        assert_eq!(older("/v1/moderation/queue", ""), None);
    }
}

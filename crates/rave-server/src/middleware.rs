//! The layers around every request, in the order the router stacks them
//! (the last one listed in `router` runs first): the client's address, the
//! request metrics, the answers' generations, and the JSON routes' caching.
//! Each is an `axum::middleware::from_fn_with_state` function over the
//! shared state; what they keep lives in their own modules (`client_addr`,
//! `metrics`, `answers`, `caching`), which know nothing of the state.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::answers::Answer;
use crate::caching::{entity_tag, not_modified, not_modified_response, stamp, wants_fresh};
use crate::client_addr::ClientAddr;
use crate::metrics::method_label;
use crate::page_policy::PagePolicy;
use crate::state::AppState;

/// Middleware: works out the client once, for the log line and the rate
/// limit. A server run without connection info has no client address.
pub(crate) async fn resolve_client(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let client = state.trusted_proxies.client(peer.ip(), request.headers());
        request.extensions_mut().insert(ClientAddr(client));
    }
    next.run(request).await
}

/// Route label of a request no route matched, whatever its path.
const UNMATCHED_ROUTE: &str = "unmatched";

/// Middleware: counts and times every request under its route template.
pub(crate) async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    // A route template, never the path itself: paths are the client's to choose.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED_ROUTE.to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    state.metrics.observe(
        method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// Middleware: a request that may write starts a new generation once it
/// has answered, whatever it answered (a failed write may have written
/// part of what it meant to, as a moderation hold does).
pub(crate) async fn after_writes(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let reads_only = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let response = next.run(request).await;
    if !reads_only {
        state.answers.written();
    }
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
pub(crate) async fn json_routes(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
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
            if !wants_fresh(&headers)
                && let Some(answer) = state.answers.get(&tag, generation)
            {
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

/// Middleware: every HTML answer gets the pages' security headers
/// (`page_policy`), unless its handler set its own policy.
pub(crate) async fn page_headers(
    State(policy): State<Arc<PagePolicy>>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    let headers = response.headers_mut();
    if html && !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            policy.content_security_policy.clone(),
        );
        if let Some(frame_options) = &policy.frame_options {
            headers.insert(header::X_FRAME_OPTIONS, frame_options.clone());
        }
        headers.insert(header::REFERRER_POLICY, policy.referrer_policy.clone());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

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

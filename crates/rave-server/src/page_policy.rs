//! The security headers of every HTML answer: a strict
//! `Content-Security-Policy`, where the page may be framed, and how much of
//! its address other sites learn.
//!
//! The pages render thousands of strangers' words, and the web page holds
//! the admin token while a moderator works. Escaping keeps user text inert
//! (`pages::html`, `textContent` in the web page); the policy is what stands
//! behind the escaping: no script runs but rave's own (the web page's one
//! inline script, allowed by its hash, and `/embed.js`), no inline handler,
//! no plugin, no `<base>`, and forms post only to rave. Styles are the
//! pages' own `<style>` blocks, allowed by their hashes. JSON-LD blocks are
//! data, not scripts, and need no allowance. Images come from rave itself
//! (photos under `/media`), `data:` URLs, `blob:` URLs (the web page's
//! preview of the photos a shopper is about to post, from object URLs) and
//! the bucket or CDN photos are served from when one is named.
//!
//! Framing is refused (`frame-ancestors 'none'`, and `X-Frame-Options:
//! DENY` for older browsers) unless the operator names the shops that may
//! frame rave's pages (`--frame-ancestor`). The embed does not frame: it
//! fetches the fragment into the shop's own page, where the shop's policy
//! applies (docs/pages-and-embedding.md says what a shop adds).

use axum::http::HeaderValue;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::cors::AllowedOrigin;

/// The headers an HTML answer carries.
#[derive(Debug, Clone)]
pub(crate) struct PagePolicy {
    pub(crate) content_security_policy: HeaderValue,
    /// `None` when some origins may frame the pages (a list cannot be said
    /// in `X-Frame-Options`; `frame-ancestors` says it).
    pub(crate) frame_options: Option<HeaderValue>,
    pub(crate) referrer_policy: HeaderValue,
}

impl PagePolicy {
    /// The policy for pages whose inline scripts and styles are `scripts`
    /// and `styles` (their exact text), framed by `frame_ancestors` only,
    /// showing photos from `media_origin` too when it is another origin.
    pub(crate) fn new(
        scripts: &[&str],
        styles: &[&str],
        frame_ancestors: &[AllowedOrigin],
        media_origin: Option<&str>,
    ) -> PagePolicy {
        let hashes = |sources: &[&str]| {
            sources
                .iter()
                .map(|source| format!(" 'sha256-{}'", sha256_base64(source)))
                .collect::<String>()
        };
        let ancestors = match frame_ancestors.is_empty() {
            true => " 'none'".to_owned(),
            false => frame_ancestors
                .iter()
                .map(|origin| format!(" {origin}"))
                .collect(),
        };
        let media = media_origin
            .map(|origin| format!(" {origin}"))
            .unwrap_or_default();
        let policy = format!(
            "default-src 'self'; script-src 'self'{}; style-src 'self'{}; img-src 'self' data: blob:{media}; \
             object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors{ancestors}",
            hashes(scripts),
            hashes(styles),
        );
        PagePolicy {
            content_security_policy: HeaderValue::from_str(&policy)
                .expect("hashes and origins are header-safe"),
            frame_options: frame_ancestors
                .is_empty()
                .then(|| HeaderValue::from_static("DENY")),
            referrer_policy: HeaderValue::from_static("same-origin"),
        }
    }
}

fn sha256_base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

/// The text of each `<tag>…</tag>` element of `html`, as a policy hashes it.
pub(crate) fn inline_elements<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        found.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_exactly_the_hashed_inline_code() {
        let policy = PagePolicy::new(&["alert(1)"], &["b{}"], &[], None);
        let csp = policy.content_security_policy.to_str().unwrap();
        // sha256("alert(1)"), base64, as browsers compute it.
        assert!(
            csp.contains("script-src 'self' 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"),
            "{csp}"
        );
        assert!(csp.contains("object-src 'none'") && csp.contains("base-uri 'none'"));
        assert!(csp.ends_with("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"));
        assert!(csp.contains("img-src 'self' data: blob:;"), "{csp}");
        assert_eq!(policy.frame_options.unwrap(), "DENY");
    }

    #[test]
    fn photos_from_a_bucket_or_cdn_may_show() {
        let policy = PagePolicy::new(&[], &[], &[], Some("https://cdn.shop.example"));
        let csp = policy.content_security_policy.to_str().unwrap();
        assert!(
            csp.contains("img-src 'self' data: blob: https://cdn.shop.example;"),
            "{csp}"
        );
    }

    #[test]
    fn named_shops_may_frame_the_pages() {
        let shop: AllowedOrigin = "https://shop.example".parse().unwrap();
        let policy = PagePolicy::new(&[], &[], &[shop], None);
        let csp = policy.content_security_policy.to_str().unwrap();
        assert!(
            csp.ends_with("frame-ancestors https://shop.example"),
            "{csp}"
        );
        assert!(policy.frame_options.is_none());
    }

    #[test]
    fn inline_elements_are_found_whole() {
        let html = "<p><script>one()</script><style>a{}</style><script>two()</script>";
        assert_eq!(inline_elements(html, "script"), ["one()", "two()"]);
        assert_eq!(inline_elements(html, "style"), ["a{}"]);
    }
}

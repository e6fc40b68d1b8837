//! Cross-origin use of the public API (CORS), for the embed on shops'
//! pages: only the origins the operator names (`--allowed-origin`), none by
//! default. `PUT` and `DELETE` are for the embed's helpful votes.
//! Credentials and the `Authorization` header are never allowed across
//! origins, so admin endpoints stay same-origin.

use std::str::FromStr;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// A web origin: `http` or `https`, a host, an optional port, nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedOrigin(HeaderValue);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an origin: expected scheme://host[:port], e.g. https://shop.example")]
pub struct InvalidOrigin(String);

impl std::fmt::Display for AllowedOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Built from a checked ASCII origin, so always text.
        f.write_str(self.0.to_str().unwrap_or_default())
    }
}

impl FromStr for AllowedOrigin {
    type Err = InvalidOrigin;

    fn from_str(text: &str) -> Result<AllowedOrigin, InvalidOrigin> {
        let invalid = || InvalidOrigin(text.to_owned());
        // Browsers send origins in lowercase.
        let origin = text.to_ascii_lowercase();
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"))
            .ok_or_else(invalid)?;
        let well_formed = !authority.is_empty()
            && authority
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !well_formed {
            return Err(invalid());
        }
        HeaderValue::from_str(&origin)
            .map(AllowedOrigin)
            .map_err(|_| invalid())
    }
}

/// How long a browser may remember a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// The CORS layer: answers preflights, and adds the allow headers (and
/// `Vary: Origin`) to responses for allowed origins.
pub(crate) fn layer(origins: &[AllowedOrigin]) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().map(|o| o.0.clone())))
        .allow_methods([
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::DELETE,
        ])
        .allow_headers([
            header::CONTENT_TYPE,
            header::IF_NONE_MATCH,
            HeaderName::from_static("idempotency-key"),
        ])
        .expose_headers([header::ETAG, header::LOCATION, header::RETRY_AFTER])
        .max_age(PREFLIGHT_MAX_AGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        for good in [
            "https://shop.example",
            "http://127.0.0.1:8080",
            "HTTPS://Shop.Example",
        ] {
            assert!(good.parse::<AllowedOrigin>().is_ok(), "{good}");
        }
        assert_eq!(
            "HTTPS://Shop.Example".parse::<AllowedOrigin>().unwrap().0,
            "https://shop.example"
        );
        for bad in [
            "shop.example",
            "https://",
            "https://shop.example/",
            "https://shop.example/path",
            "*",
            "ftp://shop.example",
        ] {
            assert!(bad.parse::<AllowedOrigin>().is_err(), "{bad}");
        }
    }
}

//! The links a request carries: to the review form of its order (expiring)
//! and to one-click unsubscribe. A link is the proof: it names the order
//! and is signed with HMAC-SHA256 under the server's key, so a forged or
//! altered link is refused, and a review posted through it is a verified
//! purchase of that order. No link carries an address or a name: they end
//! up in access logs.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::{RequestsError, Result};

/// How long a review link works after the request is made.
pub const REVIEW_LINK_LIFETIME_MS: u64 = 60 * 24 * 60 * 60 * 1000;

const REVIEW: &str = "r";
const UNSUBSCRIBE: &str = "u";

/// Makes and checks links under one key (servers sharing a store share it).
#[derive(Clone)]
pub struct Links {
    key: [u8; 32],
    base_url: String,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Links({})", self.base_url)
    }
}

impl Links {
    /// Links under `base_url` (the service's public URL), signed with a key
    /// derived from the server's secret (the one that signs cursors: servers
    /// sharing a store share it), so that no token of one kind is ever
    /// valid as another.
    pub fn from_server_secret(secret: &[u8; 32], base_url: &str) -> Links {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC takes any key");
        mac.update(b"rave review-request links");
        Links::new(mac.finalize().into_bytes().into(), base_url)
    }

    /// Links under `base_url` (the service's public URL, without a
    /// trailing slash), signed with `key`.
    pub fn new(key: [u8; 32], base_url: &str) -> Links {
        Links {
            key,
            base_url: base_url.trim_end_matches('/').to_owned(),
        }
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(payload.as_bytes());
        mac
    }

    fn sign(&self, payload: String) -> String {
        let tag = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{tag}")
    }

    /// The payload of `token` if its signature holds.
    fn open<'a>(&self, token: &'a str) -> Result<&'a str> {
        let (payload, tag) = token
            .rsplit_once('.')
            .ok_or(RequestsError::BadLink("it is not a link rave made"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| RequestsError::BadLink("it is not a link rave made"))?;
        self.mac(payload)
            .verify_slice(&tag)
            .map_err(|_| RequestsError::BadLink("its signature does not hold"))?;
        Ok(payload)
    }

    pub fn review_token(&self, order_id: &str, expires_at_ms: u64) -> String {
        self.sign(format!(
            "{REVIEW}.{}.{expires_at_ms}",
            URL_SAFE_NO_PAD.encode(order_id)
        ))
    }

    pub fn review_url(&self, order_id: &str, expires_at_ms: u64) -> String {
        format!(
            "{}/review/{}",
            self.base_url,
            self.review_token(order_id, expires_at_ms)
        )
    }

    /// The order a review link names, if it is genuine and not expired.
    pub fn open_review(&self, token: &str, now_ms: u64) -> Result<String> {
        let payload = self.open(token)?;
        let mut parts = payload.split('.');
        let (Some(REVIEW), Some(order), Some(expires), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(RequestsError::BadLink("it is not a review link"));
        };
        let expires: u64 = expires
            .parse()
            .map_err(|_| RequestsError::BadLink("it is not a review link"))?;
        if now_ms >= expires {
            return Err(RequestsError::BadLink("it has expired"));
        }
        decode_order(order)
    }

    pub fn unsubscribe_token(&self, order_id: &str) -> String {
        self.sign(format!(
            "{UNSUBSCRIBE}.{}",
            URL_SAFE_NO_PAD.encode(order_id)
        ))
    }

    pub fn unsubscribe_url(&self, order_id: &str) -> String {
        format!(
            "{}/unsubscribe/{}",
            self.base_url,
            self.unsubscribe_token(order_id)
        )
    }

    /// The order whose address an unsubscribe link stands for.
    pub fn open_unsubscribe(&self, token: &str) -> Result<String> {
        let payload = self.open(token)?;
        match payload.split_once('.') {
            Some((UNSUBSCRIBE, order)) => decode_order(order),
            _ => Err(RequestsError::BadLink("it is not an unsubscribe link")),
        }
    }
}

fn decode_order(encoded: &str) -> Result<String> {
    URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or(RequestsError::BadLink("it names no order"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> Links {
        Links::new([7; 32], "https://reviews.example/")
    }

    #[test]
    fn a_review_link_names_its_order_until_it_expires() {
        let links = links();
        let url = links.review_url("A#1/ü", 2_000);
        assert!(url.starts_with("https://reviews.example/review/"), "{url}");
        let token = url.rsplit('/').next().unwrap();
        assert_eq!(links.open_review(token, 1_999).unwrap(), "A#1/ü");
        assert!(matches!(
            links.open_review(token, 2_000),
            Err(RequestsError::BadLink("it has expired"))
        ));
    }

    #[test]
    fn forged_altered_and_crossed_links_are_refused() {
        let links = links();
        let token = links.review_token("A-1", u64::MAX);
        let other_key = Links::new([8; 32], "https://reviews.example");
        assert!(other_key.open_review(&token, 0).is_err());
        let altered = token.replacen(
            &URL_SAFE_NO_PAD.encode("A-1"),
            &URL_SAFE_NO_PAD.encode("A-2"),
            1,
        );
        assert!(links.open_review(&altered, 0).is_err());
        let longer = token.replacen(&u64::MAX.to_string(), "99999999999999999", 1);
        assert!(links.open_review(&longer, 0).is_err());
        for junk in ["", ".", "r.x.1", "abc.def"] {
            assert!(links.open_review(junk, 0).is_err(), "{junk}");
        }
        let unsubscribe = links.unsubscribe_token("A-1");
        assert_eq!(links.open_unsubscribe(&unsubscribe).unwrap(), "A-1");
        assert!(links.open_review(&unsubscribe, 0).is_err());
        assert!(links.open_unsubscribe(&token).is_err());
    }
}

//! The Standard Webhooks signature: receivers verify rave's deliveries with
//! the convention's existing libraries.
//!
//! A secret is `whsec_` followed by the base64 of its key bytes. A message is
//! signed over `"<webhook-id>.<webhook-timestamp>.<body>"` with HMAC-SHA256,
//! and the `webhook-signature` header carries `v1,<base64 of the MAC>`.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

const PREFIX: &str = "whsec_";
/// 24 random bytes: the size the convention's own tooling generates.
const KEY_BYTES: usize = 24;

/// An endpoint's signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("a webhook secret starts with whsec_ followed by base64")]
    Malformed,
    #[error("no randomness available for a webhook secret: {0}")]
    Randomness(String),
}

impl Secret {
    pub fn generate() -> Result<Secret, SecretError> {
        let mut key = vec![0u8; KEY_BYTES];
        getrandom::fill(&mut key).map_err(|e| SecretError::Randomness(e.to_string()))?;
        Ok(Secret(key))
    }

    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let encoded = text.strip_prefix(PREFIX).ok_or(SecretError::Malformed)?;
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| SecretError::Malformed)?;
        if key.is_empty() {
            return Err(SecretError::Malformed);
        }
        Ok(Secret(key))
    }

    /// The `webhook-signature` header's value for one message.
    pub fn sign(&self, message_id: &str, timestamp: i64, body: &[u8]) -> String {
        // HMAC accepts a key of any length; the key is never empty.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(message_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `whsec_…` form, which is what an endpoint's owner is shown once.
impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", STANDARD.encode(&self.0))
    }
}

/// Never prints the key.
impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of the Standard Webhooks specification's libraries.
    #[test]
    fn signs_the_conventions_test_vector() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            secret.sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_generated_secret_round_trips_and_differs_each_time() {
        let secret = Secret::generate().unwrap();
        let text = secret.to_string();
        assert!(text.starts_with("whsec_"));
        assert_eq!(Secret::parse(&text).unwrap(), secret);
        assert_ne!(Secret::generate().unwrap(), secret);
    }

    #[test]
    fn malformed_secrets_are_refused() {
        for text in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_!!!"] {
            assert_eq!(Secret::parse(text), Err(SecretError::Malformed), "{text}");
        }
    }

    #[test]
    fn the_signature_covers_id_timestamp_and_body() {
        let secret = Secret::generate().unwrap();
        let base = secret.sign("msg_1", 10, b"{}");
        assert_ne!(secret.sign("msg_2", 10, b"{}"), base);
        assert_ne!(secret.sign("msg_1", 11, b"{}"), base);
        assert_ne!(secret.sign("msg_1", 10, b"[]"), base);
    }
}

//! Access tokens: what a caller presents, and what is kept of it.
//!
//! A token reads `rave_<id>_<secret>`: the id (a ULID) finds its record with
//! one read, the secret (32 random bytes, base64url) proves the caller has
//! it. Only the SHA-256 digest of the whole token is stored, so the
//! table's contents never let anyone call rave, and the token is shown once,
//! when it is created. The digest is compared in constant time.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;
use ulid::Ulid;

use crate::error::{AccessError, Result};
use crate::scope::Scopes;

const PREFIX: &str = "rave_";
const SECRET_BYTES: usize = 32;
/// The longest token name accepted.
pub const MAX_NAME_CHARS: usize = 64;

/// A token's record: everything but the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub id: String,
    /// Who or what holds it ("support-anna", "merchant-center"): the name the
    /// audit trail records.
    pub name: String,
    pub scopes: Scopes,
    pub created_at_ms: u64,
    /// The name of the caller that created it.
    pub created_by: String,
}

/// A token just created: its record and, this once, the token itself.
#[derive(Debug)]
pub struct IssuedToken {
    pub record: AccessToken,
    pub token: Secret,
}

/// The token string, kept out of `Debug` output and logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A presented string split into the id it names; `None` for a string that
/// is not shaped like a rave token (it may still be `--admin-token`).
pub(crate) fn id_of(presented: &str) -> Option<&str> {
    let rest = presented.strip_prefix(PREFIX)?;
    let (id, secret) = rest.split_at_checked(26)?;
    let secret = secret.strip_prefix('_')?;
    (Ulid::from_string(id).is_ok() && !secret.is_empty()).then_some(id)
}

pub(crate) fn generate(id: &str) -> Result<Secret> {
    let mut secret = [0u8; SECRET_BYTES];
    getrandom::fill(&mut secret)
        .map_err(|e| AccessError::Internal(format!("no randomness: {e}")))?;
    Ok(Secret(format!(
        "{PREFIX}{id}_{}",
        URL_SAFE_NO_PAD.encode(secret)
    )))
}

pub(crate) type TokenDigest = [u8; 32];

pub(crate) fn digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

pub(crate) fn matches(stored: &TokenDigest, presented: &str) -> bool {
    bool::from(stored.ct_eq(&digest(presented)))
}

/// A name is what the audit trail shows: printable, 1-64 characters.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(AccessError::invalid(
            "name",
            format!("must be 1-{MAX_NAME_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(AccessError::invalid(
            "name",
            "must not contain control characters",
        ));
    }
    if name != name.trim() {
        return Err(AccessError::invalid(
            "name",
            "must not start or end with white space",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_names_its_id_and_matches_only_itself() {
        let id = Ulid::from_parts(1_700_000_000_000, 42).to_string();
        let token = generate(&id).unwrap();
        assert_eq!(id_of(token.expose()), Some(id.as_str()));
        let stored = digest(token.expose());
        assert!(matches(&stored, token.expose()));
        let other = generate(&id).unwrap();
        assert_ne!(token, other);
        assert!(!matches(&stored, other.expose()));
        assert!(!format!("{token:?}").contains(token.expose()));
    }

    #[test]
    fn strings_not_shaped_like_tokens_name_no_id() {
        let id = Ulid::from_parts(1_700_000_000_000, 42).to_string();
        for presented in [
            "",
            "rave_",
            "an-admin-token",
            &format!("rave_{id}"),
            &format!("rave_{id}_"),
            &format!("rave_{id}x"),
            "rave_not-a-ulid-at-all-but-26_secret",
        ] {
            assert_eq!(id_of(presented), None, "{presented}");
        }
    }

    #[test]
    fn names_are_printable_and_short() {
        assert!(check_name("support-anna").is_ok());
        assert!(check_name(&"n".repeat(64)).is_ok());
        for bad in ["", " lead", "trail ", "tab\there", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}

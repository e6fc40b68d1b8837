//! What a token may do. Scopes are coarse on purpose: each names one job a
//! shop hands to one kind of person or system (support staff moderate,
//! Merchant Center reads the feed), and `admin` holds every other scope.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One permission a token can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Approve, reject, edit and delete comments; read the moderation queue.
    Moderate,
    /// Set and remove the merchant's replies.
    Reply,
    /// Read and erase an author's data.
    Erase,
    /// Import reviews.
    Import,
    /// Read the product-review feeds.
    Feed,
    /// Manage webhook endpoints and deliveries.
    Webhooks,
    /// Everything: products, tokens, the audit trail, operations, and every
    /// scope above.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 7] = [
        Scope::Moderate,
        Scope::Reply,
        Scope::Erase,
        Scope::Import,
        Scope::Feed,
        Scope::Webhooks,
        Scope::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Moderate => "moderate",
            Scope::Reply => "reply",
            Scope::Erase => "erase",
            Scope::Import => "import",
            Scope::Feed => "feed",
            Scope::Webhooks => "webhooks",
            Scope::Admin => "admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scope name that is not one of [`Scope::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope {0:?}: one of moderate, reply, erase, import, feed, webhooks, admin")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;

    fn from_str(name: &str) -> Result<Scope, UnknownScope> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == name)
            .ok_or_else(|| UnknownScope(name.to_owned()))
    }
}

/// The scopes one token holds: sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scopes(Vec<Scope>);

impl Scopes {
    pub fn new(scopes: impl IntoIterator<Item = Scope>) -> Scopes {
        let mut scopes: Vec<Scope> = scopes.into_iter().collect();
        scopes.sort();
        scopes.dedup();
        Scopes(scopes)
    }

    /// Every scope: what `--admin-token` grants.
    pub fn everything() -> Scopes {
        Scopes::new([Scope::Admin])
    }

    /// Whether these scopes allow what `needed` guards: `admin` allows all.
    pub fn allow(&self, needed: Scope) -> bool {
        self.0.contains(&needed) || self.0.contains(&Scope::Admin)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scope_reads_back_from_its_name() {
        for scope in Scope::ALL {
            assert_eq!(scope.as_str().parse::<Scope>(), Ok(scope));
        }
        assert!("moderator".parse::<Scope>().is_err());
        assert!("".parse::<Scope>().is_err());
    }

    #[test]
    fn admin_allows_every_scope_and_others_only_their_own() {
        let admin = Scopes::everything();
        let support = Scopes::new([Scope::Reply, Scope::Moderate, Scope::Moderate]);
        assert_eq!(support.iter().count(), 2);
        for scope in Scope::ALL {
            assert!(admin.allow(scope));
            assert_eq!(
                support.allow(scope),
                matches!(scope, Scope::Moderate | Scope::Reply)
            );
        }
        assert!(!Scopes::default().allow(Scope::Feed));
    }
}

//! The audit trail: who did what to which comment, author, product or
//! setting, when, and from which client. Entries are only ever appended;
//! nothing in rave's HTTP API edits or deletes one, and each expires after
//! the retention period the operator sets.

use std::net::IpAddr;

use crate::error::{AccessError, Result};

/// What an action was done to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `comment`, `author`, `product`, `webhook`, `token`, ...
    pub kind: String,
    pub id: String,
}

impl Target {
    pub fn new(kind: impl Into<String>, id: impl Into<String>) -> Target {
        Target {
            kind: kind.into(),
            id: id.into(),
        }
    }
}

/// Who acted: the name of the token they called with (and its id, unless
/// it was the operator's `--admin-token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub token_id: Option<String>,
}

/// An action to append to the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    pub actor: Actor,
    /// `noun.verb`: `comment.approve`, `author.erase`, `token.create`, ...
    pub action: String,
    pub target: Target,
    pub client: Option<IpAddr>,
    /// What changed, briefly (the fields an edit set, the scopes a token
    /// got); never personal data beyond the target's id.
    pub detail: Option<String>,
}

/// An entry of the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// A ULID: entries sort by it in the order they were written.
    pub id: String,
    pub at_ms: u64,
    pub actor: Actor,
    pub action: String,
    pub target: Target,
    pub client: Option<IpAddr>,
    pub detail: Option<String>,
}

/// Which entries to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only actions on this target (read from an index of targets).
    pub target: Option<Target>,
    /// Only this actor's actions (by token name).
    pub actor: Option<String>,
    /// Only this action.
    pub action: Option<String>,
    /// Only entries written at or after this time.
    pub since_ms: Option<u64>,
    /// Only entries written before this time.
    pub until_ms: Option<u64>,
}

/// A page of the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPage {
    pub entries: Vec<Entry>,
    /// Pass back as `after` for the next page; `None` at the end.
    pub next: Option<String>,
}

/// The longest action name and target id recorded.
const MAX_FIELD_CHARS: usize = 256;

impl NewEntry {
    pub(crate) fn check(&self) -> Result<()> {
        let fields = [
            ("action", self.action.as_str()),
            ("target.kind", self.target.kind.as_str()),
            ("target.id", self.target.id.as_str()),
        ];
        for (field, value) in fields {
            if value.is_empty() || value.chars().count() > MAX_FIELD_CHARS {
                return Err(AccessError::invalid(
                    field,
                    format!("must be 1-{MAX_FIELD_CHARS} characters"),
                ));
            }
        }
        Ok(())
    }
}

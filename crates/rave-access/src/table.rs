//! The access table's layout: the only module of this crate that names an
//! attribute or builds a key.
//!
//! Tokens and the audit trail live in a table of their own
//! (`<table>-access`), not in the comments table: their writes never wake
//! the comments table's stream consumers, and the comments table's layout
//! stays rave-comments' alone.
//!
//! | item        | PK       | SK              | index keys                                   |
//! |-------------|----------|-----------------|----------------------------------------------|
//! | token       | `TOKENS` | `TOKEN#<id>`    | none                                         |
//! | audit entry | `AUDIT`  | `<entry id>`    | `TARGETPK` = `<kind>#<id>`, `TARGETSK` = entry id (`byTarget`) |
//!
//! Every token is in one partition (a shop has a handful); a call with a
//! token reads its item by key. Audit entries share one partition too,
//! ordered by their ULIDs: admin actions come at human speed, far below
//! what one partition takes, and a time range is a range of ids.
//! `byTarget` answers "what happened to this comment" without reading the
//! rest. Entries expire (`expires_at`, Time to Live) after the retention.

use std::collections::BTreeSet;
use std::net::IpAddr;

use rave_store::{
    AttributeValue, GlobalSecondaryIndex, Item, KeyAttribute, KeyCondition, KeySchema, KeyType,
    Number, Projection, SortOp, TableDefinition,
};

use crate::audit::{Actor, Entry, Target};
use crate::error::AccessError;
use crate::scope::{Scope, Scopes};
use crate::token::{AccessToken, TokenDigest};

const PK: &str = "PK";
const SK: &str = "SK";
pub(crate) const TARGET_INDEX: &str = "byTarget";
const TARGET_PK: &str = "TARGETPK";
const TARGET_SK: &str = "TARGETSK";
const EXPIRES_AT: &str = "expires_at";

const TOKENS_PK: &str = "TOKENS";
const TOKEN_PREFIX: &str = "TOKEN#";
const AUDIT_PK: &str = "AUDIT";

const NAME: &str = "name";
const SCOPES: &str = "scopes";
const DIGEST: &str = "digest";
const CREATED_AT: &str = "created_at";
const CREATED_BY: &str = "created_by";
const AT: &str = "at";
const ACTOR: &str = "actor";
const ACTOR_TOKEN: &str = "actor_token";
const ACTION: &str = "action";
const TARGET_KIND: &str = "target_kind";
const TARGET_ID: &str = "target_id";
const CLIENT: &str = "client";
const DETAIL: &str = "detail";

/// The access table of the comments table `comments_table`.
pub fn table_name(comments_table: &str) -> String {
    format!("{comments_table}-access")
}

pub(crate) fn table_definition(name: &str) -> TableDefinition {
    TableDefinition {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(PK, KeyType::S),
            Some(KeyAttribute::new(SK, KeyType::S)),
        ),
        global_secondary_indexes: vec![GlobalSecondaryIndex {
            name: TARGET_INDEX.into(),
            key_schema: KeySchema::new(
                KeyAttribute::new(TARGET_PK, KeyType::S),
                Some(KeyAttribute::new(TARGET_SK, KeyType::S)),
            ),
            projection: Projection::All,
        }],
        stream_enabled: false,
        time_to_live_attribute: Some(EXPIRES_AT.into()),
        local_secondary_indexes: Vec::new(),
    }
}

fn key(pk: &str, sk: String) -> Item {
    Item::from([
        (PK.into(), AttributeValue::s(pk)),
        (SK.into(), AttributeValue::S(sk)),
    ])
}

fn malformed(item: &Item, what: impl Into<String>) -> AccessError {
    let part = |name| item.get(name).and_then(AttributeValue::as_s).unwrap_or("?");
    AccessError::Corrupt {
        key: format!("{}/{}", part(PK), part(SK)),
        what: what.into(),
    }
}

fn text<'a>(item: &'a Item, name: &str) -> Result<&'a str, AccessError> {
    item.get(name)
        .and_then(AttributeValue::as_s)
        .ok_or_else(|| malformed(item, format!("{name} is not a string")))
}

fn optional_text(item: &Item, name: &str) -> Result<Option<String>, AccessError> {
    match item.get(name) {
        None => Ok(None),
        Some(_) => text(item, name).map(|s| Some(s.to_owned())),
    }
}

fn millis(item: &Item, name: &str) -> Result<u64, AccessError> {
    item.get(name)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| malformed(item, format!("{name} is not a time")))
}

pub(crate) mod tokens {
    use super::*;

    /// Every token: one partition.
    pub(crate) fn partition() -> KeyCondition {
        KeyCondition::partition(PK, TOKENS_PK)
    }

    pub(crate) fn key(id: &str) -> Item {
        super::key(TOKENS_PK, format!("{TOKEN_PREFIX}{id}"))
    }

    pub(crate) fn encode(token: &AccessToken, digest: &TokenDigest) -> Item {
        let mut item = key(&token.id);
        item.insert(NAME.into(), AttributeValue::s(&token.name));
        item.insert(
            SCOPES.into(),
            AttributeValue::Ss(token.scopes.iter().map(|s| s.as_str().to_owned()).collect()),
        );
        item.insert(DIGEST.into(), AttributeValue::B(digest.to_vec()));
        item.insert(
            CREATED_AT.into(),
            AttributeValue::N(Number::from(token.created_at_ms)),
        );
        item.insert(CREATED_BY.into(), AttributeValue::s(&token.created_by));
        item
    }

    pub(crate) fn decode(item: &Item) -> Result<(AccessToken, TokenDigest), AccessError> {
        let id = text(item, SK)?
            .strip_prefix(TOKEN_PREFIX)
            .ok_or_else(|| malformed(item, "SK is not a token's"))?;
        let scopes = match item.get(SCOPES) {
            Some(AttributeValue::Ss(names)) => names
                .iter()
                .map(|name| name.parse::<Scope>())
                .collect::<Result<BTreeSet<_>, _>>()
                .map_err(|e| malformed(item, e.to_string()))?,
            _ => return Err(malformed(item, "scopes is not a string set")),
        };
        let digest = match item.get(DIGEST) {
            Some(AttributeValue::B(bytes)) => TokenDigest::try_from(bytes.as_slice())
                .map_err(|_| malformed(item, "digest is not 32 bytes"))?,
            _ => return Err(malformed(item, "digest is not binary")),
        };
        let token = AccessToken {
            id: id.to_owned(),
            name: text(item, NAME)?.to_owned(),
            scopes: Scopes::new(scopes),
            created_at_ms: millis(item, CREATED_AT)?,
            created_by: text(item, CREATED_BY)?.to_owned(),
        };
        Ok((token, digest))
    }
}

pub(crate) mod audit {
    use super::*;

    /// The whole trail, or the part whose ids fall between two bounds.
    pub(crate) fn range(from: Option<String>, to: Option<String>) -> KeyCondition {
        let partition = KeyCondition::partition(PK, AUDIT_PK);
        let bound = |id: String| AttributeValue::S(id);
        match (from, to) {
            (None, None) => partition,
            (Some(from), None) => partition.with_sort(SK, SortOp::Ge(bound(from))),
            (None, Some(to)) => partition.with_sort(SK, SortOp::Le(bound(to))),
            (Some(from), Some(to)) => {
                partition.with_sort(SK, SortOp::Between(bound(from), bound(to)))
            }
        }
    }

    /// One target's entries, from `byTarget`.
    pub(crate) fn of_target(target: &Target) -> KeyCondition {
        KeyCondition::partition(TARGET_PK, target_key(target))
    }

    fn target_key(target: &Target) -> String {
        format!("{}#{}", target.kind, target.id)
    }

    /// Where a page that ended on `entry` goes on from, in the table or
    /// in `byTarget`.
    pub(crate) fn start_after(entry_id: &str, target: Option<&Target>) -> Item {
        let mut start = key(AUDIT_PK, entry_id.to_owned());
        if let Some(target) = target {
            start.insert(TARGET_PK.into(), AttributeValue::S(target_key(target)));
            start.insert(TARGET_SK.into(), AttributeValue::s(entry_id));
        }
        start
    }

    pub(crate) fn encode(entry: &Entry, expires_at_secs: u64) -> Item {
        let mut item = key(AUDIT_PK, entry.id.clone());
        item.insert(
            TARGET_PK.into(),
            AttributeValue::S(target_key(&entry.target)),
        );
        item.insert(TARGET_SK.into(), AttributeValue::s(&entry.id));
        item.insert(AT.into(), AttributeValue::N(Number::from(entry.at_ms)));
        item.insert(ACTOR.into(), AttributeValue::s(&entry.actor.name));
        if let Some(token) = &entry.actor.token_id {
            item.insert(ACTOR_TOKEN.into(), AttributeValue::s(token));
        }
        item.insert(ACTION.into(), AttributeValue::s(&entry.action));
        item.insert(TARGET_KIND.into(), AttributeValue::s(&entry.target.kind));
        item.insert(TARGET_ID.into(), AttributeValue::s(&entry.target.id));
        if let Some(client) = entry.client {
            item.insert(CLIENT.into(), AttributeValue::s(client.to_string()));
        }
        if let Some(detail) = &entry.detail {
            item.insert(DETAIL.into(), AttributeValue::s(detail));
        }
        item.insert(
            EXPIRES_AT.into(),
            AttributeValue::N(Number::from(expires_at_secs)),
        );
        item
    }

    /// The entry, and when it expires (seconds since the epoch).
    pub(crate) fn decode(item: &Item) -> Result<(Entry, u64), AccessError> {
        let client = optional_text(item, CLIENT)?
            .map(|client| {
                client
                    .parse::<IpAddr>()
                    .map_err(|_| malformed(item, "client is not an address"))
            })
            .transpose()?;
        let entry = Entry {
            id: text(item, SK)?.to_owned(),
            at_ms: millis(item, AT)?,
            actor: Actor {
                name: text(item, ACTOR)?.to_owned(),
                token_id: optional_text(item, ACTOR_TOKEN)?,
            },
            action: text(item, ACTION)?.to_owned(),
            target: Target::new(text(item, TARGET_KIND)?, text(item, TARGET_ID)?),
            client,
            detail: optional_text(item, DETAIL)?,
        };
        Ok((entry, millis(item, EXPIRES_AT)?))
    }
}

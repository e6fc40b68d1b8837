//! The requests table's layout: the only module of this crate that names an
//! attribute or builds a key.
//!
//! Orders hold shoppers' addresses, so they live in a table of their own
//! (`<table>-requests`), never in the comments table, its indexes or its
//! change stream.
//!
//! | item          | PK                  | SK                   | index keys |
//! |---------------|---------------------|----------------------|------------|
//! | order         | `ORDER#<id>`        | `ORDER`              | none |
//! | request       | `ORDER#<id>`        | `REQUEST#<kind>`     | `STATUSPK` = status, `STATUSSK` = `<due_at>#<id>#<kind>` (`byStatus`) |
//! | review        | `ORDER#<id>`        | `REVIEWED#<product>` | `AUTHORPK` = `AUTHOR#<author>` (`byAuthor`) |
//! | opt-out       | `OPTOUT#<digest>`   | `OPTOUT`             | none |
//! | figures       | `FIGURES`           | `<product>`          | none |
//!
//! An order's partition holds everything about it, so cancelling or erasing
//! an order is deleting one partition. `byStatus` lists requests by status
//! in due order (projecting the whole request): the scheduler reads the
//! `scheduled` partition up to now, the admin listing any status. An opt-out keeps only the SHA-256 digest
//! of the address (lower-cased): enough to refuse it, nothing to read.
//! A request carries a `version`, new with each write, that every change
//! of it is conditional on: two servers never both claim it.

use rave_store::{
    AttributeValue, Condition, GlobalSecondaryIndex, Item, KeyAttribute, KeyCondition, KeySchema,
    KeyType, Number, Projection, SortOp, TableDefinition,
};
use sha2::{Digest as _, Sha256};

use crate::error::RequestsError;
use crate::model::{Order, Request, RequestKind, RequestStatus};

const PK: &str = "PK";
const SK: &str = "SK";
pub(crate) const STATUS_INDEX: &str = "byStatus";
const STATUS_PK: &str = "STATUSPK";
const STATUS_SK: &str = "STATUSSK";
pub(crate) const AUTHOR_INDEX: &str = "byAuthor";
const AUTHOR_PK: &str = "AUTHORPK";

const ORDER_PREFIX: &str = "ORDER#";
const ORDER_SK: &str = "ORDER";
const REQUEST_PREFIX: &str = "REQUEST#";
const REVIEWED_PREFIX: &str = "REVIEWED#";
const OPTOUT_PREFIX: &str = "OPTOUT#";
const FIGURES_PK: &str = "FIGURES";

const EMAIL: &str = "email";
const NAME: &str = "name";
const LOCALE: &str = "locale";
const DELIVERED_AT: &str = "delivered_at";
const PRODUCTS: &str = "products";
const STATUS: &str = "status";
const DUE_AT: &str = "due_at";
const ATTEMPTS: &str = "attempts";
const FIRST_ATTEMPT: &str = "first_attempt";
const SENT_AT: &str = "sent_at";
const LAST_ERROR: &str = "last_error";
const SKIPPED_BECAUSE: &str = "skipped_because";
const CLAIM_UNTIL: &str = "claim_until";
const VERSION: &str = "version";
const AUTHOR: &str = "author";
const COMMENT: &str = "comment";
const AT: &str = "at";
pub(crate) const REQUESTED: &str = "requested";
pub(crate) const REVIEWED: &str = "reviewed";

/// The requests table of the comments table `comments_table`.
pub fn table_name(comments_table: &str) -> String {
    format!("{comments_table}-requests")
}

pub(crate) fn table_definition(name: &str) -> TableDefinition {
    let index = |name: &str, pk: &str, sk: &str, projection| GlobalSecondaryIndex {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(pk, KeyType::S),
            Some(KeyAttribute::new(sk, KeyType::S)),
        ),
        projection,
    };
    TableDefinition {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(PK, KeyType::S),
            Some(KeyAttribute::new(SK, KeyType::S)),
        ),
        global_secondary_indexes: vec![
            // A request is small: the listing reads it whole from the
            // index (the scheduler still rereads what it claims).
            index(STATUS_INDEX, STATUS_PK, STATUS_SK, Projection::All),
            index(AUTHOR_INDEX, AUTHOR_PK, SK, Projection::KeysOnly),
        ],
        stream_enabled: false,
        time_to_live_attribute: None,
        local_secondary_indexes: Vec::new(),
    }
}

fn key(pk: String, sk: String) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(pk)),
        (SK.into(), AttributeValue::S(sk)),
    ])
}

fn malformed(item: &Item, what: impl Into<String>) -> RequestsError {
    let part = |name| item.get(name).and_then(AttributeValue::as_s).unwrap_or("?");
    RequestsError::Corrupt {
        key: format!("{}/{}", part(PK), part(SK)),
        what: what.into(),
    }
}

fn text<'a>(item: &'a Item, name: &str) -> Result<&'a str, RequestsError> {
    item.get(name)
        .and_then(AttributeValue::as_s)
        .ok_or_else(|| malformed(item, format!("{name} is not a string")))
}

fn optional_text(item: &Item, name: &str) -> Result<Option<String>, RequestsError> {
    match item.get(name) {
        None => Ok(None),
        Some(_) => text(item, name).map(|s| Some(s.to_owned())),
    }
}

fn number(item: &Item, name: &str) -> Result<u64, RequestsError> {
    item.get(name)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| malformed(item, format!("{name} is not a number")))
}

fn optional_number(item: &Item, name: &str) -> Result<Option<u64>, RequestsError> {
    match item.get(name) {
        None => Ok(None),
        Some(_) => number(item, name).map(Some),
    }
}

fn n(value: u64) -> AttributeValue {
    AttributeValue::N(Number::from(value))
}

/// Milliseconds as fixed-width text, so that they sort as numbers.
fn padded(ms: u64) -> String {
    format!("{ms:015}")
}

fn order_pk(order_id: &str) -> String {
    format!("{ORDER_PREFIX}{order_id}")
}

/// The order id of any item of an order's partition.
pub(crate) fn order_id_of(item: &Item) -> Result<String, RequestsError> {
    text(item, PK)?
        .strip_prefix(ORDER_PREFIX)
        .map(str::to_owned)
        .ok_or_else(|| malformed(item, "PK is not an order's"))
}

/// Everything of one order: the order, its requests, its reviews.
pub(crate) fn partition(order_id: &str) -> KeyCondition {
    KeyCondition::partition(PK, order_pk(order_id))
}

pub(crate) fn primary_key(item: &Item) -> Item {
    [PK, SK]
        .iter()
        .filter_map(|k| Some((k.to_string(), item.get(*k)?.clone())))
        .collect()
}

pub(crate) mod orders {
    use super::*;

    pub(crate) fn key(order_id: &str) -> Item {
        super::key(order_pk(order_id), ORDER_SK.into())
    }

    pub(crate) fn encode(order: &Order) -> Item {
        let mut item = key(&order.id);
        item.insert(EMAIL.into(), AttributeValue::s(&order.email));
        item.insert(NAME.into(), AttributeValue::s(&order.name));
        item.insert(LOCALE.into(), AttributeValue::s(&order.locale));
        item.insert(DELIVERED_AT.into(), n(order.delivered_at_ms));
        item.insert(
            PRODUCTS.into(),
            AttributeValue::L(order.products.iter().map(AttributeValue::s).collect()),
        );
        item
    }

    pub(crate) fn is_order(item: &Item) -> bool {
        item.get(SK).and_then(AttributeValue::as_s) == Some(ORDER_SK)
    }

    pub(crate) fn decode(item: &Item) -> Result<Order, RequestsError> {
        let products = match item.get(PRODUCTS) {
            Some(AttributeValue::L(values)) => values
                .iter()
                .map(|v| {
                    v.as_s()
                        .map(str::to_owned)
                        .ok_or_else(|| malformed(item, "products holds a non-string"))
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(malformed(item, "products is not a list")),
        };
        Ok(Order {
            id: order_id_of(item)?,
            email: text(item, EMAIL)?.to_owned(),
            name: text(item, NAME)?.to_owned(),
            locale: text(item, LOCALE)?.to_owned(),
            delivered_at_ms: number(item, DELIVERED_AT)?,
            products,
        })
    }
}

/// A request as stored, with what only the scheduler reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredRequest {
    pub request: Request,
    /// Until when a server that claimed it is sending it.
    pub claim_until_ms: Option<u64>,
    pub version: u64,
}

pub(crate) mod requests {
    use super::*;

    pub(crate) fn key(order_id: &str, kind: RequestKind) -> Item {
        super::key(
            order_pk(order_id),
            format!("{REQUEST_PREFIX}{}", kind.as_str()),
        )
    }

    pub(crate) fn is_request(item: &Item) -> bool {
        item.get(SK)
            .and_then(AttributeValue::as_s)
            .is_some_and(|sk| sk.starts_with(REQUEST_PREFIX))
    }

    /// Requests of one status, in due order; up to `until_ms` when given.
    pub(crate) fn with_status(status: RequestStatus, until_ms: Option<u64>) -> KeyCondition {
        let partition = KeyCondition::partition(STATUS_PK, status.as_str());
        match until_ms {
            // Every sort key due at `until_ms` or before sorts below this.
            Some(until) => partition.with_sort(
                STATUS_SK,
                SortOp::Lt(AttributeValue::S(format!("{}$", padded(until)))),
            ),
            None => partition,
        }
    }

    /// The key of a request read from `byStatus`.
    pub(crate) fn key_of(item: &Item) -> Result<(String, RequestKind), RequestsError> {
        let kind = text(item, SK)?
            .strip_prefix(REQUEST_PREFIX)
            .and_then(|kind| kind.parse().ok())
            .ok_or_else(|| malformed(item, "SK is not a request's"))?;
        Ok((order_id_of(item)?, kind))
    }

    /// Where a `byStatus` listing that ended on `request` goes on from.
    pub(crate) fn start_after(request: &Request) -> Item {
        let mut start = key(&request.order_id, request.kind);
        start.insert(STATUS_PK.into(), AttributeValue::s(request.status.as_str()));
        start.insert(STATUS_SK.into(), AttributeValue::S(status_sort(request)));
        start
    }

    fn status_sort(request: &Request) -> String {
        format!(
            "{}#{}#{}",
            padded(request.due_at_ms),
            request.order_id,
            request.kind.as_str()
        )
    }

    pub(crate) fn encode(stored: &StoredRequest) -> Item {
        let request = &stored.request;
        let mut item = key(&request.order_id, request.kind);
        item.insert(STATUS.into(), AttributeValue::s(request.status.as_str()));
        item.insert(STATUS_PK.into(), AttributeValue::s(request.status.as_str()));
        item.insert(STATUS_SK.into(), AttributeValue::S(status_sort(request)));
        item.insert(DUE_AT.into(), n(request.due_at_ms));
        item.insert(ATTEMPTS.into(), n(u64::from(request.attempts)));
        item.insert(VERSION.into(), n(stored.version));
        let optional = [
            (FIRST_ATTEMPT, request.first_attempt_ms),
            (SENT_AT, request.sent_at_ms),
            (CLAIM_UNTIL, stored.claim_until_ms),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                item.insert(name.into(), n(value));
            }
        }
        if let Some(error) = &request.last_error {
            item.insert(LAST_ERROR.into(), AttributeValue::s(error));
        }
        if let Some(reason) = &request.skipped_because {
            item.insert(SKIPPED_BECAUSE.into(), AttributeValue::s(reason));
        }
        item
    }

    pub(crate) fn decode(item: &Item) -> Result<StoredRequest, RequestsError> {
        let (order_id, kind) = key_of(item)?;
        let status = text(item, STATUS)?
            .parse()
            .map_err(|()| malformed(item, "status is not a request status"))?;
        let attempts = u32::try_from(number(item, ATTEMPTS)?)
            .map_err(|_| malformed(item, "attempts is out of range"))?;
        Ok(StoredRequest {
            request: Request {
                order_id,
                kind,
                status,
                due_at_ms: number(item, DUE_AT)?,
                attempts,
                first_attempt_ms: optional_number(item, FIRST_ATTEMPT)?,
                sent_at_ms: optional_number(item, SENT_AT)?,
                last_error: optional_text(item, LAST_ERROR)?,
                skipped_because: optional_text(item, SKIPPED_BECAUSE)?,
            },
            claim_until_ms: optional_number(item, CLAIM_UNTIL)?,
            version: number(item, VERSION)?,
        })
    }

    /// The write that replaces `old` holds only if nobody wrote it since.
    pub(crate) fn unchanged_since(old: Option<&StoredRequest>) -> Condition {
        match old {
            Some(old) => Condition::eq(VERSION, n(old.version)),
            None => Condition::not_exists(PK),
        }
    }
}

pub(crate) mod reviews {
    use super::*;

    pub(crate) fn key(order_id: &str, product: &str) -> Item {
        super::key(order_pk(order_id), format!("{REVIEWED_PREFIX}{product}"))
    }

    pub(crate) fn encode(
        order_id: &str,
        product: &str,
        author: &str,
        comment_id: &str,
        at_ms: u64,
    ) -> Item {
        let mut item = key(order_id, product);
        item.insert(
            AUTHOR_PK.into(),
            AttributeValue::S(format!("AUTHOR#{author}")),
        );
        item.insert(AUTHOR.into(), AttributeValue::s(author));
        item.insert(COMMENT.into(), AttributeValue::s(comment_id));
        item.insert(AT.into(), n(at_ms));
        item
    }

    /// The product of a review item, `None` for the order's other items.
    pub(crate) fn product_of(item: &Item) -> Option<&str> {
        item.get(SK)?.as_s()?.strip_prefix(REVIEWED_PREFIX)
    }

    /// Every review an author wrote through a request's link.
    pub(crate) fn by_author(author: &str) -> KeyCondition {
        KeyCondition::partition(AUTHOR_PK, format!("AUTHOR#{author}"))
    }
}

pub(crate) mod opt_outs {
    use super::*;

    pub(crate) fn key(email: &str) -> Item {
        let digest = Sha256::digest(email.trim().to_lowercase().as_bytes());
        super::key(
            format!("{OPTOUT_PREFIX}{}", hex::encode(digest)),
            "OPTOUT".into(),
        )
    }

    pub(crate) fn encode(email: &str, at_ms: u64) -> Item {
        let mut item = key(email);
        item.insert(AT.into(), n(at_ms));
        item
    }
}

pub(crate) mod figures {
    use super::*;

    pub(crate) fn partition() -> KeyCondition {
        KeyCondition::partition(PK, FIGURES_PK)
    }

    pub(crate) fn key(product: &str) -> Item {
        super::key(FIGURES_PK.into(), product.to_owned())
    }

    pub(crate) fn decode(item: &Item) -> Result<(String, u64, u64), RequestsError> {
        let count = |name| optional_number(item, name).map(Option::unwrap_or_default);
        Ok((
            text(item, SK)?.to_owned(),
            count(REQUESTED)?,
            count(REVIEWED)?,
        ))
    }
}

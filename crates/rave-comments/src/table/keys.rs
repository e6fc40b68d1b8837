//! The key attributes every item has, and the readers every codec decodes
//! its attributes with (an attribute that does not read is `Malformed`,
//! naming the item's key).

use rave_store::{AttributeValue, Item, ItemView, Number};

use crate::error::Malformed;

pub(crate) const PK: &str = "PK";
pub(crate) const SK: &str = "SK";
/// The sort key of the `helpful` indexes: the Wilson score, then time.
pub(crate) const HELPFUL_SORT: &str = "HELPSK";
/// The sort key of every listing index (and, overloaded, of the leaderboard).
pub(crate) const GSISK: &str = "GSISK";

impl Malformed {
    pub(crate) fn new(item: &(impl ItemView + ?Sized), what: impl Into<String>) -> Malformed {
        Malformed {
            key: describe_key(item),
            what: what.into(),
        }
    }
}

/// `PK/SK` of an item, for reports and error messages.
pub(crate) fn describe_key(item: &(impl ItemView + ?Sized)) -> String {
    let part = |name| {
        item.attribute(name)
            .and_then(|value| value.as_s())
            .unwrap_or("?")
    };
    format!("{}/{}", part(PK), part(SK))
}

/// Just the primary key of an item.
pub(crate) fn primary_key(item: &(impl ItemView + ?Sized)) -> Item {
    [PK, SK]
        .iter()
        .filter_map(|k| Some((k.to_string(), item.attribute(k)?.to_value())))
        .collect()
}

pub(crate) fn key(pk: String, sk: String) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(pk)),
        (SK.into(), AttributeValue::S(sk)),
    ])
}

pub(crate) fn text<'a>(
    item: &'a (impl ItemView + ?Sized),
    name: &str,
) -> Result<&'a str, Malformed> {
    item.attribute(name)
        .and_then(|value| value.as_s())
        .ok_or_else(|| Malformed::new(item, format!("{name} is not a string")))
}

pub(crate) fn count(item: &(impl ItemView + ?Sized), name: &str) -> Result<u64, Malformed> {
    item.attribute(name)
        .and_then(|value| value.as_n())
        .and_then(|n| n.to_i64())
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| Malformed::new(item, format!("{name} is not a count")))
}

pub(crate) fn signed(item: &Item, name: &str) -> Result<i64, Malformed> {
    item.get(name)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .ok_or_else(|| Malformed::new(item, format!("{name} is not a whole number")))
}

pub(crate) fn number(value: u64) -> AttributeValue {
    AttributeValue::N(Number::from(value))
}

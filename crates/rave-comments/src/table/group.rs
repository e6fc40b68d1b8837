//! Product families: a group's partition (`GROUP#<g>`) holds one member
//! item per variant (`MEMBER#<p>`) and a head item (`GROUP`) counting its
//! members; a variant's product record names its group (`group`).
//!
//! All three are written in one TransactWriteItems with the product record
//! (`catalog`), so the members listed are exactly the records naming the
//! group. The head's count is what keeps families one level deep without a
//! scan: a product may join a group only while its own head counts no
//! members (it is not a group), and a group only while its record names no
//! group (it is not a variant); each transaction both checks and writes
//! the head or the record the other would check, so of two racing writes
//! that would make a cycle, one is cancelled.

use rave_store::{AttributeValue, Condition, Item, KeyCondition, Number, SortOp, Update};

use super::{Malformed, PK, SK, key, text};
use crate::model::ProductId;

const PREFIX: &str = "GROUP#";
/// The sort key of the head item.
const HEAD: &str = "GROUP";
const MEMBER_PREFIX: &str = "MEMBER#";
/// On the head: how many variants the group has now.
const MEMBERS: &str = "members";
/// On a product record: the group it is a variant of.
pub(crate) const GROUP: &str = "group";

fn partition_key(group: &ProductId) -> String {
    format!("{PREFIX}{group}")
}

pub(crate) fn head_key(group: &ProductId) -> Item {
    key(partition_key(group), HEAD.to_owned())
}

pub(crate) fn member_key(group: &ProductId, product: &ProductId) -> Item {
    key(partition_key(group), format!("{MEMBER_PREFIX}{product}"))
}

/// The group's member items, in product id order.
pub(crate) fn members(group: &ProductId) -> KeyCondition {
    KeyCondition::partition(PK, partition_key(group))
        .with_sort(SK, SortOp::BeginsWith(AttributeValue::s(MEMBER_PREFIX)))
}

/// The variant a member item names.
pub(crate) fn decode_member(item: &Item) -> Result<ProductId, Malformed> {
    text(item, SK)?
        .strip_prefix(MEMBER_PREFIX)
        .and_then(|id| ProductId::parse(id).ok())
        .ok_or_else(|| Malformed::new(item, "not a member of a group"))
}

/// The head's update as one variant joins (`+1`) or leaves (`-1`).
pub(crate) fn count_members(change: i64) -> Update {
    Update::new().add(MEMBERS, AttributeValue::N(Number::from(change)))
}

/// On a head: the group has no variants (never had, or all left).
pub(crate) fn has_no_members() -> Condition {
    Condition::not_exists(MEMBERS).or(Condition::eq(
        MEMBERS,
        AttributeValue::N(Number::from(0u64)),
    ))
}

/// On a product record (or its absence): it names no group.
pub(crate) fn not_a_variant() -> Condition {
    Condition::not_exists(GROUP)
}

/// On a product record (or its absence): it names `group` (or, `None`,
/// no group: true of a product without a record too, on DynamoDB as on
/// the engine, since a missing item has no attributes). What a new
/// comment's write checks, so that the family it was given is its
/// product's when it commits.
pub(crate) fn names(group: Option<&ProductId>) -> Condition {
    match group {
        Some(group) => Condition::eq(GROUP, AttributeValue::s(group.as_str())),
        None => not_a_variant(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_item_names_its_variant() {
        let group = ProductId::parse("tee").unwrap();
        let red = ProductId::parse("tee-red").unwrap();
        assert_eq!(decode_member(&member_key(&group, &red)).unwrap(), red);
        assert!(decode_member(&head_key(&group)).is_err());
        assert!(decode_member(&key("GROUP#tee".into(), "MEMBER#a b".into())).is_err());
    }
}

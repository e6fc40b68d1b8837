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
//!
//! **Move markers.** The transaction that changes a product's group also
//! puts a marker (`MOVE#<p>` / `MOVE`: the groups before and after, when,
//! and a token new with each move) that stays until the move's job has put
//! every comment of the product in its new family (`families::moves`).
//! Markers are found without a scan: each carries `MODPK` = `MOVES` and
//! `MODSK` = `<since>#<p>`, so the moderation index's `MOVES` partition
//! lists them (the index overloaded, as the leaderboard overloads
//! `byLangAndRating`; the queues are its `MODERATION#<status>` partitions,
//! which no marker enters). The index projects none of a marker's own
//! attributes, so its entries are keys, and the markers are read by them.

use rave_store::{AttributeValue, Condition, Item, KeyCondition, Number, SortOp, Update};

use super::{Index, Malformed, PK, SK, key, text};
use crate::model::{ProductId, Timestamp};

const PREFIX: &str = "GROUP#";
/// The sort key of the head item.
const HEAD: &str = "GROUP";
const MEMBER_PREFIX: &str = "MEMBER#";
/// On the head: how many variants the group has now.
const MEMBERS: &str = "members";
/// On a product record: the group it is a variant of.
pub(crate) const GROUP: &str = "group";

const MOVE_PREFIX: &str = "MOVE#";
/// The sort key of a move marker.
const MOVE: &str = "MOVE";
/// The moderation index's partition of the move markers.
const MOVES: &str = "MOVES";
/// On a marker: the groups before and after (absent: none), when it was
/// written, and a token new with each move (what its job's delete of the
/// marker is conditional on, so a newer move's marker stays).
const MOVE_FROM: &str = "from_group";
const MOVE_TO: &str = "to_group";
const MOVE_SINCE: &str = "since";
const MOVE_TOKEN: &str = "token";

/// A product's move between families, pending until its job is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MoveMarker {
    pub product: ProductId,
    pub from: Option<ProductId>,
    pub to: Option<ProductId>,
    pub since: Timestamp,
    pub token: String,
}

pub(crate) fn move_key(product: &ProductId) -> Item {
    key(format!("{MOVE_PREFIX}{product}"), MOVE.to_owned())
}

pub(crate) fn encode_move(marker: &MoveMarker) -> Item {
    let mut item = move_key(&marker.product);
    let mut set = |name: &str, value: AttributeValue| {
        item.insert(name.into(), value);
    };
    set(
        Index::Moderation.partition_attribute(),
        AttributeValue::s(MOVES),
    );
    set(
        Index::Moderation.sort_attribute(),
        AttributeValue::S(format!("{}#{}", marker.since, marker.product)),
    );
    for (name, group) in [(MOVE_FROM, &marker.from), (MOVE_TO, &marker.to)] {
        if let Some(group) = group {
            set(name, AttributeValue::s(group.as_str()));
        }
    }
    set(MOVE_SINCE, AttributeValue::S(marker.since.to_string()));
    set(MOVE_TOKEN, AttributeValue::s(&marker.token));
    item
}

pub(crate) fn decode_move(item: &Item) -> Result<MoveMarker, Malformed> {
    let bad = |what: &str| Malformed::new(item, format!("{what} is not valid"));
    let group = |name: &str| match item.get(name) {
        None => Ok(None),
        Some(_) => ProductId::parse(text(item, name)?)
            .map(Some)
            .map_err(|_| bad(name)),
    };
    Ok(MoveMarker {
        product: text(item, PK)?
            .strip_prefix(MOVE_PREFIX)
            .and_then(|id| ProductId::parse(id).ok())
            .ok_or_else(|| bad(PK))?,
        from: group(MOVE_FROM)?,
        to: group(MOVE_TO)?,
        since: Timestamp::parse(text(item, MOVE_SINCE)?).map_err(|_| bad(MOVE_SINCE))?,
        token: text(item, MOVE_TOKEN)?.to_owned(),
    })
}

/// Every pending move's marker: the moderation index's `MOVES` partition,
/// oldest first.
pub(crate) fn pending_moves() -> KeyCondition {
    KeyCondition::partition(Index::Moderation.partition_attribute(), MOVES)
}

/// On a marker: it is still the one of the move read (no newer move of the
/// product replaced it).
pub(crate) fn same_move(marker: &MoveMarker) -> Condition {
    Condition::eq(MOVE_TOKEN, AttributeValue::s(&marker.token))
}

fn partition_key(group: &ProductId) -> String {
    format!("{PREFIX}{group}")
}

pub(crate) fn head_key(group: &ProductId) -> Item {
    key(partition_key(group), HEAD.to_owned())
}

pub(crate) fn member_key(group: &ProductId, product: &ProductId) -> Item {
    key(partition_key(group), format!("{MEMBER_PREFIX}{product}"))
}

/// Whether an item is a group's head or member item.
pub(crate) fn is_group_item(item: &Item) -> bool {
    item.get(PK)
        .and_then(AttributeValue::as_s)
        .is_some_and(|pk| pk.starts_with(PREFIX))
}

/// A group partition's item, as `reconcile` compares it with the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GroupItem {
    /// The head, with the members it counts (absent: none).
    Head { group: ProductId, members: u64 },
    Member {
        group: ProductId,
        product: ProductId,
    },
}

pub(crate) fn decode_group_item(item: &Item) -> Result<GroupItem, Malformed> {
    let group = text(item, PK)?
        .strip_prefix(PREFIX)
        .and_then(|id| ProductId::parse(id).ok())
        .ok_or_else(|| Malformed::new(item, "not a group's partition"))?;
    if text(item, SK)? == HEAD {
        let members = match item.get(MEMBERS) {
            None => 0,
            Some(_) => super::count(item, MEMBERS)?,
        };
        return Ok(GroupItem::Head { group, members });
    }
    Ok(GroupItem::Member {
        group,
        product: decode_member(item)?,
    })
}

/// A head counting `members` variants, as a recount writes it.
pub(crate) fn encode_head(group: &ProductId, members: u64) -> Item {
    let mut item = head_key(group);
    item.insert(MEMBERS.into(), AttributeValue::N(Number::from(members)));
    item
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
    fn a_move_marker_round_trips_and_is_listed_under_moves() {
        let marker = MoveMarker {
            product: ProductId::parse("tee-red").unwrap(),
            from: Some(ProductId::parse("tee").unwrap()),
            to: None,
            since: Timestamp::parse("2026-11-27T20:00:00.000Z").unwrap(),
            token: "01JD3X0000000000000000000A".into(),
        };
        let item = encode_move(&marker);
        assert_eq!(decode_move(&item).unwrap(), marker);
        assert_eq!(item["MODPK"], AttributeValue::s("MOVES"));
        assert_eq!(
            item["MODSK"],
            AttributeValue::s("2026-11-27T20:00:00.000Z#tee-red")
        );
        assert!(!item.contains_key(MOVE_TO));
        assert!(same_move(&marker).evaluate(&item));
        let newer = MoveMarker {
            token: "01JD3X0000000000000000000B".into(),
            ..marker
        };
        assert!(!same_move(&newer).evaluate(&item));
        let mut broken = item.clone();
        broken.insert(MOVE_FROM.into(), AttributeValue::s("a b"));
        assert!(decode_move(&broken).unwrap_err().what.contains(MOVE_FROM));
    }

    #[test]
    fn group_items_decode_as_heads_and_members() {
        let group = ProductId::parse("tee").unwrap();
        let red = ProductId::parse("tee-red").unwrap();
        let member = member_key(&group, &red);
        assert!(is_group_item(&member) && is_group_item(&head_key(&group)));
        assert!(!is_group_item(&move_key(&red)));
        assert_eq!(
            decode_group_item(&member).unwrap(),
            GroupItem::Member {
                group: group.clone(),
                product: red
            }
        );
        for (item, members) in [(head_key(&group), 0), (encode_head(&group, 3), 3)] {
            assert_eq!(
                decode_group_item(&item).unwrap(),
                GroupItem::Head {
                    group: group.clone(),
                    members
                }
            );
        }
    }

    #[test]
    fn a_member_item_names_its_variant() {
        let group = ProductId::parse("tee").unwrap();
        let red = ProductId::parse("tee-red").unwrap();
        assert_eq!(decode_member(&member_key(&group, &red)).unwrap(), red);
        assert!(decode_member(&head_key(&group)).is_err());
        assert!(decode_member(&key("GROUP#tee".into(), "MEMBER#a b".into())).is_err());
    }
}

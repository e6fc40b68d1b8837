//! The statistics items the aggregator maintains, one codec per kind:
//!
//! * `product` — per product, overall and per language, in the product's
//!   partition (see `product_partition`), with `attributes`, the counts
//!   of the answers to the product's attributes;
//! * `leaderboard` — the sparse entry of a product's statistics item in
//!   the overloaded `byLangAndRating` index, spread over shards merged on
//!   read (docs/capacity.md, 6.1);
//! * `author` — per author;
//! * `totals` — the global totals, as partial items summed on read
//!   (docs/capacity.md, 6.2).
//!
//! Each codec takes the domain's validated types (`ProductId`, `Language`,
//! `Rating`), so nothing unchecked reaches a key. What they share is here:
//! every statistics item carries a `version` token, new with each write,
//! which the aggregator's writes are conditional on.

pub(crate) mod attributes;
pub(crate) mod author;
pub(crate) mod leaderboard;
pub(crate) mod moderation;
pub(crate) mod product;
pub(crate) mod totals;

use rave_store::{AttributeValue, Condition, Item};

/// A token no two writes of a statistics item share (a ULID), so that a
/// write can be conditional on the item being exactly as it was read.
const VERSION: &str = "version";

/// `item` with a fresh version token: the value of this very write.
pub(crate) fn with_new_version(mut item: Item) -> Item {
    item.insert(
        VERSION.into(),
        AttributeValue::S(ulid::Ulid::generate().to_string()),
    );
    item
}

/// `item` without its version token, to compare stored values.
pub(crate) fn without_version(mut item: Item) -> Item {
    item.remove(VERSION);
    item
}

/// The condition that a statistics item is still as it was read: the same
/// version token, or still without one when it was absent (absent means all
/// zero, so an item deleted and not written again since also passes) or
/// written before versions existed.
pub(crate) fn unchanged_since(read: Option<&Item>) -> Condition {
    match read.and_then(|item| item.get(VERSION)) {
        Some(version) => Condition::eq(VERSION, version.clone()),
        None => Condition::not_exists(VERSION),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_holds_only_on_the_version_it_read() {
        let item = author::encode("a", 1);
        let read = with_new_version(item.clone());
        let condition = unchanged_since(Some(&read));
        assert!(condition.evaluate(&read));
        assert!(!condition.evaluate(&with_new_version(item.clone())));
        assert!(!condition.evaluate(&item));
        let absent = unchanged_since(None);
        assert!(absent.evaluate(&Item::new()));
        assert!(absent.evaluate(&item), "written before versions");
        assert!(!absent.evaluate(&read));
        assert_eq!(without_version(read), item);
    }
}

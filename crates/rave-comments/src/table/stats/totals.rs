//! The global totals: partial items (`AGGREGATES#<slot>` / `TOTALS`), each
//! the net change of the commits that wrote it, summed on read. Commits
//! pick a slot at random, so that aggregators seldom write the same one
//! (docs/capacity.md, 6.2). The single item of the layout before partials
//! (`AGGREGATES` / `TOTALS`) is read and counted too, until `reconcile
//! --fix` folds it in.

use rave_store::{AttributeValue, Item};

use crate::model::{AUTHOR_BUCKETS, GlobalStats};
use crate::table::{Malformed, signed};

/// The partition of the single totals item of the old layout; the partial
/// totals items are `AGGREGATES#<slot>`.
pub(in crate::table) const PK_PREFIX: &str = "AGGREGATES";
const SORT_KEY: &str = "TOTALS";

/// How many partial totals items there are.
pub(crate) const SLOTS: usize = 64;

const COMMENTS: &str = "comments_total";
const PRODUCTS: &str = "products_total";
const AUTHORS: &str = "authors_total";

fn authors_attribute(bucket: usize) -> String {
    format!("authors_{}", bucket + 1)
}

/// One partial of the global totals: the net change the commits that wrote
/// it applied. A partial can be negative (one commit counts a product's
/// first comment into one partial, a later one its deletion into another);
/// only the sum of all of them means anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TotalsPart {
    pub(crate) comments: i64,
    pub(crate) products: i64,
    pub(crate) authors: i64,
    pub(crate) authors_by_comment_count: [i64; AUTHOR_BUCKETS],
}

impl TotalsPart {
    pub(crate) fn add(&mut self, other: &TotalsPart) {
        self.comments += other.comments;
        self.products += other.products;
        self.authors += other.authors;
        for (total, part) in self
            .authors_by_comment_count
            .iter_mut()
            .zip(other.authors_by_comment_count)
        {
            *total += part;
        }
    }

    /// The sum of all partials as the global statistics (a negative sum,
    /// which only drifted data can produce, reads as zero).
    pub(crate) fn to_stats(self) -> GlobalStats {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        GlobalStats {
            comments_total: count(self.comments),
            products_total: count(self.products),
            authors_total: count(self.authors),
            authors_by_comment_count: self.authors_by_comment_count.map(count),
        }
    }

    pub(crate) fn of_stats(stats: &GlobalStats) -> TotalsPart {
        let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        TotalsPart {
            comments: signed(stats.comments_total),
            products: signed(stats.products_total),
            authors: signed(stats.authors_total),
            authors_by_comment_count: stats.authors_by_comment_count.map(signed),
        }
    }
}

/// A slot of the partial totals items (`0..SLOTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(usize);

impl Slot {
    /// Any slot will do for a commit; a random one seldom meets another
    /// aggregator's.
    pub(crate) fn random() -> Slot {
        Slot((ulid::Ulid::generate().random() % SLOTS as u128) as usize)
    }

    /// The slot a recount writes its totals to.
    pub(crate) const FIRST: Slot = Slot(0);
}

/// The partial totals item of `slot`.
pub(crate) fn key(slot: Slot) -> Item {
    crate::table::key(format!("{PK_PREFIX}#{}", slot.0), SORT_KEY.to_owned())
}

/// The single totals item of the layout before partial totals.
pub(crate) fn legacy_key() -> Item {
    crate::table::key(PK_PREFIX.to_owned(), SORT_KEY.to_owned())
}

/// Every totals item a reader sums: the partials and the legacy item.
pub(crate) fn all_keys() -> Vec<Item> {
    (0..SLOTS)
        .map(|slot| key(Slot(slot)))
        .chain([legacy_key()])
        .collect()
}

pub(crate) fn encode(slot: Slot, part: &TotalsPart) -> Item {
    let mut item = key(slot);
    item.insert(COMMENTS.into(), signed_number(part.comments));
    item.insert(PRODUCTS.into(), signed_number(part.products));
    item.insert(AUTHORS.into(), signed_number(part.authors));
    for (i, authors) in part.authors_by_comment_count.iter().enumerate() {
        item.insert(authors_attribute(i), signed_number(*authors));
    }
    item
}

fn signed_number(value: i64) -> AttributeValue {
    AttributeValue::N(rave_store::Number::from(value))
}

/// A partial totals item, or the legacy totals item.
pub(crate) fn decode(item: &Item) -> Result<TotalsPart, Malformed> {
    let mut part = TotalsPart {
        comments: signed(item, COMMENTS)?,
        products: signed(item, PRODUCTS)?,
        authors: signed(item, AUTHORS)?,
        authors_by_comment_count: [0; AUTHOR_BUCKETS],
    };
    for (i, slot) in part.authors_by_comment_count.iter_mut().enumerate() {
        *slot = signed(item, &authors_attribute(i))?;
    }
    Ok(part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::describe_key;

    #[test]
    fn a_partial_round_trips() {
        let part = TotalsPart {
            comments: 19,
            products: -1,
            authors: 3,
            authors_by_comment_count: [1, -1, 0, 0, 0, 0, 0, 0, 0, 1],
        };
        let item = encode(Slot(7), &part);
        assert_eq!(describe_key(&item), "AGGREGATES#7/TOTALS");
        assert_eq!(decode(&item).unwrap(), part);
        assert_eq!(describe_key(&legacy_key()), "AGGREGATES/TOTALS");
        assert_eq!(all_keys().len(), SLOTS + 1);
    }

    #[test]
    fn partial_totals_sum_to_the_statistics() {
        let stats = GlobalStats {
            comments_total: 19,
            products_total: 1,
            authors_total: 3,
            authors_by_comment_count: [1, 1, 0, 0, 0, 0, 0, 0, 0, 1],
        };
        let mut sum = TotalsPart::of_stats(&stats);
        let moved = TotalsPart {
            products: -1,
            ..TotalsPart::default()
        };
        sum.add(&moved);
        sum.add(&TotalsPart {
            products: 1,
            ..TotalsPart::default()
        });
        assert_eq!(sum.to_stats(), stats);
        assert_eq!(
            moved.to_stats(),
            GlobalStats::default(),
            "a negative sum reads as zero"
        );
    }
}

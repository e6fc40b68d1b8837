//! A product's statistics item, overall (`PRODUCT#<p>` / `S`) or in one
//! language (`S#<lang>`): its visible comments by rating, the verified ones
//! among them and those by rating, and those with a published photo by
//! rating. While it has 5-star comments the item is
//! the product's leaderboard entry too (see `leaderboard`).
//!
//! The overall item also carries the product's revision, which the
//! aggregator raises with every change to a visible comment of the product;
//! it is kept (with zero counts) when the last comment goes, so a revision
//! never repeats.

use rave_store::{AttributeValue, Item, ItemView};

use super::attributes::{self, AttributeCounts};
use super::leaderboard::{self, PRODUCT_ID};
use crate::attributes::AttributeAnswers;
use crate::model::{Language, ProductId, Rating};
use crate::table::product_partition::stats_key;
use crate::table::{Malformed, count, number, text};

const LANGUAGE: &str = "language";
const COUNT_TOTAL: &str = "count_total";
/// Counted comments a purchase verified; absent while there are none, so
/// items written before verification existed read (and compare) as 0.
const VERIFIED_TOTAL: &str = "verified_total";
/// On a product's overall item: increases with every change the aggregator
/// applies to any visible comment of the product.
const REVISION: &str = "revision";

fn count_attribute(rating: usize) -> String {
    format!("count_{rating}")
}

/// Counted verified comments of one rating (`verified_1`..`verified_5`),
/// absent at 0 like the total.
fn verified_attribute(rating: usize) -> String {
    format!("verified_{rating}")
}

/// Counted comments of one rating with at least one published photo
/// (`media_1`..`media_5`), absent at 0: items written before photos were
/// counted read as none.
fn media_attribute(rating: usize) -> String {
    format!("media_{rating}")
}

/// The statistics item of a product, overall or in one language.
pub(crate) fn key(product: &ProductId, language: Option<&Language>) -> Item {
    stats_key(product, language)
}

/// What a product's statistics item counts: comments by rating (`[r - 1]`
/// counts rating r), the verified ones among them, and those by rating.
/// `T` is `i64` for the differences a batch of changes makes.
///
/// The total of verified comments is kept beside the per-rating ones
/// because items written before the per-rating counts existed carry only
/// the total: their per-rating counts stay short of it until `reconcile
/// --fix` recounts them, which is how a reader tells them apart
/// ([`ProductCounts::verified_by_rating`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProductCounts<T = u64> {
    pub(crate) ratings: [T; 5],
    pub(crate) verified: T,
    pub(crate) verified_ratings: [T; 5],
    /// Those with at least one published photo, by rating.
    pub(crate) media_ratings: [T; 5],
    /// The answers to the product's attributes (see `stats::attributes`).
    pub(crate) attributes: AttributeCounts<T>,
}

impl<T: Copy + Default + PartialEq + std::ops::AddAssign> ProductCounts<T> {
    /// What one comment of `rating` counts for: `one` (1, or -1 to take it
    /// away) in its rating, among the verified ones if it is, among those
    /// with photos if it has a published one, and in each of its `answers`.
    pub(crate) fn of_comment(
        rating: Rating,
        verified: bool,
        with_media: bool,
        answers: &AttributeAnswers,
        one: T,
    ) -> ProductCounts<T> {
        let slot = usize::from(rating.get() - 1);
        let mut counts = ProductCounts::<T> {
            attributes: AttributeCounts::of_answers(answers, one),
            ..ProductCounts::default()
        };
        counts.ratings[slot] = one;
        if verified {
            counts.verified = one;
            counts.verified_ratings[slot] = one;
        }
        if with_media {
            counts.media_ratings[slot] = one;
        }
        counts
    }

    pub(crate) fn is_zero(&self) -> bool {
        let zero = T::default();
        self.verified == zero
            && self.ratings.iter().all(|c| *c == zero)
            && self.verified_ratings.iter().all(|c| *c == zero)
            && self.media_ratings.iter().all(|c| *c == zero)
            && self.attributes.is_zero()
    }

    pub(crate) fn add(&mut self, other: &ProductCounts<T>) {
        for (total, part) in self.ratings.iter_mut().zip(other.ratings) {
            *total += part;
        }
        self.verified += other.verified;
        for (total, part) in self.verified_ratings.iter_mut().zip(other.verified_ratings) {
            *total += part;
        }
        for (total, part) in self.media_ratings.iter_mut().zip(other.media_ratings) {
            *total += part;
        }
        self.attributes.add(&other.attributes);
    }
}

impl ProductCounts {
    /// Every counted comment, whatever its rating.
    pub(crate) fn total(&self) -> u64 {
        self.ratings.iter().sum()
    }

    /// Counted comments with at least one published photo.
    pub(crate) fn media_total(&self) -> u64 {
        self.media_ratings.iter().sum()
    }

    /// The verified comments by rating, when they add up to the verified
    /// total: an item written before they were counted (or drifted) has
    /// none to offer until `reconcile --fix` recounts it. The aggregator
    /// never lets a count fall below 0, so a per-rating count can only
    /// fall short of the truth, and the sums agree only when every
    /// per-rating count is exact.
    pub(crate) fn verified_by_rating(&self) -> Option<[u64; 5]> {
        (self.verified_ratings.iter().sum::<u64>() == self.verified)
            .then_some(self.verified_ratings)
    }
}

/// A product's statistics item with `counts`.
pub(crate) fn encode(
    product: &ProductId,
    language: Option<&Language>,
    counts: &ProductCounts,
) -> Item {
    let mut item = key(product, language);
    item.insert(PRODUCT_ID.into(), AttributeValue::s(product.as_str()));
    if let Some(language) = language {
        item.insert(LANGUAGE.into(), AttributeValue::s(language.as_str()));
    }
    for (i, count) in counts.ratings.iter().enumerate() {
        item.insert(count_attribute(i + 1), number(*count));
    }
    item.insert(COUNT_TOTAL.into(), number(counts.total()));
    if counts.verified > 0 {
        item.insert(VERIFIED_TOTAL.into(), number(counts.verified));
    }
    for (i, count) in counts.verified_ratings.iter().enumerate() {
        if *count > 0 {
            item.insert(verified_attribute(i + 1), number(*count));
        }
    }
    for (i, count) in counts.media_ratings.iter().enumerate() {
        if *count > 0 {
            item.insert(media_attribute(i + 1), number(*count));
        }
    }
    attributes::encode(&mut item, &counts.attributes);
    leaderboard::enter(&mut item, product, language, counts.ratings[4]);
    item
}

pub(crate) fn decode(item: &(impl ItemView + ?Sized)) -> Result<ProductCounts, Malformed> {
    let mut counts = ProductCounts::default();
    for (i, slot) in counts.ratings.iter_mut().enumerate() {
        *slot = count(item, &count_attribute(i + 1))?;
    }
    if item.attribute(VERIFIED_TOTAL).is_some() {
        counts.verified = count(item, VERIFIED_TOTAL)?;
    }
    for (slots, name) in [
        (
            &mut counts.verified_ratings,
            verified_attribute as fn(usize) -> String,
        ),
        (&mut counts.media_ratings, media_attribute),
    ] {
        for (i, slot) in slots.iter_mut().enumerate() {
            let attribute = name(i + 1);
            if item.attribute(&attribute).is_some() {
                *slot = count(item, &attribute)?;
            }
        }
    }
    counts.attributes = attributes::decode(item)?;
    Ok(counts)
}

/// Stamps a product's overall statistics item with its revision.
pub(crate) fn set_revision(item: &mut Item, revision: u64) {
    item.insert(REVISION.into(), number(revision));
}

/// The revision of a product's overall statistics item; 0 before any.
pub(crate) fn decode_revision(item: &(impl ItemView + ?Sized)) -> Result<u64, Malformed> {
    match item.attribute(REVISION) {
        None => Ok(0),
        Some(_) => count(item, REVISION),
    }
}

/// A product's statistics item as a recount compares it: the revision is
/// not a statistic, and an item whose counts are all zero (kept only to
/// carry the revision) means the same as no item.
pub(crate) fn comparable(item: &Item) -> Option<Item> {
    if count(item, COUNT_TOTAL).is_ok_and(|total| total == 0) {
        return None;
    }
    let mut item = item.clone();
    item.remove(REVISION);
    Some(item)
}

/// What a repair writes over a stored overall item that carries a revision:
/// the recounted item (or zero counts), at the next revision. `None` when
/// the stored item carries no revision.
pub(crate) fn repaired(stored: &Item, recounted: Option<&Item>) -> Option<Item> {
    let revision = decode_revision(stored).ok().filter(|r| *r > 0)?;
    let mut item = match recounted {
        Some(item) => item.clone(),
        None => {
            let product = ProductId::parse(text(stored, PRODUCT_ID).ok()?).ok()?;
            encode(&product, None, &ProductCounts::default())
        }
    };
    set_revision(&mut item, revision + 1);
    Some(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratings(ratings: [u64; 5]) -> ProductCounts {
        ProductCounts {
            ratings,
            ..ProductCounts::default()
        }
    }

    fn p() -> ProductId {
        ProductId::parse("p").unwrap()
    }

    #[test]
    fn a_product_round_trips() {
        let counts = ProductCounts {
            ratings: [1, 0, 7, 2, 9],
            verified: 4,
            verified_ratings: [1, 0, 3, 0, 0],
            media_ratings: [0, 0, 2, 1, 0],
            attributes: AttributeCounts::of_answers(&crate::attributes::test_answers(), 3),
        };
        let item = encode(&p(), Some(&Language::parse("de").unwrap()), &counts);
        assert_eq!(item[VERIFIED_TOTAL], number(4));
        assert_eq!(item["verified_3"], number(3));
        assert!(!item.contains_key("verified_2"), "absent at 0");
        assert_eq!(item["media_3"], number(2));
        assert!(!item.contains_key("media_5"), "absent at 0");
        assert_eq!(decode(&item).unwrap(), counts);
        assert_eq!(counts.media_total(), 3);
        assert_eq!(counts.verified_by_rating(), Some([1, 0, 3, 0, 0]));
        let unverified = encode(&p(), None, &ratings([1, 0, 0, 0, 0]));
        assert!(!unverified.contains_key(VERIFIED_TOTAL), "absent at 0");
        assert_eq!(decode(&unverified).unwrap().verified, 0);
        assert_eq!(decode(&unverified).unwrap().media_ratings, [0; 5]);
        assert_eq!(
            decode(&unverified).unwrap().verified_by_rating(),
            Some([0; 5])
        );
    }

    #[test]
    fn a_comment_counts_in_its_rating_and_among_the_verified_if_it_is() {
        let four = Rating::new(4).unwrap();
        let none = AttributeAnswers::default();
        let counts = ProductCounts::of_comment(four, true, false, &none, -1i64);
        assert_eq!(counts.ratings, [0, 0, 0, -1, 0]);
        assert_eq!((counts.verified, counts.verified_ratings[3]), (-1, -1));
        assert_eq!(counts.media_ratings, [0; 5]);
        let counts = ProductCounts::of_comment(four, false, true, &none, 1u64);
        assert_eq!((counts.total(), counts.verified), (1, 0));
        assert_eq!((counts.media_total(), counts.media_ratings[3]), (1, 1));
    }

    #[test]
    fn verified_counts_by_rating_are_trusted_only_when_they_add_up() {
        // An item from before the per-rating counts: only the total.
        let mut item = encode(&p(), None, &ratings([2, 0, 0, 0, 3]));
        item.insert(VERIFIED_TOTAL.into(), number(4));
        let counts = decode(&item).unwrap();
        assert_eq!((counts.verified, counts.verified_ratings), (4, [0; 5]));
        assert_eq!(counts.verified_by_rating(), None);
        // The aggregator has counted one verified 5-star comment since.
        let mut after = counts.clone();
        after.verified += 1;
        after.verified_ratings[4] += 1;
        assert_eq!(after.verified_by_rating(), None);
    }

    #[test]
    fn revisions_are_not_statistics_and_zero_counts_mean_no_item() {
        let mut item = encode(&p(), None, &ratings([0, 1, 0, 0, 0]));
        assert_eq!(decode_revision(&item).unwrap(), 0);
        let plain = item.clone();
        set_revision(&mut item, 17);
        assert_eq!(decode_revision(&item).unwrap(), 17);
        assert_eq!(comparable(&item), Some(plain));
        let mut zero = encode(&p(), None, &ratings([0; 5]));
        set_revision(&mut zero, 18);
        assert_eq!(comparable(&zero), None);
        assert_eq!(decode(&zero).unwrap(), ProductCounts::default());
        let repaired = repaired(&zero, None).unwrap();
        assert_eq!(decode_revision(&repaired).unwrap(), 19);
    }

    #[test]
    fn a_malformed_statistics_item_is_an_error_naming_its_key() {
        let mut item = encode(&p(), None, &ratings([1, 0, 0, 0, 0]));
        item.remove("count_3");
        let error = decode(&item).unwrap_err();
        assert_eq!(error.key, "PRODUCT#p/S");
        assert!(error.what.contains("count_3"));
    }
}

//! The statistics items the aggregator maintains: per product (overall and
//! per language), per author, and the global totals as partial items summed
//! on read; and the leaderboard, a sparse entry of the product statistics in
//! the overloaded `byLangAndRating` index, spread over shards merged on read
//! (docs/capacity.md, 6.1 and 6.2).

use rave_store::{AttributeValue, Condition, Item, KeyCondition};
use sha2::{Digest, Sha256};

use super::{GSISK, Index, Malformed, PK, SK, count, key, number, signed, text};
use crate::model::{AUTHOR_BUCKETS, GlobalStats};

pub(super) const PRODUCT_PREFIX: &str = "PRODUCT#";
pub(super) const AUTHOR_PREFIX: &str = "AUTHOR#";
/// The partition of the single totals item of the old layout; the partial
/// totals items are `AGGREGATES#<slot>`.
pub(super) const TOTALS_PK: &str = "AGGREGATES";
const TOTALS_SK: &str = "TOTALS";

/// How many partial totals items there are: commits pick one at random, so
/// that aggregators seldom write the same one (docs/capacity.md, 6.2).
pub(crate) const TOTALS_SLOTS: usize = 64;
/// How many shards each leaderboard is written over: every product's entry
/// sits in the shard of its hash (docs/capacity.md, 6.1 derives 128).
pub(crate) const LEADERBOARD_SHARDS: u64 = 128;

const PRODUCT_ID: &str = "product_id";
const LANGUAGE: &str = "language";
const COUNT_TOTAL: &str = "count_total";
/// Counted comments a purchase verified; absent while there are none, so
/// items written before verification existed read (and compare) as 0.
const VERIFIED_TOTAL: &str = "verified_total";
const AUTHOR: &str = "author";
const AUTHOR_COUNT: &str = "count";
const COMMENTS_TOTAL: &str = "comments_total";
const PRODUCTS_TOTAL: &str = "products_total";
const AUTHORS_TOTAL: &str = "authors_total";
/// On a product's overall item: increases with every change the aggregator
/// applies to any visible comment of the product (see `revision`).
const REVISION: &str = "revision";
/// A token no two writes of a statistics item share (a ULID), so that a
/// write can be conditional on the item being exactly as it was read.
const VERSION: &str = "version";

fn count_attribute(rating: usize) -> String {
    format!("count_{rating}")
}

/// Counted verified comments of one rating (`verified_1`..`verified_5`),
/// absent at 0 like the total.
fn verified_attribute(rating: usize) -> String {
    format!("verified_{rating}")
}

fn authors_attribute(bucket: usize) -> String {
    format!("authors_{}", bucket + 1)
}

/// The statistics item of a product, overall (`S`) or in one language (`S#<lang>`).
pub(crate) fn product_key(product: &str, language: Option<&str>) -> Item {
    key(
        format!("{PRODUCT_PREFIX}{product}"),
        match language {
            Some(l) => format!("S#{l}"),
            None => "S".to_owned(),
        },
    )
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProductCounts<T = u64> {
    pub(crate) ratings: [T; 5],
    pub(crate) verified: T,
    pub(crate) verified_ratings: [T; 5],
}

impl<T: Copy + Default + PartialEq + std::ops::AddAssign> ProductCounts<T> {
    pub(crate) fn is_zero(&self) -> bool {
        let zero = T::default();
        self.verified == zero
            && self.ratings.iter().all(|c| *c == zero)
            && self.verified_ratings.iter().all(|c| *c == zero)
    }

    pub(crate) fn add(&mut self, other: &ProductCounts<T>) {
        for (total, part) in self.ratings.iter_mut().zip(other.ratings) {
            *total += part;
        }
        self.verified += other.verified;
        for (total, part) in self.verified_ratings.iter_mut().zip(other.verified_ratings) {
            *total += part;
        }
    }
}

impl ProductCounts {
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
pub(crate) fn encode_product(
    product: &str,
    language: Option<&str>,
    counts: &ProductCounts,
) -> Item {
    let ProductCounts {
        ratings: counts,
        verified,
        verified_ratings,
    } = counts;
    let mut item = product_key(product, language);
    item.insert(PRODUCT_ID.into(), AttributeValue::s(product));
    if let Some(language) = language {
        item.insert(LANGUAGE.into(), AttributeValue::s(language));
    }
    for (i, count) in counts.iter().enumerate() {
        item.insert(count_attribute(i + 1), number(*count));
    }
    item.insert(COUNT_TOTAL.into(), number(counts.iter().sum()));
    if *verified > 0 {
        item.insert(VERIFIED_TOTAL.into(), number(*verified));
    }
    for (i, count) in verified_ratings.iter().enumerate() {
        if *count > 0 {
            item.insert(verified_attribute(i + 1), number(*count));
        }
    }
    // The product is on the leaderboard only while it has 5-star comments
    // (a sparse entry in the overloaded index).
    if counts[4] > 0 {
        item.insert(
            Index::ByLangAndRating.partition_attribute().into(),
            AttributeValue::S(leaderboard_partition(
                language,
                Some(leaderboard_shard(product)),
            )),
        );
        item.insert(
            GSISK.into(),
            AttributeValue::S(leaderboard_sort_key(counts[4])),
        );
    }
    item
}

pub(crate) fn decode_product(item: &Item) -> Result<ProductCounts, Malformed> {
    let mut counts = ProductCounts::default();
    for (i, slot) in counts.ratings.iter_mut().enumerate() {
        *slot = count(item, &count_attribute(i + 1))?;
    }
    if item.contains_key(VERIFIED_TOTAL) {
        counts.verified = count(item, VERIFIED_TOTAL)?;
    }
    for (i, slot) in counts.verified_ratings.iter_mut().enumerate() {
        let attribute = verified_attribute(i + 1);
        if item.contains_key(&attribute) {
            *slot = count(item, &attribute)?;
        }
    }
    Ok(counts)
}

/// Stamps a product's overall statistics item with its revision.
pub(crate) fn set_revision(item: &mut Item, revision: u64) {
    item.insert(REVISION.into(), number(revision));
}

/// The revision of a product's overall statistics item; 0 before any.
pub(crate) fn decode_revision(item: &Item) -> Result<u64, Malformed> {
    match item.get(REVISION) {
        None => Ok(0),
        Some(_) => count(item, REVISION),
    }
}

/// A product's statistics item as a recount compares it: the revision is
/// not a statistic, and an item whose counts are all zero (kept only to
/// carry the revision) means the same as no item.
pub(crate) fn comparable_product(item: &Item) -> Option<Item> {
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
pub(crate) fn repaired_product(stored: &Item, recounted: Option<&Item>) -> Option<Item> {
    let revision = decode_revision(stored).ok().filter(|r| *r > 0)?;
    let mut item = match recounted {
        Some(item) => item.clone(),
        None => encode_product(
            text(stored, PRODUCT_ID).ok()?,
            None,
            &ProductCounts::default(),
        ),
    };
    set_revision(&mut item, revision + 1);
    Some(item)
}

/// The partition of a product: its record and every statistics item.
pub(crate) fn product_partition(product: &str) -> KeyCondition {
    KeyCondition::partition(PK, format!("{PRODUCT_PREFIX}{product}"))
}

/// What an item of a product's partition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProductItem<'a> {
    Overall,
    Language(&'a str),
    Record,
}

pub(crate) fn classify_product_item(item: &Item) -> Result<ProductItem<'_>, Malformed> {
    let sort_key = text(item, SK)?;
    if sort_key == super::product::SORT_KEY {
        return Ok(ProductItem::Record);
    }
    match sort_key.strip_prefix('S') {
        Some("") => Ok(ProductItem::Overall),
        Some(rest) => match rest.strip_prefix('#') {
            Some(language) => Ok(ProductItem::Language(language)),
            None => Err(Malformed::new(
                item,
                "unknown item in a product's partition",
            )),
        },
        None => Err(Malformed::new(
            item,
            "unknown item in a product's partition",
        )),
    }
}

pub(crate) fn author_key(author: &str) -> Item {
    key(format!("{AUTHOR_PREFIX}{author}"), "S".to_owned())
}

/// How many counted comments an author has.
pub(crate) fn encode_author(author: &str, comments: u64) -> Item {
    let mut item = author_key(author);
    item.insert(AUTHOR.into(), AttributeValue::s(author));
    item.insert(AUTHOR_COUNT.into(), number(comments));
    item
}

pub(crate) fn decode_author(item: &Item) -> Result<u64, Malformed> {
    count(item, AUTHOR_COUNT)
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

/// The partial totals item `slot` (`0..TOTALS_SLOTS`).
pub(crate) fn totals_key(slot: usize) -> Item {
    key(format!("{TOTALS_PK}#{slot}"), TOTALS_SK.to_owned())
}

/// The single totals item of the layout before partial totals: read (and
/// counted) until `reconcile --fix` folds it into the partials.
pub(crate) fn legacy_totals_key() -> Item {
    key(TOTALS_PK.to_owned(), TOTALS_SK.to_owned())
}

/// Every totals item a reader sums: the partials and the legacy item.
pub(crate) fn all_totals_keys() -> Vec<Item> {
    (0..TOTALS_SLOTS)
        .map(totals_key)
        .chain([legacy_totals_key()])
        .collect()
}

pub(crate) fn encode_totals(slot: usize, part: &TotalsPart) -> Item {
    let mut item = totals_key(slot);
    item.insert(COMMENTS_TOTAL.into(), signed_number(part.comments));
    item.insert(PRODUCTS_TOTAL.into(), signed_number(part.products));
    item.insert(AUTHORS_TOTAL.into(), signed_number(part.authors));
    for (i, authors) in part.authors_by_comment_count.iter().enumerate() {
        item.insert(authors_attribute(i), signed_number(*authors));
    }
    item
}

fn signed_number(value: i64) -> AttributeValue {
    AttributeValue::N(rave_store::Number::from(value))
}

/// A partial totals item, or the legacy totals item.
pub(crate) fn decode_totals(item: &Item) -> Result<TotalsPart, Malformed> {
    let mut part = TotalsPart {
        comments: signed(item, COMMENTS_TOTAL)?,
        products: signed(item, PRODUCTS_TOTAL)?,
        authors: signed(item, AUTHORS_TOTAL)?,
        authors_by_comment_count: [0; AUTHOR_BUCKETS],
    };
    for (i, slot) in part.authors_by_comment_count.iter_mut().enumerate() {
        *slot = signed(item, &authors_attribute(i))?;
    }
    Ok(part)
}

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

/// The leaderboard shard of a product: the first 8 bytes of SHA-256 of its
/// id, big-endian, modulo [`LEADERBOARD_SHARDS`] — stable across processes
/// and releases.
fn leaderboard_shard(product: &str) -> u64 {
    let digest = Sha256::digest(product.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % LEADERBOARD_SHARDS
}

/// A leaderboard partition of the overloaded `byLangAndRating` index:
/// `LEADERS[#<lang>]#<shard>`, or without a shard the single partition of
/// the layout before sharding.
fn leaderboard_partition(language: Option<&str>, shard: Option<u64>) -> String {
    let board = match language {
        Some(l) => format!("LEADERS#{l}"),
        None => "LEADERS".to_owned(),
    };
    match shard {
        Some(n) => format!("{board}#{n}"),
        None => board,
    }
}

/// Every partition a reader merges for one leaderboard: its shards, and the
/// unsharded partition of the old layout until `reconcile --fix` moves its
/// entries (an item has one partition key, so no product is in two).
pub(crate) fn leaderboard_partitions(language: Option<&str>) -> Vec<String> {
    (0..LEADERBOARD_SHARDS)
        .map(Some)
        .chain([None])
        .map(|shard| leaderboard_partition(language, shard))
        .collect()
}

/// A 5-star count as a leaderboard sort key: `GSISK` holds strings (dates
/// on comments), so counts are zero-padded to sort as text.
fn leaderboard_sort_key(five_star: u64) -> String {
    format!("{five_star:012}")
}

/// A leaderboard entry: the product and its 5-star count.
pub(crate) fn decode_leader(item: &Item) -> Result<(String, u64), Malformed> {
    let product = text(item, PRODUCT_ID)?.to_owned();
    let five_star = text(item, GSISK)?
        .parse()
        .map_err(|_| Malformed::new(item, "the leaderboard sort key is not a count"))?;
    Ok((product, five_star))
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
    use crate::table::describe_key;

    #[test]
    fn a_write_holds_only_on_the_version_it_read() {
        let read = with_new_version(encode_author("a", 1));
        let condition = unchanged_since(Some(&read));
        assert!(condition.evaluate(&read));
        assert!(!condition.evaluate(&with_new_version(encode_author("a", 1))));
        assert!(!condition.evaluate(&encode_author("a", 1)));
        let absent = unchanged_since(None);
        assert!(absent.evaluate(&Item::new()));
        assert!(
            absent.evaluate(&encode_author("a", 1)),
            "written before versions"
        );
        assert!(!absent.evaluate(&read));
        assert_eq!(without_version(read), encode_author("a", 1));
    }

    #[test]
    fn leaderboard_keys_sort_as_text_and_vanish_at_zero() {
        let item = encode_product("p", None, &ratings([0, 0, 0, 0, 12]));
        let shard = leaderboard_shard("p");
        assert_eq!(item["GSIPK"], AttributeValue::S(format!("LEADERS#{shard}")));
        assert_eq!(item["GSISK"], AttributeValue::s("000000000012"));
        assert_eq!(decode_leader(&item).unwrap(), ("p".to_owned(), 12));
        assert!(leaderboard_sort_key(9) < leaderboard_sort_key(10));
        let item = encode_product("p", Some("en"), &ratings([3, 0, 0, 0, 0]));
        assert!(!item.contains_key("GSIPK") && !item.contains_key("GSISK"));
        assert_eq!(
            encode_product("p", Some("en"), &ratings([0, 0, 0, 0, 1]))["GSIPK"],
            AttributeValue::S(format!("LEADERS#en#{shard}"))
        );
    }

    #[test]
    fn leaderboard_shards_are_stable_and_all_used() {
        // SHA-256("p") begins 148de9c5a7a44d19: 0x148de9c5a7a44d19 mod 128 = 25.
        assert_eq!(leaderboard_shard("p"), 0x148d_e9c5_a7a4_4d19 % 128);
        let used: std::collections::BTreeSet<u64> = (0..5000)
            .map(|i| leaderboard_shard(&format!("product-{i}")))
            .collect();
        assert_eq!(used.len() as u64, LEADERBOARD_SHARDS);
        let partitions = leaderboard_partitions(Some("en"));
        assert_eq!(partitions.len() as u64, LEADERBOARD_SHARDS + 1);
        assert!(partitions.contains(&"LEADERS#en#127".to_owned()));
        assert!(partitions.contains(&"LEADERS#en".to_owned()));
    }

    #[test]
    fn every_statistics_item_round_trips() {
        let counts = ProductCounts {
            ratings: [1, 0, 7, 2, 9],
            verified: 4,
            verified_ratings: [1, 0, 3, 0, 0],
        };
        let item = encode_product("p", Some("de"), &counts);
        assert_eq!(item[VERIFIED_TOTAL], number(4));
        assert_eq!(item["verified_3"], number(3));
        assert!(!item.contains_key("verified_2"), "absent at 0");
        assert_eq!(decode_product(&item).unwrap(), counts);
        assert_eq!(counts.verified_by_rating(), Some([1, 0, 3, 0, 0]));
        let unverified = encode_product("p", None, &ratings([1, 0, 0, 0, 0]));
        assert!(!unverified.contains_key(VERIFIED_TOTAL), "absent at 0");
        assert_eq!(decode_product(&unverified).unwrap().verified, 0);
        assert_eq!(
            decode_product(&unverified).unwrap().verified_by_rating(),
            Some([0; 5])
        );
        assert_eq!(decode_author(&encode_author("a", 4)).unwrap(), 4);
        let part = TotalsPart {
            comments: 19,
            products: -1,
            authors: 3,
            authors_by_comment_count: [1, -1, 0, 0, 0, 0, 0, 0, 0, 1],
        };
        let item = encode_totals(7, &part);
        assert_eq!(describe_key(&item), "AGGREGATES#7/TOTALS");
        assert_eq!(decode_totals(&item).unwrap(), part);
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

    #[test]
    fn verified_counts_by_rating_are_trusted_only_when_they_add_up() {
        // An item from before the per-rating counts: only the total.
        let mut item = encode_product("p", None, &ratings([2, 0, 0, 0, 3]));
        item.insert(VERIFIED_TOTAL.into(), number(4));
        let counts = decode_product(&item).unwrap();
        assert_eq!((counts.verified, counts.verified_ratings), (4, [0; 5]));
        assert_eq!(counts.verified_by_rating(), None);
        // The aggregator has counted one verified 5-star comment since.
        let mut after = counts;
        after.verified += 1;
        after.verified_ratings[4] += 1;
        assert_eq!(after.verified_by_rating(), None);
    }

    #[test]
    fn revisions_are_not_statistics_and_zero_counts_mean_no_item() {
        let mut item = encode_product("p", None, &ratings([0, 1, 0, 0, 0]));
        assert_eq!(decode_revision(&item).unwrap(), 0);
        let plain = item.clone();
        set_revision(&mut item, 17);
        assert_eq!(decode_revision(&item).unwrap(), 17);
        assert_eq!(comparable_product(&item), Some(plain));
        let mut zero = encode_product("p", None, &ratings([0; 5]));
        set_revision(&mut zero, 18);
        assert_eq!(comparable_product(&zero), None);
        assert_eq!(decode_product(&zero).unwrap(), ProductCounts::default());
    }

    #[test]
    fn a_product_partition_holds_its_record_and_statistics() {
        let overall = product_key("p", None);
        let german = product_key("p", Some("de"));
        let record = super::super::product::product_key("p");
        assert_eq!(
            classify_product_item(&overall).unwrap(),
            ProductItem::Overall
        );
        assert_eq!(
            classify_product_item(&german).unwrap(),
            ProductItem::Language("de")
        );
        assert_eq!(classify_product_item(&record).unwrap(), ProductItem::Record);
        assert!(classify_product_item(&key("PRODUCT#p".into(), "X".into())).is_err());
    }

    #[test]
    fn a_malformed_statistics_item_is_an_error_naming_its_key() {
        let mut item = encode_product("p", None, &ratings([1, 0, 0, 0, 0]));
        item.remove("count_3");
        let error = decode_product(&item).unwrap_err();
        assert_eq!(error.key, "PRODUCT#p/S");
        assert!(error.what.contains("count_3"));
        let mut item = encode_author("a", 1);
        item.insert(
            AUTHOR_COUNT.into(),
            AttributeValue::N(rave_store::Number::from(-1i64)),
        );
        assert!(decode_author(&item).is_err());
    }
}

//! The statistics items the aggregator maintains: per product (overall and
//! per language), per author, and the global totals; and the leaderboard,
//! a sparse entry of the product statistics in the overloaded
//! `byLangAndRating` index.

use rave_store::{AttributeValue, Condition, Item};

use super::{GSISK, Index, Malformed, count, key, number, text};
use crate::model::{AUTHOR_BUCKETS, GlobalStats};

pub(super) const PRODUCT_PREFIX: &str = "PRODUCT#";
pub(super) const AUTHOR_PREFIX: &str = "AUTHOR#";
pub(super) const TOTALS_PK: &str = "AGGREGATES";

const PRODUCT_ID: &str = "product_id";
const LANGUAGE: &str = "language";
const COUNT_TOTAL: &str = "count_total";
const AUTHOR: &str = "author";
const AUTHOR_COUNT: &str = "count";
const COMMENTS_TOTAL: &str = "comments_total";
const PRODUCTS_TOTAL: &str = "products_total";
const AUTHORS_TOTAL: &str = "authors_total";
/// A token no two writes of a statistics item share (a ULID), so that a
/// write can be conditional on the item being exactly as it was read.
const VERSION: &str = "version";

fn count_attribute(rating: usize) -> String {
    format!("count_{rating}")
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

/// A product's per-rating counts (`[r - 1]` counts rating r).
pub(crate) fn encode_product(product: &str, language: Option<&str>, counts: &[u64; 5]) -> Item {
    let mut item = product_key(product, language);
    item.insert(PRODUCT_ID.into(), AttributeValue::s(product));
    if let Some(language) = language {
        item.insert(LANGUAGE.into(), AttributeValue::s(language));
    }
    for (i, count) in counts.iter().enumerate() {
        item.insert(count_attribute(i + 1), number(*count));
    }
    item.insert(COUNT_TOTAL.into(), number(counts.iter().sum()));
    // The product is on the leaderboard only while it has 5-star comments
    // (a sparse entry in the overloaded index).
    if counts[4] > 0 {
        item.insert(
            Index::ByLangAndRating.partition_attribute().into(),
            AttributeValue::S(leaderboard_partition(language)),
        );
        item.insert(
            GSISK.into(),
            AttributeValue::S(leaderboard_sort_key(counts[4])),
        );
    }
    item
}

pub(crate) fn decode_product(item: &Item) -> Result<[u64; 5], Malformed> {
    let mut counts = [0; 5];
    for (i, slot) in counts.iter_mut().enumerate() {
        *slot = count(item, &count_attribute(i + 1))?;
    }
    Ok(counts)
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

pub(crate) fn totals_key() -> Item {
    key(TOTALS_PK.to_owned(), "TOTALS".to_owned())
}

pub(crate) fn encode_totals(totals: &GlobalStats) -> Item {
    let mut item = totals_key();
    item.insert(COMMENTS_TOTAL.into(), number(totals.comments_total));
    item.insert(PRODUCTS_TOTAL.into(), number(totals.products_total));
    item.insert(AUTHORS_TOTAL.into(), number(totals.authors_total));
    for (i, authors) in totals.authors_by_comment_count.iter().enumerate() {
        item.insert(authors_attribute(i), number(*authors));
    }
    item
}

pub(crate) fn decode_totals(item: &Item) -> Result<GlobalStats, Malformed> {
    let mut totals = GlobalStats {
        comments_total: count(item, COMMENTS_TOTAL)?,
        products_total: count(item, PRODUCTS_TOTAL)?,
        authors_total: count(item, AUTHORS_TOTAL)?,
        authors_by_comment_count: [0; AUTHOR_BUCKETS],
    };
    for (i, slot) in totals.authors_by_comment_count.iter_mut().enumerate() {
        *slot = count(item, &authors_attribute(i))?;
    }
    Ok(totals)
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

/// The leaderboard partition of the overloaded `byLangAndRating` index.
pub(crate) fn leaderboard_partition(language: Option<&str>) -> String {
    match language {
        Some(l) => format!("LEADERS#{l}"),
        None => "LEADERS".to_owned(),
    }
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
        let item = encode_product("p", None, &[0, 0, 0, 0, 12]);
        assert_eq!(item["GSIPK"], AttributeValue::s("LEADERS"));
        assert_eq!(item["GSISK"], AttributeValue::s("000000000012"));
        assert_eq!(decode_leader(&item).unwrap(), ("p".to_owned(), 12));
        assert!(leaderboard_sort_key(9) < leaderboard_sort_key(10));
        let item = encode_product("p", Some("en"), &[3, 0, 0, 0, 0]);
        assert!(!item.contains_key("GSIPK") && !item.contains_key("GSISK"));
        assert_eq!(
            encode_product("p", Some("en"), &[0, 0, 0, 0, 1])["GSIPK"],
            AttributeValue::s("LEADERS#en")
        );
    }

    #[test]
    fn every_statistics_item_round_trips() {
        let counts = [1, 0, 7, 2, 9];
        assert_eq!(
            decode_product(&encode_product("p", Some("de"), &counts)).unwrap(),
            counts
        );
        assert_eq!(decode_author(&encode_author("a", 4)).unwrap(), 4);
        let totals = GlobalStats {
            comments_total: 19,
            products_total: 1,
            authors_total: 3,
            authors_by_comment_count: [1, 1, 0, 0, 0, 0, 0, 0, 0, 1],
        };
        assert_eq!(decode_totals(&encode_totals(&totals)).unwrap(), totals);
    }

    #[test]
    fn a_malformed_statistics_item_is_an_error_naming_its_key() {
        let mut item = encode_product("p", None, &[1, 0, 0, 0, 0]);
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

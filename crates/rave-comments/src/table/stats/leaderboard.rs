//! A product's leaderboard entry (AP11): the sparse entry of its
//! statistics item (overall, or in one language) in the overloaded
//! `byLangAndRating` index, present while it has 5-star comments:
//! `GSIPK` = `LEADERS[#<lang>]#<shard>`, `GSISK` = the 5-star count,
//! zero-padded. Every product's entry sits in the shard of its hash, so a
//! reader merges the top of each shard (docs/capacity.md, 6.1 derives 128
//! shards).
//!
//! `GSISK` is a string attribute, because on comments it holds dates, so
//! the count is zero-padded to 12 digits to sort as text. At 0 both keys
//! are removed and the product leaves the board. Sharding by the SHA-256 of
//! the product id keeps every product with a 5-star comment out of one hot
//! index partition; a product is in exactly one shard, so the merge of the
//! shards' tops (ties by product id) is the top.

use rave_store::{AttributeValue, Item, KeyCondition};
use sha2::{Digest, Sha256};

use crate::model::{Language, ProductId};
use crate::table::{GSISK, Index, Malformed, text};

/// The index the entries are in.
pub(crate) const INDEX: Index = Index::ByLangAndRating;

/// How many shards each leaderboard is written over.
pub(crate) const SHARDS: u64 = 128;

/// The product a statistics item (and so its entry) is of.
pub(in crate::table) const PRODUCT_ID: &str = "product_id";

/// The leaderboard shard of a product: the first 8 bytes of SHA-256 of its
/// id, big-endian, modulo [`SHARDS`] — stable across processes and
/// releases.
fn shard(product: &ProductId) -> u64 {
    let digest = Sha256::digest(product.as_str().as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % SHARDS
}

/// A leaderboard partition: `LEADERS[#<lang>]#<shard>`, or without a shard
/// the single partition of the layout before sharding.
fn partition(language: Option<&Language>, shard: Option<u64>) -> String {
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
pub(crate) fn partitions(language: Option<&Language>) -> Vec<KeyCondition> {
    (0..SHARDS)
        .map(Some)
        .chain([None])
        .map(|shard| {
            KeyCondition::partition(INDEX.partition_attribute(), partition(language, shard))
        })
        .collect()
}

/// A 5-star count as a sort key: `GSISK` holds strings (dates on
/// comments), so counts are zero-padded to sort as text.
fn sort_key(five_star: u64) -> String {
    format!("{five_star:012}")
}

/// Enters the product on the leaderboard through its statistics `item`,
/// if it has any 5-star comments.
pub(in crate::table) fn enter(
    item: &mut Item,
    product: &ProductId,
    language: Option<&Language>,
    five_star: u64,
) {
    if five_star == 0 {
        return;
    }
    item.insert(
        INDEX.partition_attribute().into(),
        AttributeValue::S(partition(language, Some(shard(product)))),
    );
    item.insert(GSISK.into(), AttributeValue::S(sort_key(five_star)));
}

/// An entry: the product and its 5-star count.
pub(crate) fn decode(item: &Item) -> Result<(ProductId, u64), Malformed> {
    let product = ProductId::parse(text(item, PRODUCT_ID)?)
        .map_err(|e| Malformed::new(item, format!("{PRODUCT_ID}: {e}")))?;
    let five_star = text(item, GSISK)?
        .parse()
        .map_err(|_| Malformed::new(item, "the leaderboard sort key is not a count"))?;
    Ok((product, five_star))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::stats::product::{self, ProductCounts};

    fn five_star(count: u64) -> ProductCounts {
        ProductCounts {
            ratings: [0, 0, 0, 0, count],
            ..ProductCounts::default()
        }
    }

    #[test]
    fn leaderboard_keys_sort_as_text_and_vanish_at_zero() {
        let p = ProductId::parse("p").unwrap();
        let en = Language::parse("en").unwrap();
        let item = product::encode(&p, None, &five_star(12));
        let shard = shard(&p);
        assert_eq!(item["GSIPK"], AttributeValue::S(format!("LEADERS#{shard}")));
        assert_eq!(item["GSISK"], AttributeValue::s("000000000012"));
        assert_eq!(decode(&item).unwrap(), (p.clone(), 12));
        assert!(sort_key(9) < sort_key(10));
        let three_one_star = ProductCounts {
            ratings: [3, 0, 0, 0, 0],
            ..ProductCounts::default()
        };
        let item = product::encode(&p, Some(&en), &three_one_star);
        assert!(!item.contains_key("GSIPK") && !item.contains_key("GSISK"));
        assert_eq!(
            product::encode(&p, Some(&en), &five_star(1))["GSIPK"],
            AttributeValue::S(format!("LEADERS#en#{shard}"))
        );
    }

    #[test]
    fn leaderboard_shards_are_stable_and_all_used() {
        // SHA-256("p") begins 148de9c5a7a44d19: 0x148de9c5a7a44d19 mod 128 = 25.
        assert_eq!(
            shard(&ProductId::parse("p").unwrap()),
            0x148d_e9c5_a7a4_4d19 % 128
        );
        let used: std::collections::BTreeSet<u64> = (0..5000)
            .map(|i| shard(&ProductId::parse(&format!("product-{i}")).unwrap()))
            .collect();
        assert_eq!(used.len() as u64, SHARDS);
        let en = Language::parse("en").unwrap();
        assert_eq!(partitions(Some(&en)).len() as u64, SHARDS + 1);
        assert_eq!(partition(Some(&en), Some(127)), "LEADERS#en#127");
        assert_eq!(partition(Some(&en), None), "LEADERS#en");
    }
}

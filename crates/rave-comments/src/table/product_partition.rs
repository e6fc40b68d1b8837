//! A product's partition (`PRODUCT#<p>`): its record (`PRODUCT`), its
//! overall statistics item (`S`) and one statistics item per language
//! (`S#<lang>`), so one query reads everything a product's page shows.
//! The record's codec (`product`) and the statistics' (`stats::product`)
//! both key their items here.

use rave_store::{Item, KeyCondition};

use super::{Malformed, PK, SK, key, text};
use crate::model::{Language, ProductId};

pub(super) const PREFIX: &str = "PRODUCT#";
/// The sort key of the product's record.
pub(super) const RECORD: &str = "PRODUCT";
/// The sort key of the product's overall statistics item.
const OVERALL: &str = "S";
/// Before the language, in the sort key of a language's statistics item.
const LANGUAGE_PREFIX: &str = "S#";

fn partition_key(product: &ProductId) -> String {
    format!("{PREFIX}{product}")
}

/// The product's record.
pub(super) fn record_key(product: &ProductId) -> Item {
    key(partition_key(product), RECORD.to_owned())
}

/// The product's statistics item, overall or in one language.
pub(super) fn stats_key(product: &ProductId, language: Option<&Language>) -> Item {
    let sort_key = match language {
        Some(language) => format!("{LANGUAGE_PREFIX}{language}"),
        None => OVERALL.to_owned(),
    };
    key(partition_key(product), sort_key)
}

/// Every item of the product's partition.
pub(crate) fn partition(product: &ProductId) -> KeyCondition {
    KeyCondition::partition(PK, partition_key(product))
}

/// What an item of a product's partition is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProductItem {
    Overall,
    Language(Language),
    Record,
}

pub(crate) fn classify(item: &Item) -> Result<ProductItem, Malformed> {
    let unknown = || Malformed::new(item, "unknown item in a product's partition");
    match text(item, SK)? {
        RECORD => Ok(ProductItem::Record),
        OVERALL => Ok(ProductItem::Overall),
        sort_key => {
            let language = sort_key.strip_prefix(LANGUAGE_PREFIX).ok_or_else(unknown)?;
            Language::parse(language)
                .map(ProductItem::Language)
                .map_err(|_| unknown())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_partition_holds_its_record_and_statistics() {
        let product = ProductId::parse("p").unwrap();
        let german = Language::parse("de").unwrap();
        assert_eq!(
            classify(&stats_key(&product, None)).unwrap(),
            ProductItem::Overall
        );
        assert_eq!(
            classify(&stats_key(&product, Some(&german))).unwrap(),
            ProductItem::Language(german)
        );
        assert_eq!(
            classify(&record_key(&product)).unwrap(),
            ProductItem::Record
        );
        for sort_key in ["X", "S#", "S#DE", "SS"] {
            let item = key("PRODUCT#p".into(), sort_key.into());
            assert!(classify(&item).is_err(), "{sort_key}");
        }
    }
}

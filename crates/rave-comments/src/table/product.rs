//! The product record an admin sets: a product's display name, page,
//! image and identifiers (GTINs, MPNs and SKUs as lists of strings in
//! their given order, the brand as a string; an empty list is not stored,
//! and a record written before identifiers existed reads as having none).
//! It lives in the product's partition beside its statistics
//! (`PRODUCT#<p>`/`PRODUCT`, see `product_partition`), so one query reads
//! a product's record and every statistics item of it.

use rave_store::{AttributeValue, Condition, Item};

use super::group::GROUP;
use super::product_partition::record_key;
use super::{Malformed, PK, text};
use crate::model::{ProductId, ProductRecord};

const NAME: &str = "name";
const URL: &str = "url";
const IMAGE: &str = "image";
const GTINS: &str = "gtins";
const MPNS: &str = "mpns";
const SKUS: &str = "skus";
const BRAND: &str = "brand";
/// What its reviews are asked for (`table::attributes`); absent when nothing.
const ATTRIBUTES: &str = "attributes";
/// A fresh ULID with every write: what caches compare.
const REVISION: &str = "revision";

pub(crate) fn key(product: &ProductId) -> Item {
    record_key(product)
}

/// A write that read the record at `revision` (`None`: there was none)
/// and must not overwrite a record written since.
pub(crate) fn unchanged(revision: Option<&str>) -> Condition {
    match revision {
        Some(revision) => Condition::eq(REVISION, AttributeValue::s(revision)),
        None => Condition::not_exists(PK),
    }
}

pub(crate) fn encode(product: &ProductId, record: &ProductRecord, revision: &str) -> Item {
    let mut item = key(product);
    item.insert(NAME.into(), AttributeValue::s(&record.name));
    if let Some(url) = &record.url {
        item.insert(URL.into(), AttributeValue::s(url));
    }
    if let Some(image) = &record.image {
        item.insert(IMAGE.into(), AttributeValue::s(image));
    }
    if let Some(brand) = &record.brand {
        item.insert(BRAND.into(), AttributeValue::s(brand));
    }
    for (name, values) in [
        (GTINS, &record.gtins),
        (MPNS, &record.mpns),
        (SKUS, &record.skus),
    ] {
        if !values.is_empty() {
            item.insert(
                name.into(),
                AttributeValue::L(values.iter().map(AttributeValue::s).collect()),
            );
        }
    }
    if let Some(group) = &record.group {
        item.insert(GROUP.into(), AttributeValue::s(group));
    }
    if let Some(declared) = super::attributes::encode_declaration(&record.attributes) {
        item.insert(ATTRIBUTES.into(), declared);
    }
    item.insert(REVISION.into(), AttributeValue::s(revision));
    item
}

/// A list of strings, or none when the attribute is absent.
fn texts(item: &Item, name: &str) -> Result<Vec<String>, Malformed> {
    let Some(value) = item.get(name) else {
        return Ok(Vec::new());
    };
    let not_texts = || Malformed::new(item, format!("{name} is not a list of strings"));
    match value {
        AttributeValue::L(values) => values
            .iter()
            .map(|v| v.as_s().map(str::to_owned).ok_or_else(not_texts))
            .collect(),
        _ => Err(not_texts()),
    }
}

/// The product whose record `item` is, from its key.
pub(crate) fn product_of(item: &Item) -> Result<ProductId, Malformed> {
    text(item, super::PK)?
        .strip_prefix(super::product_partition::PREFIX)
        .and_then(|id| ProductId::parse(id).ok())
        .ok_or_else(|| Malformed::new(item, "not a product record's key"))
}

/// The record and its revision.
pub(crate) fn decode(item: &Item) -> Result<(ProductRecord, String), Malformed> {
    let optional = |name: &str| -> Result<Option<String>, Malformed> {
        item.get(name)
            .map(|_| text(item, name).map(str::to_owned))
            .transpose()
    };
    Ok((
        ProductRecord {
            name: text(item, NAME)?.to_owned(),
            url: optional(URL)?,
            image: optional(IMAGE)?,
            gtins: texts(item, GTINS)?,
            mpns: texts(item, MPNS)?,
            skus: texts(item, SKUS)?,
            brand: optional(BRAND)?,
            group: optional(GROUP)?,
            attributes: super::attributes::decode_declaration(
                item,
                item.get(ATTRIBUTES),
                ATTRIBUTES,
            )?,
        },
        text(item, REVISION)?.to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_record_round_trips_and_names_its_key_when_broken() {
        let record = ProductRecord {
            name: "Kettle".into(),
            url: Some("https://shop.example/kettle".into()),
            image: None,
            gtins: vec!["4006381333931".into(), "036000291452".into()],
            mpns: vec!["KT-100".into()],
            skus: Vec::new(),
            brand: Some("Acme".into()),
            group: Some("kettles".into()),
            attributes: crate::attributes::test_declaration(),
        };
        let product = ProductId::parse("42").unwrap();
        let item = encode(&product, &record, "01JD3X0000000000000000000A");
        assert_eq!(
            decode(&item).unwrap(),
            (record.clone(), "01JD3X0000000000000000000A".to_owned())
        );
        let mut broken = item;
        broken.insert(
            NAME.into(),
            AttributeValue::N(rave_store::Number::from(1u64)),
        );
        assert_eq!(decode(&broken).unwrap_err().key, "PRODUCT#42/PRODUCT");
        let mut broken = encode(&product, &record, "01JD3X0000000000000000000A");
        broken.insert(
            GTINS.into(),
            AttributeValue::L(vec![AttributeValue::Bool(true)]),
        );
        assert_eq!(
            decode(&broken).unwrap_err().what,
            "gtins is not a list of strings"
        );
    }

    #[test]
    fn a_record_stored_before_identifiers_reads_without_them() {
        let product = ProductId::parse("42").unwrap();
        let old = ProductRecord {
            name: "Kettle".into(),
            ..ProductRecord::default()
        };
        let item = encode(&product, &old, "r");
        assert!(!item.contains_key(GTINS) && !item.contains_key(BRAND));
        assert_eq!(decode(&item).unwrap().0, old);
    }
}

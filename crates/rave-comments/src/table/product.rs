//! The product record an admin sets: a product's display name, page and
//! image. It lives in the product's partition beside its statistics
//! (`PRODUCT#<p>`/`PRODUCT`, see `product_partition`), so one query reads
//! a product's record and every statistics item of it.

use rave_store::{AttributeValue, Item};

use super::product_partition::record_key;
use super::{Malformed, text};
use crate::model::{ProductId, ProductRecord};

const NAME: &str = "name";
const URL: &str = "url";
const IMAGE: &str = "image";
/// A fresh ULID with every write: what caches compare.
const REVISION: &str = "revision";

pub(crate) fn key(product: &ProductId) -> Item {
    record_key(product)
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
    item.insert(REVISION.into(), AttributeValue::s(revision));
    item
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
        };
        let product = ProductId::parse("42").unwrap();
        let item = encode(&product, &record, "01JD3X0000000000000000000A");
        assert_eq!(
            decode(&item).unwrap(),
            (record, "01JD3X0000000000000000000A".to_owned())
        );
        let mut broken = item;
        broken.insert(
            NAME.into(),
            AttributeValue::N(rave_store::Number::from(1u64)),
        );
        assert_eq!(decode(&broken).unwrap_err().key, "PRODUCT#42/PRODUCT");
    }
}

//! A SKU's lookup item: which product's record names the SKU, so that an
//! import can find a product by a SKU its export gives (`SKU#<sku>` /
//! `SKU`, attribute `product`).
//!
//! A SKU names one product: a record that claims a SKU writes its lookup
//! item in the same transaction as the record, on the condition that the
//! item is absent (`unclaimed`), and a record that drops a SKU deletes it
//! in the same way, on the condition that it is still the product's
//! (`held_by`). So the lookup items are exactly the SKUs of the stored
//! records, each pointing at the record that lists it, and a SKU another
//! product holds is never taken over. No index, statistic or webhook
//! reads them (`ItemKind::Other`).

use rave_store::{AttributeValue, Condition, Item};

use super::{Malformed, PK, text};
use crate::model::{ProductId, Sku};

const PREFIX: &str = "SKU#";
const SORT_KEY: &str = "SKU";
const PRODUCT: &str = "product";

pub(crate) fn key(sku: &Sku) -> Item {
    super::key(format!("{PREFIX}{sku}"), SORT_KEY.to_owned())
}

pub(crate) fn encode(sku: &Sku, product: &ProductId) -> Item {
    let mut item = key(sku);
    item.insert(PRODUCT.into(), AttributeValue::s(product.as_str()));
    item
}

/// The SKU of a lookup item (from its key) and the product holding it.
pub(crate) fn decode(item: &Item) -> Result<(Sku, ProductId), Malformed> {
    let sku = text(item, PK)?
        .strip_prefix(PREFIX)
        .and_then(Sku::parse)
        .ok_or_else(|| Malformed::new(item, "the key names no SKU"))?;
    let product = ProductId::parse(text(item, PRODUCT)?)
        .map_err(|_| Malformed::new(item, "product is not a product id"))?;
    Ok((sku, product))
}

/// A claim writes the item only while no product holds the SKU.
pub(crate) fn unclaimed() -> Condition {
    Condition::not_exists(PK)
}

/// A release deletes the item only while `product` holds the SKU.
pub(crate) fn held_by(product: &ProductId) -> Condition {
    Condition::eq(PRODUCT, AttributeValue::s(product.as_str()))
}

#[cfg(test)]
mod tests {
    use super::super::{ItemKind, describe_key};
    use super::*;

    #[test]
    fn a_lookup_item_round_trips_and_is_no_comment() {
        let sku = Sku::parse("MUG #12 / blue").unwrap();
        let product = ProductId::parse("blue-mug").unwrap();
        let item = encode(&sku, &product);
        assert_eq!(describe_key(&item), "SKU#MUG #12 / blue/SKU");
        assert_eq!(decode(&item).unwrap(), (sku, product.clone()));
        assert_eq!(ItemKind::of(&item), ItemKind::Other);
        assert!(held_by(&product).evaluate(&item));
        assert!(!held_by(&ProductId::parse("plate").unwrap()).evaluate(&item));
        assert!(!unclaimed().evaluate(&item));
        let mut broken = item;
        broken.insert(PRODUCT.into(), AttributeValue::s("a/b"));
        assert_eq!(
            decode(&broken).unwrap_err().what,
            "product is not a product id"
        );
    }
}

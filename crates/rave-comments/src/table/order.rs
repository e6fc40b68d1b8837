//! The order verification: the record that an order has verified a
//! comment on a product. It is written in the same transaction as the
//! comment, on the condition that it does not exist yet, so one order
//! verifies at most one comment per product.
//!
//! It holds nothing but its key — no author, no comment id — and stays
//! when the comment is deleted or its author's data is erased: the order
//! has been used, and nothing personal remains in it.

use rave_store::{Condition, Item};

use super::PK;
use crate::model::{OrderId, ProductId};

const SORT_KEY: &str = "ORDER";

/// `ORDER#<product>#<order>`: a product id never holds `#`, so the order id
/// after it (any characters) cannot reach another product's item.
pub(crate) fn encode(product: &ProductId, order: &OrderId) -> Item {
    super::key(
        format!("ORDER#{product}#{}", order.as_str()),
        SORT_KEY.to_owned(),
    )
}

/// An order verifies once per product.
pub(crate) fn unused() -> Condition {
    Condition::not_exists(PK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_is_keyed_by_product_and_order() {
        let product = ProductId::parse("p-1").unwrap();
        let item = encode(&product, &OrderId::parse("A#7/b").unwrap());
        assert_eq!(super::super::describe_key(&item), "ORDER#p-1#A#7/b/ORDER");
    }
}

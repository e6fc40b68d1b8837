//! Order ids for the verified creates of the domain's scenarios.

use std::sync::atomic::{AtomicU64, Ordering};

/// An order id no other call in this process returns.
pub(crate) fn fresh_order() -> rave_comments::OrderId {
    static ORDERS: AtomicU64 = AtomicU64::new(0);
    let n = ORDERS.fetch_add(1, Ordering::Relaxed);
    rave_comments::OrderId::parse(&format!("order-{n}")).expect("a valid order id")
}

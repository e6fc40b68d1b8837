//! Where a change feed keeps a consumer's durable position, when the
//! position is an item of the table the feed reads (DynamoDB Streams: the
//! position must commit in the same transaction as the batch's effects).
//! The table belongs to its owner, so the owner says how such an item is
//! keyed and written; the backend's feed never names an attribute itself.

use crate::{Condition, Item, Result, Update};

pub trait PositionLayout: std::fmt::Debug + Send + Sync + 'static {
    /// The key of the item holding `consumer`'s position in `shard`.
    fn key(&self, consumer: &str, shard: &str) -> Item;
    /// The sequence number a stored position item holds.
    fn sequence(&self, item: &Item) -> Result<String>;
    /// The update that makes the item hold `sequence`.
    fn store(&self, sequence: &str) -> Update;
    /// The condition that the item still holds `previous` (`None`: that
    /// there is no item yet).
    fn holds(&self, previous: Option<&str>) -> Condition;
}

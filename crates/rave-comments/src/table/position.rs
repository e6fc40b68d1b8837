//! Where an aggregator on DynamoDB Streams keeps its position in each
//! shard: an item of the table, written in the same transaction as the
//! effects of the batch it moves past. The feed itself is backend code and
//! does not know this table, so the domain hands it this layout.

use rave_store::{AttributeValue, Condition, Item, PositionLayout, StoreError, Update};

use super::{Malformed, PK, key, text};

const SEQUENCE: &str = "sequence";

/// `AGGREGATOR#<consumer>` / `SHARD#<shard id>`, holding `sequence`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AggregatorPositions;

impl PositionLayout for AggregatorPositions {
    fn key(&self, consumer: &str, shard: &str) -> Item {
        key(format!("AGGREGATOR#{consumer}"), format!("SHARD#{shard}"))
    }

    fn sequence(&self, item: &Item) -> rave_store::Result<String> {
        text(item, SEQUENCE)
            .map(str::to_owned)
            .map_err(|Malformed { key, what }| StoreError::corrupt(key, what))
    }

    fn store(&self, sequence: &str) -> Update {
        Update::new().set_value(SEQUENCE, sequence)
    }

    fn holds(&self, previous: Option<&str>) -> Condition {
        match previous {
            Some(sequence) => Condition::eq(SEQUENCE, AttributeValue::s(sequence)),
            None => Condition::not_exists(PK),
        }
    }
}

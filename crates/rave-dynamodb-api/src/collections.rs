//! `ReturnItemCollectionMetrics` and the `ItemCollectionMetrics` of
//! PutItem, UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems:
//! the size of each item collection a write touched in a table with local
//! secondary indexes (the engine keeps it with every write and hands it
//! back: `Engine::*_with`, `Written`), as DynamoDB's estimate in gigabytes:
//! `SizeEstimateRangeGB` is the whole gigabytes below and above the size.
//! BatchWriteItem and TransactWriteItems answer per table; a table without
//! local secondary indexes gets nothing.

use rave_engine::ItemCollectionSize;
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::request::Members;
use crate::wire::item_to_json;

const GIGABYTE: u64 = 1 << 30;

/// Whether the request asked for `ItemCollectionMetrics` (SIZE).
pub(crate) fn asked(body: Members<'_>) -> Result<bool, ApiError> {
    Ok(body.choice(
        "ReturnItemCollectionMetrics",
        &crate::request::COLLECTION_METRICS,
    )? == Some("SIZE"))
}

/// One collection's metrics: its partition key and `SizeEstimateRangeGB`,
/// the whole gigabytes below its size and the next above (DynamoDB's
/// estimate is a range; a small collection is `[0.0, 1.0]`).
pub(crate) fn render(size: &ItemCollectionSize) -> Value {
    let lower = (size.bytes / GIGABYTE) as f64;
    json!({
        "ItemCollectionKey": item_to_json(&size.key),
        "SizeEstimateRangeGB": [lower, lower + 1.0],
    })
}

/// A single-item write's `ItemCollectionMetrics`, when asked and its table
/// has local secondary indexes.
pub(crate) fn of_item(asked: bool, sizes: &[ItemCollectionSize]) -> Option<Value> {
    sizes.first().filter(|_| asked).map(render)
}

/// A batch's or a transaction's `ItemCollectionMetrics`: the collections
/// of each table, when asked and any table has local secondary indexes.
pub(crate) fn per_table(asked: bool, sizes: &[ItemCollectionSize]) -> Option<Value> {
    if !asked || sizes.is_empty() {
        return None;
    }
    let mut tables = Map::new();
    for size in sizes {
        if let Value::Array(collections) = tables
            .entry(size.table.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            collections.push(render(size));
        }
    }
    Some(Value::Object(tables))
}

#[cfg(test)]
mod tests {
    use rave_store::item;

    use super::*;

    fn size(table: &str, pk: &str, bytes: u64) -> ItemCollectionSize {
        ItemCollectionSize {
            table: table.into(),
            key: item! {"pk" => pk},
            bytes,
        }
    }

    #[test]
    fn the_estimate_is_the_gigabytes_around_the_size() {
        assert_eq!(
            render(&size("t", "a", 50)),
            json!({"ItemCollectionKey": {"pk": {"S": "a"}}, "SizeEstimateRangeGB": [0.0, 1.0]})
        );
        let rendered = render(&size("t", "a", 3 * GIGABYTE + 1));
        assert_eq!(rendered["SizeEstimateRangeGB"], json!([3.0, 4.0]));
    }

    #[test]
    fn metrics_come_only_when_asked_and_group_by_table() {
        let sizes = [size("t", "a", 1), size("u", "b", 2), size("t", "c", 3)];
        assert_eq!(of_item(false, &sizes), None);
        assert_eq!(of_item(true, &[]), None);
        assert_eq!(per_table(false, &sizes), None);
        assert_eq!(per_table(true, &[]), None);
        let grouped = per_table(true, &sizes).unwrap();
        assert_eq!(grouped["t"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            grouped["u"][0]["ItemCollectionKey"],
            json!({"pk": {"S": "b"}})
        );
    }
}

//! DynamoDB's limits at their edges through the endpoint: the 400 KB item
//! on every write path, the units each index is charged when a write asks
//! for `ReturnConsumedCapacity` INDEXES, and the 4 MB transaction.
//!
//! Sizes are DynamoDB's (developer guide, "Item sizes and formats"): an
//! attribute's name plus its value, a string counting its UTF-8 bytes.
//! A write unit is 1 KB (1,024 bytes), rounded up, at least one.

use serde_json::{Value, json};

use crate::support::Server;

/// DynamoDB's largest item, 400 KB.
const MAX_ITEM_BYTES: usize = 409_600;

const ITEM_TOO_LARGE: &str = "Item size has exceeded the maximum allowed size";
const UPDATE_TOO_LARGE: &str = "Item size to update has exceeded the maximum allowed size";

/// An item keyed `pk` of exactly `bytes`: `pk` (2 + its value's length)
/// and `filler` (6 + a string of what is left).
fn sized(pk: &str, bytes: usize) -> Value {
    json!({"pk": {"S": pk}, "filler": {"S": "x".repeat(bytes - 2 - pk.len() - 6)}})
}

fn key(pk: &str) -> Value {
    json!({"pk": {"S": pk}})
}

/// What a strongly consistent GetItem of `pk` answers: `{}` when there is
/// no such item.
async fn stored(server: &Server, table: &str, pk: &str) -> Value {
    server
        .call(
            "GetItem",
            json!({"TableName": table, "Key": key(pk), "ConsistentRead": true}),
        )
        .await
        .ok()
}

fn put_action(table: &str, item: Value) -> Value {
    json!({"Put": {"TableName": table, "Item": item}})
}

/// An UpdateItem (or a transaction's Update) of `pk` that sets `filler` so
/// that the item `{pk, filler}` comes to `bytes`.
fn grow_to(table: &str, pk: &str, bytes: usize) -> Value {
    let filler = sized(pk, bytes)["filler"].clone();
    json!({
        "TableName": table,
        "Key": key(pk),
        "UpdateExpression": "SET filler = :filler",
        "ExpressionAttributeValues": {":filler": filler},
    })
}

#[tokio::test]
async fn items_of_400_kb_are_written_and_a_byte_more_refused_by_every_write() {
    let server = Server::start().await;
    server.create_hash_keyed_table("big").await;

    // PutItem: the largest item is stored; one a byte larger is refused and
    // leaves the item it would have replaced, or nothing, behind.
    server
        .call(
            "PutItem",
            json!({"TableName": "big", "Item": sized("put", MAX_ITEM_BYTES)}),
        )
        .await
        .ok();
    for pk in ["put", "put-new"] {
        server
            .call(
                "PutItem",
                json!({"TableName": "big", "Item": sized(pk, MAX_ITEM_BYTES + 1)}),
            )
            .await
            .error(400, "ValidationException", ITEM_TOO_LARGE);
    }
    assert_eq!(
        stored(&server, "big", "put").await,
        json!({"Item": sized("put", MAX_ITEM_BYTES)})
    );
    assert_eq!(stored(&server, "big", "put-new").await, json!({}));

    // BatchWriteItem: one request too large refuses the whole batch.
    let batch = |items: Vec<Value>| {
        let requests: Vec<Value> = items
            .into_iter()
            .map(|item| json!({"PutRequest": {"Item": item}}))
            .collect();
        server.call("BatchWriteItem", json!({"RequestItems": {"big": requests}}))
    };
    assert_eq!(
        batch(vec![sized("batch", MAX_ITEM_BYTES)]).await.ok(),
        json!({"UnprocessedItems": {}})
    );
    batch(vec![
        sized("batch-small", 100),
        sized("batch", MAX_ITEM_BYTES + 1),
    ])
    .await
    .error(400, "ValidationException", ITEM_TOO_LARGE);
    assert_eq!(
        stored(&server, "big", "batch").await,
        json!({"Item": sized("batch", MAX_ITEM_BYTES)})
    );
    assert_eq!(stored(&server, "big", "batch-small").await, json!({}));

    // A transaction's Put: refused before anything is written.
    let transact =
        |actions: Vec<Value>| server.call("TransactWriteItems", json!({"TransactItems": actions}));
    assert_eq!(
        transact(vec![put_action("big", sized("tx-put", MAX_ITEM_BYTES))])
            .await
            .ok(),
        json!({})
    );
    transact(vec![
        put_action("big", sized("tx-small", 100)),
        put_action("big", sized("tx-put", MAX_ITEM_BYTES + 1)),
    ])
    .await
    .error(400, "ValidationException", ITEM_TOO_LARGE);
    assert_eq!(
        stored(&server, "big", "tx-put").await,
        json!({"Item": sized("tx-put", MAX_ITEM_BYTES)})
    );
    assert_eq!(stored(&server, "big", "tx-small").await, json!({}));

    // UpdateItem: a SET that brings the item to 400 KB is applied; one a
    // byte more is refused, naming the item to update, and the item stays.
    server
        .call(
            "PutItem",
            json!({"TableName": "big", "Item": sized("update", 100)}),
        )
        .await
        .ok();
    server
        .call("UpdateItem", grow_to("big", "update", MAX_ITEM_BYTES))
        .await
        .ok();
    server
        .call("UpdateItem", grow_to("big", "update", MAX_ITEM_BYTES + 1))
        .await
        .error(400, "ValidationException", UPDATE_TOO_LARGE);
    assert_eq!(
        stored(&server, "big", "update").await,
        json!({"Item": sized("update", MAX_ITEM_BYTES)})
    );

    // A transaction's Update: DynamoDB cancels the transaction with a
    // ValidationError reason on that action, the other actions' None, and
    // writes none of them.
    server
        .call(
            "PutItem",
            json!({"TableName": "big", "Item": sized("tx-update", 100)}),
        )
        .await
        .ok();
    let update_action = |bytes: usize| json!({"Update": grow_to("big", "tx-update", bytes)});
    assert_eq!(
        transact(vec![update_action(MAX_ITEM_BYTES)]).await.ok(),
        json!({})
    );
    let cancelled = transact(vec![
        put_action("big", sized("tx-other", 100)),
        update_action(MAX_ITEM_BYTES + 1),
    ])
    .await;
    assert_eq!(cancelled.status, 400, "{}", cancelled.body);
    assert_eq!(
        cancelled.body,
        json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]",
            "CancellationReasons": [
                {"Code": "None"},
                {"Code": "ValidationError", "Message": UPDATE_TOO_LARGE},
            ],
        })
    );
    assert_eq!(
        stored(&server, "big", "tx-update").await,
        json!({"Item": sized("tx-update", MAX_ITEM_BYTES)})
    );
    assert_eq!(stored(&server, "big", "tx-other").await, json!({}));
}

/// `pk` (S), on demand, with three global secondary indexes: `byAll` on
/// `ga` projecting ALL, `byKeys` on `gk` projecting KEYS_ONLY, and
/// `bySparse` on `gs`, an attribute no item here has.
async fn create_indexed_table(server: &Server) {
    let index = |name: &str, attribute: &str, projection: &str| {
        json!({
            "IndexName": name,
            "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}],
            "Projection": {"ProjectionType": projection},
        })
    };
    server
        .call(
            "CreateTable",
            json!({
                "TableName": "rated",
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "ga", "AttributeType": "S"},
                    {"AttributeName": "gk", "AttributeType": "S"},
                    {"AttributeName": "gs", "AttributeType": "S"},
                ],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "GlobalSecondaryIndexes": [
                    index("byAll", "ga", "ALL"),
                    index("byKeys", "gk", "KEYS_ONLY"),
                    index("bySparse", "gs", "ALL"),
                ],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .ok();
}

/// An item in `byAll` and `byKeys`, not in `bySparse`: `pk` 2 + 1, `ga`
/// 2 + 1, `gk` 2 + 1 and `body` 4 + `body` bytes, so `body` + 13 bytes.
/// Its `byKeys` entry holds `pk` and `gk`: 6 bytes.
fn rated(pk: &str, body: usize) -> Value {
    json!({
        "pk": {"S": pk}, "ga": {"S": "g"}, "gk": {"S": "k"}, "body": {"S": "b".repeat(body)},
    })
}

/// The ConsumedCapacity INDEXES gives: the total, the table's units and
/// each charged index's.
fn consumed(total: f64, table: f64, indexes: &[(&str, f64)]) -> Value {
    let mut capacity = json!({
        "TableName": "rated",
        "CapacityUnits": total,
        "Table": {"CapacityUnits": table},
    });
    if !indexes.is_empty() {
        capacity["GlobalSecondaryIndexes"] = indexes
            .iter()
            .map(|(index, units)| (index.to_string(), json!({"CapacityUnits": units})))
            .collect();
    }
    capacity
}

#[tokio::test]
async fn every_write_reports_the_units_of_the_table_and_of_each_index_written() {
    let server = Server::start().await;
    create_indexed_table(&server).await;
    let write = async |operation: &str, mut body: Value| {
        body["ReturnConsumedCapacity"] = json!("INDEXES");
        server.call(operation, body).await.ok()
    };
    let charged = async |operation: &str, body: Value| {
        write(operation, body).await["ConsumedCapacity"].take()
    };
    let put = |pk: &str, body: usize| json!({"TableName": "rated", "Item": rated(pk, body)});
    let update = |expression: &str, values: Value| {
        json!({
            "TableName": "rated",
            "Key": key("a"),
            "UpdateExpression": expression,
            "ExpressionAttributeValues": values,
        })
    };

    // A new item of 3,013 bytes: 3 units for the table, 3 for its whole
    // copy in byAll, 1 for its 6-byte byKeys entry, none for bySparse;
    // 7 in all.
    assert_eq!(
        charged("PutItem", put("a", 3000)).await,
        consumed(7.0, 3.0, &[("byAll", 3.0), ("byKeys", 1.0)])
    );

    // Replaced by one of 5,013 bytes: the larger of old and new, 5 units,
    // for the table and for byAll's entry rewritten in place; byKeys' entry
    // (pk, gk) is unchanged, so not written: 10 in all.
    assert_eq!(
        charged("PutItem", put("a", 5000)).await,
        consumed(10.0, 5.0, &[("byAll", 5.0)])
    );

    // Shrunk to 1,013 bytes: still the larger, 5,013 bytes, 5 units for
    // the table and 5 for byAll; byKeys untouched: 10.
    assert_eq!(
        charged(
            "UpdateItem",
            update("SET body = :b", json!({":b": {"S": "b".repeat(1000)}}))
        )
        .await,
        consumed(10.0, 5.0, &[("byAll", 5.0)])
    );

    // Both index keys changed (the item stays 1,013 bytes): the table 1
    // unit; byAll deletes its 1,013-byte entry (1) and puts the new one
    // (1); byKeys deletes its 6-byte entry (1) and puts the new one (1):
    // 5 in all.
    assert_eq!(
        charged(
            "UpdateItem",
            update(
                "SET ga = :ga, gk = :gk",
                json!({":ga": {"S": "h"}, ":gk": {"S": "l"}})
            )
        )
        .await,
        consumed(5.0, 1.0, &[("byAll", 2.0), ("byKeys", 2.0)])
    );

    // A new item of 2,013 bytes (table 2, byAll 2, byKeys 1) and the
    // deletion of `a`, 1,013 bytes (table 1, byAll 1, byKeys 1): the
    // table 3, byAll 3, byKeys 2, 8 in all.
    let batch = json!({"RequestItems": {"rated": [
        {"PutRequest": {"Item": rated("b", 2000)}},
        {"DeleteRequest": {"Key": key("a")}},
    ]}});
    assert_eq!(
        write("BatchWriteItem", batch).await,
        json!({
            "UnprocessedItems": {},
            "ConsumedCapacity": [consumed(8.0, 3.0, &[("byAll", 3.0), ("byKeys", 2.0)])],
        })
    );

    // Deleting `b`, 2,013 bytes: the table 2, byAll's whole copy 2,
    // byKeys' entry 1: 5 in all.
    let delete_b = || json!({"TableName": "rated", "Key": key("b")});
    assert_eq!(
        charged("DeleteItem", delete_b()).await,
        consumed(5.0, 2.0, &[("byAll", 2.0), ("byKeys", 1.0)])
    );

    // Deleting what is not there writes no index: 1 unit for the table.
    assert_eq!(
        charged("DeleteItem", delete_b()).await,
        consumed(1.0, 1.0, &[])
    );
}

/// DynamoDB's largest transaction, 4 MB of items.
const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;

/// Ten Puts of 400 KB and an eleventh of what is left of `bytes`:
/// 10 × 409,600 = 4,096,000 bytes, so 98,304 more make 4 MB.
fn puts_of(bytes: usize) -> Vec<Value> {
    let mut items: Vec<Value> = (0..10)
        .map(|n| sized(&format!("t{n:02}"), MAX_ITEM_BYTES))
        .collect();
    items.push(sized("t10", bytes - 10 * MAX_ITEM_BYTES));
    items
        .into_iter()
        .map(|item| put_action("big", item))
        .collect()
}

#[tokio::test]
async fn transactions_of_4_mb_are_written_and_a_byte_more_refused() {
    let server = Server::start().await;
    server.create_hash_keyed_table("big").await;
    let keys: Vec<String> = (0..=10).map(|n| format!("t{n:02}")).collect();

    server
        .call(
            "TransactWriteItems",
            json!({"TransactItems": puts_of(MAX_TRANSACTION_BYTES + 1)}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "Transaction request cannot be larger than 4 MB",
        );
    for pk in &keys {
        assert_eq!(stored(&server, "big", pk).await, json!({}), "{pk}");
    }

    assert_eq!(
        server
            .call(
                "TransactWriteItems",
                json!({"TransactItems": puts_of(MAX_TRANSACTION_BYTES)}),
            )
            .await
            .ok(),
        json!({})
    );
    for (pk, action) in keys.iter().zip(puts_of(MAX_TRANSACTION_BYTES)) {
        assert_eq!(
            stored(&server, "big", pk).await,
            json!({"Item": action["Put"]["Item"]}),
            "{pk}"
        );
    }
}

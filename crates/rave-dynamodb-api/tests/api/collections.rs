//! Item collections through the endpoint: `ReturnItemCollectionMetrics`
//! on every write operation, for tables with local secondary indexes only,
//! and ItemCollectionSizeLimitExceededException once a collection would
//! outgrow the engine's limit (made small here; DynamoDB's is 10 GB).

use rave_engine::EngineOptions;
use serde_json::{Value, json};

use crate::support::Server;

/// `pk` (S) / `sk` (S) with `byRank` (on `rk`, S, keys only); or the
/// same without the index.
fn table(name: &str, local_index: bool) -> Value {
    let mut definition = json!({
        "TableName": name,
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    });
    if local_index {
        definition["AttributeDefinitions"]
            .as_array_mut()
            .expect("a list")
            .push(json!({"AttributeName": "rk", "AttributeType": "S"}));
        definition["LocalSecondaryIndexes"] = json!([{
            "IndexName": "byRank",
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "rk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }]);
    }
    definition
}

/// pk 3 + sk 3 + rk 3 = 9 bytes of item, 9 of index entry: 18 for the
/// collection; `pad` bytes more of item only.
fn item(pk: &str, sk: &str, pad: usize) -> Value {
    let mut item = json!({"pk": {"S": pk}, "sk": {"S": sk}, "rk": {"S": "r"}});
    if pad > 0 {
        item["p"] = json!({"S": "x".repeat(pad - 1)});
    }
    item
}

fn small_metrics(pk: &str) -> Value {
    json!({"ItemCollectionKey": {"pk": {"S": pk}}, "SizeEstimateRangeGB": [0.0, 1.0]})
}

async fn server_with(limit: u64) -> Server {
    let server = Server::start_with(EngineOptions {
        max_item_collection_bytes: limit,
        ..EngineOptions::default()
    })
    .await;
    server
        .call("CreateTable", table("threads", true))
        .await
        .ok();
    server.call("CreateTable", table("plain", false)).await.ok();
    server
}

#[tokio::test]
async fn writes_report_their_item_collections_when_asked() {
    let server = server_with(rave_engine::MAX_ITEM_COLLECTION_BYTES).await;
    let put = |table: &str, item: Value, metrics: Option<&str>| {
        let mut body = json!({"TableName": table, "Item": item});
        if let Some(metrics) = metrics {
            body["ReturnItemCollectionMetrics"] = json!(metrics);
        }
        server.call("PutItem", body)
    };
    let answer = put("threads", item("a", "1", 0), Some("SIZE")).await.ok();
    assert_eq!(answer, json!({"ItemCollectionMetrics": small_metrics("a")}));
    assert_eq!(
        put("threads", item("a", "2", 0), Some("NONE")).await.ok(),
        json!({})
    );
    assert_eq!(
        put("threads", item("a", "3", 0), None).await.ok(),
        json!({})
    );
    // A table without local secondary indexes has no item collections.
    assert_eq!(
        put("plain", item("a", "1", 0), Some("SIZE")).await.ok(),
        json!({})
    );
    put("threads", item("a", "4", 0), Some("ALL"))
        .await
        .error(
            400,
            "ValidationException",
            "1 validation error detected: Value 'ALL' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]",
        );

    let answer = server
        .call(
            "UpdateItem",
            json!({
                "TableName": "threads",
                "Key": {"pk": {"S": "b"}, "sk": {"S": "1"}},
                "UpdateExpression": "SET rk = :r",
                "ExpressionAttributeValues": {":r": {"S": "r"}},
                "ReturnValues": "UPDATED_NEW",
                "ReturnItemCollectionMetrics": "SIZE",
            }),
        )
        .await
        .ok();
    assert_eq!(
        answer,
        json!({"Attributes": {"rk": {"S": "r"}}, "ItemCollectionMetrics": small_metrics("b")})
    );
    let answer = server
        .call(
            "DeleteItem",
            json!({
                "TableName": "threads",
                "Key": {"pk": {"S": "c"}, "sk": {"S": "1"}},
                "ReturnItemCollectionMetrics": "SIZE",
            }),
        )
        .await
        .ok();
    assert_eq!(answer, json!({"ItemCollectionMetrics": small_metrics("c")}));

    let answer = server
        .call(
            "BatchWriteItem",
            json!({
                "RequestItems": {
                    "threads": [
                        {"PutRequest": {"Item": item("d", "1", 0)}},
                        {"PutRequest": {"Item": item("e", "1", 0)}},
                        {"DeleteRequest": {"Key": {"pk": {"S": "d"}, "sk": {"S": "2"}}}},
                    ],
                    "plain": [{"PutRequest": {"Item": item("d", "1", 0)}}],
                },
                "ReturnItemCollectionMetrics": "SIZE",
            }),
        )
        .await
        .ok();
    assert_eq!(
        answer,
        json!({
            "UnprocessedItems": {},
            "ItemCollectionMetrics": {"threads": [small_metrics("d"), small_metrics("e")]},
        })
    );
    let answer = server
        .call(
            "TransactWriteItems",
            json!({
                "TransactItems": [
                    {"Put": {"TableName": "threads", "Item": item("f", "1", 0)}},
                    {"Put": {"TableName": "plain", "Item": item("f", "1", 0)}},
                    {"ConditionCheck": {
                        "TableName": "threads",
                        "Key": {"pk": {"S": "g"}, "sk": {"S": "1"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }},
                ],
                "ReturnItemCollectionMetrics": "SIZE",
            }),
        )
        .await
        .ok();
    assert_eq!(
        answer,
        json!({"ItemCollectionMetrics": {"threads": [small_metrics("f")]}})
    );
}

#[tokio::test]
async fn a_collection_past_the_limit_refuses_writes_that_grow_it() {
    let server = server_with(100).await;
    let put = |item: Value| server.call("PutItem", json!({"TableName": "threads", "Item": item}));
    put(item("a", "1", 0)).await.ok();
    put(item("a", "2", 50)).await.ok();
    // 18 + 68 + 18 > 100.
    put(item("a", "3", 0)).await.error(
        400,
        "ItemCollectionSizeLimitExceededException",
        "The total size of an item collection has exceeded the maximum limit of 100 bytes",
    );
    let read = server
        .call(
            "GetItem",
            json!({"TableName": "threads", "Key": {"pk": {"S": "a"}, "sk": {"S": "3"}}}),
        )
        .await
        .ok();
    assert_eq!(read, json!({}));
    // Another collection, and a write that shrinks this one, still go:
    // 18 + 28 + 18 = 64.
    put(item("b", "1", 0)).await.ok();
    put(item("a", "2", 10)).await.ok();
    put(item("a", "3", 0)).await.ok();
    // 64 + 48 > 100.

    let answer = server
        .call(
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"TableName": "threads", "Item": item("c", "1", 0)}},
                {"Put": {"TableName": "threads", "Item": item("a", "4", 30)}},
            ]}),
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.body["CancellationReasons"],
        json!([
            {"Code": "None"},
            {"Code": "ItemCollectionSizeLimitExceeded", "Message": "Collection size exceeded"},
        ])
    );
    server
        .call(
            "BatchWriteItem",
            json!({"RequestItems": {"threads": [
                {"PutRequest": {"Item": item("c", "1", 0)}},
                {"PutRequest": {"Item": item("a", "4", 30)}},
            ]}}),
        )
        .await
        .error(
            400,
            "ItemCollectionSizeLimitExceededException",
            "The total size of an item collection has exceeded the maximum limit of 100 bytes",
        );
}

//! Query, Scan and the table operations through the HTTP server, where
//! DynamoDB's answer hangs on a rule easy to get wrong: what `size()` counts
//! in a string.

use serde_json::{Value, json};

use crate::support::Server;

const TABLE: &str = "notes";

/// A table of one item whose string `s` is "é" and U+1D11E: 6 UTF-8 bytes,
/// 3 UTF-16 code units.
async fn notes(server: &Server) {
    server
        .call(
            "CreateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                ],
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .ok();
    server
        .call(
            "PutItem",
            json!({
                "TableName": TABLE,
                "Item": {"pk": {"S": "p"}, "sk": {"S": "1"}, "s": {"S": "\u{e9}\u{1d11e}"}},
            }),
        )
        .await
        .ok();
}

fn sort_keys(answer: &Value) -> Vec<&str> {
    answer["Items"]
        .as_array()
        .expect("Items")
        .iter()
        .map(|item| item["sk"]["S"].as_str().expect("a sort key"))
        .collect()
}

#[tokio::test]
async fn size_counts_a_strings_utf16_code_units_in_query_and_scan_filters() {
    let server = Server::start().await;
    notes(&server).await;
    for (size, matched) in [("3", vec!["1"]), ("6", vec![])] {
        let query = server
            .call(
                "Query",
                json!({
                    "TableName": TABLE,
                    "KeyConditionExpression": "pk = :pk",
                    "FilterExpression": "size(#s) = :n",
                    "ExpressionAttributeNames": {"#s": "s"},
                    "ExpressionAttributeValues": {":pk": {"S": "p"}, ":n": {"N": size}},
                }),
            )
            .await
            .ok();
        assert_eq!(sort_keys(&query), matched, "size {size}");
        assert_eq!(query["ScannedCount"], 1);
        let scan = server
            .call(
                "Scan",
                json!({
                    "TableName": TABLE,
                    "FilterExpression": "size(s) = :n",
                    "ExpressionAttributeValues": {":n": {"N": size}},
                }),
            )
            .await
            .ok();
        assert_eq!(sort_keys(&scan), matched, "size {size}");
    }
    // A value's size, known as the filter is parsed, is counted the same way.
    let scan = server
        .call(
            "Scan",
            json!({
                "TableName": TABLE,
                "FilterExpression": "size(:v) = :n",
                "ExpressionAttributeValues": {":v": {"S": "\u{e9}\u{1d11e}"}, ":n": {"N": "3"}},
            }),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&scan), ["1"]);
    // A missing attribute has no size, not a size of 0.
    let query = server
        .call(
            "Query",
            json!({
                "TableName": TABLE,
                "KeyConditionExpression": "pk = :pk",
                "FilterExpression": "size(absent) = :zero",
                "ExpressionAttributeValues": {":pk": {"S": "p"}, ":zero": {"N": "0"}},
            }),
        )
        .await
        .ok();
    assert_eq!(query["Count"], 0);
}

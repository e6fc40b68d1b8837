//! The operations that carry expression strings: conditional writes,
//! UpdateItem, Query, filtered and projected reads, TransactWriteItems.

use serde_json::{Value, json};

use crate::support::Server;

/// `pk` (S) / `sk` (N), an index `byGsi` on `gsi` projecting `title`, and
/// items p/1..=5 (`title` t1..t5, `gsi` "g" on odd ones) and q/1.
async fn seeded() -> Server {
    let server = Server::start().await;
    server.create_comments_table("things").await;
    let mut writes: Vec<Value> = (1..=5)
        .map(|sk| json!({"PutRequest": {"Item": item("p", sk)}}))
        .collect();
    writes.push(json!({"PutRequest": {"Item": item("q", 1)}}));
    server
        .call(
            "BatchWriteItem",
            json!({"RequestItems": {"things": writes}}),
        )
        .await
        .ok();
    server
}

fn item(pk: &str, sk: i64) -> Value {
    let mut item = json!({
        "pk": {"S": pk},
        "sk": {"N": sk.to_string()},
        "title": {"S": format!("t{sk}")},
        "body": {"S": "text"},
    });
    if sk % 2 == 1 {
        item["gsi"] = json!({"S": "g"});
    }
    item
}

fn key(pk: &str, sk: i64) -> Value {
    json!({"pk": {"S": pk}, "sk": {"N": sk.to_string()}})
}

fn sort_keys(page: &Value) -> Vec<i64> {
    page["Items"]
        .as_array()
        .expect("Items")
        .iter()
        .map(|item| {
            item["sk"]["N"]
                .as_str()
                .and_then(|n| n.parse().ok())
                .expect("a numeric sort key")
        })
        .collect()
}

async fn get(server: &Server, pk: &str, sk: i64) -> Value {
    server
        .call(
            "GetItem",
            json!({"TableName": "things", "Key": key(pk, sk), "ConsistentRead": true}),
        )
        .await
        .ok()
}

#[tokio::test]
async fn conditions_guard_puts_and_deletes() {
    let server = seeded().await;
    let put_new = json!({
        "TableName": "things",
        "Item": item("r", 1),
        "ConditionExpression": "attribute_not_exists(pk)",
    });
    server.call("PutItem", put_new.clone()).await.ok();
    server.call("PutItem", put_new).await.error(
        400,
        "ConditionalCheckFailedException",
        "The conditional request failed",
    );
    let delete_if = |title: &str| {
        json!({
            "TableName": "things",
            "Key": key("r", 1),
            "ConditionExpression": "#t = :t",
            "ExpressionAttributeNames": {"#t": "title"},
            "ExpressionAttributeValues": {":t": {"S": title}},
            "ReturnValues": "ALL_OLD",
        })
    };
    server.call("DeleteItem", delete_if("other")).await.error(
        400,
        "ConditionalCheckFailedException",
        "The conditional request failed",
    );
    let deleted = server.call("DeleteItem", delete_if("t1")).await.ok();
    assert_eq!(deleted, json!({"Attributes": item("r", 1)}));
    assert_eq!(get(&server, "r", 1).await, json!({}));
}

/// The body of a failed write: status 400, `__type` and message as
/// DynamoDB sends them, and whatever else the body carries.
fn condition_failed(answer: crate::support::Answer) -> Value {
    assert_eq!(answer.status, 400, "{}", answer.body);
    let mut body = answer.body;
    let object = body.as_object_mut().expect("an error object");
    assert_eq!(
        object.remove("__type"),
        Some(json!(
            "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"
        ))
    );
    assert_eq!(
        object.remove("message"),
        Some(json!("The conditional request failed"))
    );
    body
}

#[tokio::test]
async fn a_failed_condition_hands_back_the_old_item_when_asked() {
    let server = seeded().await;
    let refused_put = |on_failure: &str| {
        json!({
            "TableName": "things",
            "Item": item("p", 1),
            "ConditionExpression": "attribute_not_exists(pk)",
            "ReturnValuesOnConditionCheckFailure": on_failure,
        })
    };
    assert_eq!(
        condition_failed(server.call("PutItem", refused_put("ALL_OLD")).await),
        json!({"Item": item("p", 1)})
    );
    assert_eq!(
        condition_failed(server.call("PutItem", refused_put("NONE")).await),
        json!({})
    );
    let refused_update = json!({
        "TableName": "things",
        "Key": key("p", 2),
        "UpdateExpression": "SET title = :new",
        "ConditionExpression": "title = :old",
        "ExpressionAttributeValues": {":new": {"S": "new"}, ":old": {"S": "other"}},
        "ReturnValues": "ALL_NEW",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    });
    assert_eq!(
        condition_failed(server.call("UpdateItem", refused_update).await),
        json!({"Item": item("p", 2)})
    );
    assert_eq!(get(&server, "p", 2).await, json!({"Item": item("p", 2)}));
    // No item, nothing to hand back.
    let refused_delete = json!({
        "TableName": "things",
        "Key": key("absent", 1),
        "ConditionExpression": "attribute_exists(pk)",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    });
    assert_eq!(
        condition_failed(server.call("DeleteItem", refused_delete).await),
        json!({})
    );
    let refused_delete = json!({
        "TableName": "things",
        "Key": key("p", 3),
        "ConditionExpression": "attribute_not_exists(pk)",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    });
    assert_eq!(
        condition_failed(server.call("DeleteItem", refused_delete).await),
        json!({"Item": item("p", 3)})
    );
    assert_eq!(get(&server, "p", 3).await, json!({"Item": item("p", 3)}));
}

#[tokio::test]
async fn a_cancelled_transaction_hands_back_the_items_of_the_actions_that_asked() {
    let server = seeded().await;
    let cancelled = server
        .call(
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"TableName": "things", "Item": item("p", 1), "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
                {"Update": {"TableName": "things", "Key": key("p", 2), "UpdateExpression": "SET title = :t", "ExpressionAttributeValues": {":t": {"S": "x"}}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
                {"Delete": {"TableName": "things", "Key": key("p", 3), "ConditionExpression": "attribute_not_exists(pk)"}},
                {"ConditionCheck": {"TableName": "things", "Key": key("p", 4), "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
                {"ConditionCheck": {"TableName": "things", "Key": key("absent", 1), "ConditionExpression": "attribute_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
            ]}),
        )
        .await;
    assert_eq!(cancelled.status, 400);
    let failed = |item: Option<Value>| {
        let mut reason =
            json!({"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"});
        if let Some(item) = item {
            reason["Item"] = item;
        }
        reason
    };
    assert_eq!(
        cancelled.body,
        json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None, ConditionalCheckFailed, ConditionalCheckFailed, ConditionalCheckFailed]",
            "CancellationReasons": [
                failed(Some(item("p", 1))),
                {"Code": "None"},
                failed(None),
                failed(Some(item("p", 4))),
                failed(None),
            ],
        })
    );
    assert_eq!(get(&server, "p", 2).await, json!({"Item": item("p", 2)}));
}

#[tokio::test]
async fn update_item_applies_expressions_and_returns_what_was_asked() {
    let server = seeded().await;
    server
        .call(
            "PutItem",
            json!({"TableName": "things", "Item": {
                "pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "1"},
                "tags": {"SS": ["a"]}, "m": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}},
            }}),
        )
        .await
        .ok();
    let update = |expression: &str, returned: &str| {
        json!({
            "TableName": "things",
            "Key": key("u", 1),
            "UpdateExpression": expression,
            "ExpressionAttributeNames": {"#n": "n"},
            "ExpressionAttributeValues": {":one": {"N": "1"}, ":ten": {"N": "10"}},
            "ReturnValues": returned,
        })
    };
    let updated_new = server
        .call(
            "UpdateItem",
            update("SET #n = #n + :one, m.x = :ten REMOVE tags", "UPDATED_NEW"),
        )
        .await
        .ok();
    assert_eq!(
        updated_new,
        json!({"Attributes": {"n": {"N": "2"}, "m": {"M": {"x": {"N": "10"}}}}})
    );
    let mut body = update("ADD #n :one", "UPDATED_OLD");
    body["ExpressionAttributeValues"] = json!({":one": {"N": "1"}});
    let updated_old = server.call("UpdateItem", body).await.ok();
    assert_eq!(updated_old, json!({"Attributes": {"n": {"N": "2"}}}));
    let mut body = update("SET m.y = :ten", "ALL_NEW");
    body["ExpressionAttributeNames"] = Value::Null;
    body["ExpressionAttributeValues"] = json!({":ten": {"N": "10"}});
    let all_new = server.call("UpdateItem", body).await.ok();
    assert_eq!(
        all_new,
        json!({"Attributes": {
            "pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "3"},
            "m": {"M": {"x": {"N": "10"}, "y": {"N": "10"}}},
        }})
    );

    // An update of an absent item creates it from the key.
    server
        .call(
            "UpdateItem",
            json!({
                "TableName": "things",
                "Key": key("u", 2),
                "UpdateExpression": "SET title = :t",
                "ExpressionAttributeValues": {":t": {"S": "fresh"}},
            }),
        )
        .await
        .ok();
    assert_eq!(
        get(&server, "u", 2).await,
        json!({"Item": {"pk": {"S": "u"}, "sk": {"N": "2"}, "title": {"S": "fresh"}}})
    );
    server
        .call(
            "UpdateItem",
            json!({
                "TableName": "things",
                "Key": key("u", 2),
                "UpdateExpression": "SET title = :t",
                "ConditionExpression": "attribute_exists(nothing)",
                "ExpressionAttributeValues": {":t": {"S": "never"}},
            }),
        )
        .await
        .error(
            400,
            "ConditionalCheckFailedException",
            "The conditional request failed",
        );
    server
        .call(
            "UpdateItem",
            json!({
                "TableName": "things",
                "Key": key("u", 2),
                "UpdateExpression": "SET name = :t",
                "ExpressionAttributeValues": {":t": {"S": "x"}},
            }),
        )
        .await
        .error(
            400,
            "ValidationException",
            "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: name",
        );
}

#[tokio::test]
async fn query_reads_key_ranges_both_ways_with_filters_and_projections() {
    let server = seeded().await;
    let query = |extra: Value| {
        let mut body = json!({
            "TableName": "things",
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "p"}},
        });
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        body
    };
    let between = server
        .call(
            "Query",
            query(json!({
                "KeyConditionExpression": "pk = :p AND sk BETWEEN :lo AND :hi",
                "ExpressionAttributeValues": {":p": {"S": "p"}, ":lo": {"N": "2"}, ":hi": {"N": "4"}},
            })),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&between), [2, 3, 4]);
    assert_eq!(
        (between["Count"].clone(), between["ScannedCount"].clone()),
        (json!(3), json!(3))
    );
    assert_eq!(between["Items"][0], item("p", 2));

    let first = server
        .call(
            "Query",
            query(json!({"ScanIndexForward": false, "Limit": 2})),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&first), [5, 4]);
    assert_eq!(first["LastEvaluatedKey"], key("p", 4));
    let second = server
        .call(
            "Query",
            query(json!({"ScanIndexForward": false, "Limit": 2, "ExclusiveStartKey": key("p", 4)})),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&second), [3, 2]);

    let filtered = server
        .call(
            "Query",
            query(json!({
                "FilterExpression": "title <> :t3",
                "ExpressionAttributeValues": {":p": {"S": "p"}, ":t3": {"S": "t3"}},
                "ProjectionExpression": "sk, #t",
                "ExpressionAttributeNames": {"#t": "title"},
            })),
        )
        .await
        .ok();
    assert_eq!(
        (filtered["Count"].clone(), filtered["ScannedCount"].clone()),
        (json!(4), json!(5))
    );
    assert_eq!(
        filtered["Items"][0],
        json!({"sk": {"N": "1"}, "title": {"S": "t1"}})
    );

    let counted = server
        .call("Query", query(json!({"Select": "COUNT"})))
        .await
        .ok();
    assert_eq!(counted, json!({"Count": 5, "ScannedCount": 5}));

    let by_index = server
        .call(
            "Query",
            json!({
                "TableName": "things",
                "IndexName": "byGsi",
                "KeyConditionExpression": "gsi = :g",
                "ExpressionAttributeValues": {":g": {"S": "g"}},
            }),
        )
        .await
        .ok();
    let mut indexed: Vec<Value> = by_index["Items"].as_array().expect("Items").clone();
    indexed.sort_by_key(|i| i.to_string());
    let mut expected: Vec<Value> = [("p", 1), ("p", 3), ("p", 5), ("q", 1)]
        .iter()
        .map(|(pk, sk)| {
            let mut projected = item(pk, *sk);
            projected.as_object_mut().map(|m| m.remove("body"));
            projected
        })
        .collect();
    expected.sort_by_key(|i| i.to_string());
    assert_eq!(indexed, expected, "the index holds its projection only");

    server
        .call(
            "Query",
            json!({
                "TableName": "things",
                "KeyConditionExpression": "title = :t",
                "ExpressionAttributeValues": {":t": {"S": "t1"}},
            }),
        )
        .await
        .error(
            400,
            "ValidationException",
            "Query condition missed key schema element: pk",
        );
}

#[tokio::test]
async fn scans_and_gets_filter_and_project() {
    let server = seeded().await;
    let scanned = server
        .call(
            "Scan",
            json!({
                "TableName": "things",
                "FilterExpression": "sk > :two AND pk = :p",
                "ProjectionExpression": "sk",
                "ExpressionAttributeValues": {":two": {"N": "2"}, ":p": {"S": "p"}},
            }),
        )
        .await
        .ok();
    assert_eq!(scanned["ScannedCount"], 6);
    let mut keys = sort_keys(&scanned);
    keys.sort_unstable();
    assert_eq!(keys, [3, 4, 5]);
    assert!(
        scanned["Items"]
            .as_array()
            .expect("Items")
            .iter()
            .all(|i| i.as_object().is_some_and(|m| m.len() == 1))
    );

    let got = server
        .call(
            "GetItem",
            json!({"TableName": "things", "Key": key("p", 1), "ProjectionExpression": "title, nowhere"}),
        )
        .await
        .ok();
    assert_eq!(got, json!({"Item": {"title": {"S": "t1"}}}));
    let legacy = server
        .call(
            "GetItem",
            json!({"TableName": "things", "Key": key("p", 1), "AttributesToGet": ["body"]}),
        )
        .await
        .ok();
    assert_eq!(legacy, json!({"Item": {"body": {"S": "text"}}}));
    let batch = server
        .call(
            "BatchGetItem",
            json!({"RequestItems": {"things": {
                "Keys": [key("p", 2)],
                "ProjectionExpression": "#b",
                "ExpressionAttributeNames": {"#b": "body"},
            }}}),
        )
        .await
        .ok();
    assert_eq!(
        batch["Responses"],
        json!({"things": [{"body": {"S": "text"}}]})
    );
}

#[tokio::test]
async fn transactions_commit_whole_or_not_at_all() {
    let server = seeded().await;
    let committed = server
        .call(
            "TransactWriteItems",
            json!({
                "TransactItems": [
                    {"Put": {"TableName": "things", "Item": item("x", 1), "ConditionExpression": "attribute_not_exists(pk)"}},
                    {"Update": {
                        "TableName": "things", "Key": key("p", 1),
                        "UpdateExpression": "SET title = :t",
                        "ExpressionAttributeValues": {":t": {"S": "changed"}},
                    }},
                    {"Delete": {"TableName": "things", "Key": key("p", 2)}},
                    {"ConditionCheck": {"TableName": "things", "Key": key("p", 3), "ConditionExpression": "attribute_exists(pk)"}},
                ],
                "ClientRequestToken": "token-1",
                "ReturnConsumedCapacity": "TOTAL",
            }),
        )
        .await
        .ok();
    assert_eq!(committed["ConsumedCapacity"][0]["TableName"], "things");
    assert_eq!(get(&server, "x", 1).await, json!({"Item": item("x", 1)}));
    assert_eq!(
        get(&server, "p", 1).await["Item"]["title"],
        json!({"S": "changed"})
    );
    assert_eq!(get(&server, "p", 2).await, json!({}));

    let cancelled = server
        .call(
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"TableName": "things", "Item": item("x", 1), "ConditionExpression": "attribute_not_exists(pk)"}},
                {"Put": {"TableName": "things", "Item": item("y", 1)}},
            ]}),
        )
        .await;
    assert_eq!(cancelled.status, 400);
    assert_eq!(
        cancelled.body,
        json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]",
            "CancellationReasons": [
                {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
                {"Code": "None"},
            ],
        })
    );
    assert_eq!(
        get(&server, "y", 1).await,
        json!({}),
        "nothing of it was written"
    );
    server
        .call(
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "things", "Item": item("z", 1)}, "Delete": {"TableName": "things", "Key": key("p", 3)}}]}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "TransactItems can only contain one of Check, Put, Update or Delete",
        );
}

#[tokio::test]
async fn a_client_request_token_makes_a_retry_harmless() {
    let server = seeded().await;
    let put_once = |token: &str, sk: i64| {
        json!({
            "TransactItems": [{"Put": {
                "TableName": "things",
                "Item": item("once", sk),
                "ConditionExpression": "attribute_not_exists(pk)",
            }}],
            "ClientRequestToken": token,
        })
    };
    server
        .call("TransactWriteItems", put_once("retry", 1))
        .await
        .ok();
    // The same request again: success, and no second write (which the
    // condition would have refused).
    assert_eq!(
        server
            .call("TransactWriteItems", put_once("retry", 1))
            .await
            .ok(),
        json!({})
    );
    // Asked for its capacity, a replay reports a transactional read of its
    // item, where the first call reported its write.
    let mut counted = put_once("counted", 3);
    counted["TransactItems"][0]["Put"]["Item"]["big"] = json!({"S": "x".repeat(1536)});
    counted["ReturnConsumedCapacity"] = json!("INDEXES");
    let first = server
        .call("TransactWriteItems", counted.clone())
        .await
        .ok();
    let replayed = server.call("TransactWriteItems", counted).await.ok();
    assert_eq!(
        first["ConsumedCapacity"],
        json!([{"TableName": "things", "CapacityUnits": 5.0, "WriteCapacityUnits": 5.0,
                "Table": {"CapacityUnits": 4.0, "WriteCapacityUnits": 4.0},
                "GlobalSecondaryIndexes": {"byGsi": {"CapacityUnits": 1.0, "WriteCapacityUnits": 1.0}}}])
    );
    assert_eq!(
        replayed["ConsumedCapacity"],
        json!([{"TableName": "things", "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0,
                "Table": {"CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}}])
    );
    let answer = server
        .call("TransactWriteItems", put_once("retry", 2))
        .await;
    answer.error(
        400,
        "IdempotentParameterMismatchException",
        "The request uses the same client token as a previous, but not identical request.",
    );
    let fresh = server
        .call("TransactWriteItems", put_once("other", 1))
        .await;
    assert_eq!(
        fresh.body["__type"],
        "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
    );
}

/// The table of the `size()` test.
const NOTES: &str = "notes";

/// A table of one item, p/1, whose string `s` is "é" and U+1D11E: 6 UTF-8
/// bytes, 3 UTF-16 code units.
async fn notes(server: &Server) {
    server.create_comments_table(NOTES).await;
    server
        .call(
            "PutItem",
            json!({
                "TableName": NOTES,
                "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}, "s": {"S": "\u{e9}\u{1d11e}"}},
            }),
        )
        .await
        .ok();
}

#[tokio::test]
async fn size_counts_a_strings_utf16_code_units_in_query_and_scan_filters() {
    let server = Server::start().await;
    notes(&server).await;
    for (size, matched) in [("3", vec![1]), ("6", vec![])] {
        let query = server
            .call(
                "Query",
                json!({
                    "TableName": NOTES,
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
                    "TableName": NOTES,
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
                "TableName": NOTES,
                "FilterExpression": "size(:v) = :n",
                "ExpressionAttributeValues": {":v": {"S": "\u{e9}\u{1d11e}"}, ":n": {"N": "3"}},
            }),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&scan), [1]);
    // A missing attribute has no size, not a size of 0.
    let query = server
        .call(
            "Query",
            json!({
                "TableName": NOTES,
                "KeyConditionExpression": "pk = :pk",
                "FilterExpression": "size(absent) = :zero",
                "ExpressionAttributeValues": {":pk": {"S": "p"}, ":zero": {"N": "0"}},
            }),
        )
        .await
        .ok();
    assert_eq!(query["Count"], 0);
}

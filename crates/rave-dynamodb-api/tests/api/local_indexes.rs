//! Local secondary indexes: CreateTable's checks, DescribeTable, Query and
//! Scan on them (strongly consistent, fetching what they do not project),
//! their capacity, and UpdateTable leaving them alone.

use serde_json::{Value, json};

use crate::support::Server;

/// `pk` (S) / `sk` (N) with `byDate` (on `date`, N, keys only) and
/// `byTitle` (on `title`, S, including `body`).
fn events_table(name: &str) -> Value {
    json!({
        "TableName": name,
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "date", "AttributeType": "N"},
            {"AttributeName": "title", "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "LocalSecondaryIndexes": [
            {
                "IndexName": "byDate",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "date", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": "byTitle",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "title", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["body"]},
            },
        ],
        "BillingMode": "PAY_PER_REQUEST",
    })
}

fn event(pk: &str, sk: i64, date: Option<i64>) -> Value {
    let mut item = json!({
        "pk": {"S": pk},
        "sk": {"N": sk.to_string()},
        "title": {"S": format!("t{sk}")},
        "body": {"S": "text"},
        "extra": {"S": "not projected"},
    });
    if let Some(date) = date {
        item["date"] = json!({"N": date.to_string()});
    }
    item
}

async fn seeded() -> Server {
    let server = Server::start().await;
    server
        .call("CreateTable", events_table("events"))
        .await
        .ok();
    // Dates run against the sort key; sk 4 has none (sparse).
    for (sk, date) in [(1, Some(30)), (2, Some(20)), (3, Some(10)), (4, None)] {
        server
            .call(
                "PutItem",
                json!({"TableName": "events", "Item": event("p", sk, date)}),
            )
            .await
            .ok();
    }
    server
        .call(
            "PutItem",
            json!({"TableName": "events", "Item": event("q", 1, Some(5))}),
        )
        .await
        .ok();
    server
}

fn sort_keys(page: &Value) -> Vec<&str> {
    page["Items"]
        .as_array()
        .expect("Items")
        .iter()
        .map(|item| item["sk"]["N"].as_str().expect("a sort key"))
        .collect()
}

#[tokio::test]
async fn create_table_describes_local_indexes() {
    let server = Server::start().await;
    let created = server
        .call("CreateTable", events_table("events"))
        .await
        .ok();
    let described = server
        .call("DescribeTable", json!({"TableName": "events"}))
        .await
        .ok();
    for table in [&created["TableDescription"], &described["Table"]] {
        assert_eq!(
            table["LocalSecondaryIndexes"][0],
            json!({
                "IndexName": "byDate",
                "IndexArn": "arn:aws:dynamodb:local:000000000000:table/events/index/byDate",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "date", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ItemCount": 0,
                "IndexSizeBytes": 0,
            })
        );
        assert_eq!(
            table["LocalSecondaryIndexes"][1]["Projection"],
            json!({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["body"]})
        );
        assert_eq!(
            table["AttributeDefinitions"].as_array().map(Vec::len),
            Some(4)
        );
        assert!(table.get("GlobalSecondaryIndexes").is_none());
    }
    let server = {
        server.stop().await;
        seeded().await
    };
    let described = server
        .call("DescribeTable", json!({"TableName": "events"}))
        .await
        .ok();
    let by_date = &described["Table"]["LocalSecondaryIndexes"][0];
    assert_eq!(
        by_date["ItemCount"], 4,
        "the item without a date is not in it"
    );
    assert!(
        by_date["IndexSizeBytes"]
            .as_u64()
            .is_some_and(|bytes| bytes > 0)
    );
}

#[tokio::test]
async fn queries_read_a_local_index_in_its_order_and_fetch_what_it_does_not_project() {
    let server = seeded().await;
    let query = |extra: Value| {
        let mut body = json!({
            "TableName": "events",
            "IndexName": "byDate",
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "p"}},
            "ConsistentRead": true,
            "ReturnConsumedCapacity": "INDEXES",
        });
        for (member, value) in extra.as_object().expect("members") {
            body[member] = value.clone();
        }
        body
    };
    let projected = server.call("Query", query(json!({}))).await.ok();
    assert_eq!(sort_keys(&projected), ["3", "2", "1"], "by date");
    assert_eq!(
        projected["Items"][0],
        json!({"pk": {"S": "p"}, "sk": {"N": "3"}, "date": {"N": "10"}}),
        "keys only"
    );
    assert_eq!(
        projected["ConsumedCapacity"],
        json!({
            "TableName": "events",
            "CapacityUnits": 1.0,
            "Table": {"CapacityUnits": 0.0},
            "LocalSecondaryIndexes": {"byDate": {"CapacityUnits": 1.0}},
        })
    );
    let whole = server
        .call("Query", query(json!({"Select": "ALL_ATTRIBUTES"})))
        .await
        .ok();
    assert_eq!(sort_keys(&whole), ["3", "2", "1"]);
    assert_eq!(whole["Items"][0], event("p", 3, Some(10)));
    // One unit for the entries, one for each item fetched from the table.
    assert_eq!(whole["ConsumedCapacity"]["CapacityUnits"], 4.0);
    assert_eq!(
        whole["ConsumedCapacity"]["LocalSecondaryIndexes"],
        json!({"byDate": {"CapacityUnits": 1.0}})
    );
    let named = server
        .call(
            "Query",
            query(json!({
                "ProjectionExpression": "sk, extra",
                "ScanIndexForward": false,
                "Limit": 2,
            })),
        )
        .await
        .ok();
    assert_eq!(
        named["Items"],
        json!([
            {"sk": {"N": "1"}, "extra": {"S": "not projected"}},
            {"sk": {"N": "2"}, "extra": {"S": "not projected"}},
        ])
    );
    assert_eq!(
        named["LastEvaluatedKey"],
        json!({"pk": {"S": "p"}, "sk": {"N": "2"}, "date": {"N": "20"}})
    );
    let rest = server
        .call(
            "Query",
            query(json!({
                "ScanIndexForward": false,
                "ExclusiveStartKey": named["LastEvaluatedKey"],
            })),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&rest), ["3"]);
    let scanned = server
        .call(
            "Scan",
            json!({"TableName": "events", "IndexName": "byTitle", "ConsistentRead": true}),
        )
        .await
        .ok();
    assert_eq!(scanned["Count"], 5);
    assert!(
        scanned["Items"]
            .as_array()
            .expect("Items")
            .iter()
            .all(|item| item.get("body").is_some() && item.get("extra").is_none()),
        "INCLUDE projects body, not extra"
    );
}

#[tokio::test]
async fn writes_maintain_local_indexes_and_charge_them() {
    let server = seeded().await;
    let moved = server
        .call(
            "UpdateItem",
            json!({
                "TableName": "events",
                "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
                "UpdateExpression": "SET #d = :d",
                "ExpressionAttributeNames": {"#d": "date"},
                "ExpressionAttributeValues": {":d": {"N": "1"}},
                "ReturnConsumedCapacity": "INDEXES",
            }),
        )
        .await
        .ok();
    // The table's unit, and byDate's entry moved: one unit out, one in.
    assert_eq!(
        moved["ConsumedCapacity"],
        json!({
            "TableName": "events",
            "CapacityUnits": 3.0,
            "Table": {"CapacityUnits": 1.0},
            "LocalSecondaryIndexes": {"byDate": {"CapacityUnits": 2.0}},
        })
    );
    server
        .call(
            "DeleteItem",
            json!({"TableName": "events", "Key": {"pk": {"S": "p"}, "sk": {"N": "2"}}}),
        )
        .await
        .ok();
    let page = server
        .call(
            "Query",
            json!({
                "TableName": "events",
                "IndexName": "byDate",
                "KeyConditionExpression": "pk = :p AND #d < :d",
                "ExpressionAttributeNames": {"#d": "date"},
                "ExpressionAttributeValues": {":p": {"S": "p"}, ":d": {"N": "25"}},
            }),
        )
        .await
        .ok();
    assert_eq!(sort_keys(&page), ["1", "3"]);
    server
        .call(
            "PutItem",
            json!({"TableName": "events", "Item": {"pk": {"S": "p"}, "sk": {"N": "9"}, "date": {"S": "soon"}}}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Type mismatch for Index Key date Expected: N Actual: S IndexName: byDate",
        );
    server
        .call(
            "UpdateTable",
            json!({
                "TableName": "events",
                "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "byDate"}}],
            }),
        )
        .await
        .error(
            400,
            "ResourceNotFoundException",
            "Requested resource not found: Index: byDate not found on table events",
        );
}

#[tokio::test]
async fn create_table_checks_local_indexes_as_dynamodb_does() {
    let server = Server::start().await;
    let with = |change: &dyn Fn(&mut Value)| {
        let mut body = events_table("refused");
        change(&mut body);
        body
    };
    let cases: Vec<(Value, String)> = vec![
        (
            with(&|b| b["LocalSecondaryIndexes"] = json!([])),
            "One or more parameter values were invalid: List of LocalSecondaryIndexes is empty"
                .into(),
        ),
        (
            with(&|b| {
                b["KeySchema"] = json!([{"AttributeName": "pk", "KeyType": "HASH"}]);
                b["AttributeDefinitions"].as_array_mut().expect("a list").remove(1);
            }),
            "One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex".into(),
        ),
        (
            with(&|b| {
                b["LocalSecondaryIndexes"][0]["KeySchema"] =
                    json!([{"AttributeName": "pk", "KeyType": "HASH"}]);
            }),
            "One or more parameter values were invalid: Index KeySchema does not have a range key for index: byDate".into(),
        ),
        (
            with(&|b| {
                b["LocalSecondaryIndexes"][0]["KeySchema"] = json!([
                    {"AttributeName": "title", "KeyType": "HASH"},
                    {"AttributeName": "date", "KeyType": "RANGE"},
                ]);
            }),
            "One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: byDate. index hash key: title, table hash key: pk".into(),
        ),
        (
            with(&|b| b["LocalSecondaryIndexes"][1]["IndexName"] = json!("byDate")),
            "One or more parameter values were invalid: Duplicate index name: byDate".into(),
        ),
        (
            with(&|b| {
                let first = b["LocalSecondaryIndexes"][0].clone();
                b["LocalSecondaryIndexes"] = (0..6)
                    .map(|i| {
                        let mut index = first.clone();
                        index["IndexName"] = json!(format!("local{i}"));
                        index
                    })
                    .collect();
                b["AttributeDefinitions"].as_array_mut().expect("a list").pop();
            }),
            "One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds per-table limit of 5".into(),
        ),
        (
            with(&|b| {
                b["GlobalSecondaryIndexes"] = json!([{
                    "IndexName": "byDate",
                    "KeySchema": [{"AttributeName": "date", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }]);
            }),
            "One or more parameter values were invalid: Duplicate index name: byDate".into(),
        ),
    ];
    for (body, message) in cases {
        server
            .call("CreateTable", body)
            .await
            .error(400, "ValidationException", &message);
    }
    let tables = server.call("ListTables", json!({})).await.ok();
    assert_eq!(tables["TableNames"], json!([]), "nothing was created");
}

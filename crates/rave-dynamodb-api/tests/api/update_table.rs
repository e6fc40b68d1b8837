//! UpdateTable through the HTTP server: an index created from the table's
//! items and deleted, billing and throughput changes, and DynamoDB's
//! refusals, each of which changes nothing.

use serde_json::{Value, json};

use crate::support::Server;

const TABLE: &str = "shop";
/// Longer than any backfill here takes: a test waiting on one fails
/// rather than hangs.
const BACKFILL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

async fn shop(server: &Server, items: usize) {
    server.create_hash_keyed_table(TABLE).await;
    for i in 0..items {
        let mut item = json!({"pk": {"S": format!("p{i:04}")}, "n": {"N": i.to_string()}});
        // Every third item has a colour: the index is sparse.
        if i % 3 == 0 {
            item["color"] = json!({"S": if i % 2 == 0 { "red" } else { "blue" }});
        }
        server
            .call("PutItem", json!({"TableName": TABLE, "Item": item}))
            .await
            .ok();
    }
}

fn create_by_color(throughput: Option<Value>) -> Value {
    let mut create = json!({
        "IndexName": "byColor",
        "KeySchema": [{"AttributeName": "color", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    });
    if let Some(throughput) = throughput {
        create["ProvisionedThroughput"] = throughput;
    }
    json!({"Create": create})
}

fn definitions() -> Value {
    json!([
        {"AttributeName": "color", "AttributeType": "S"},
        {"AttributeName": "n", "AttributeType": "N"},
    ])
}

async fn describe(server: &Server) -> Value {
    server
        .call("DescribeTable", json!({"TableName": TABLE}))
        .await
        .ok()["Table"]
        .clone()
}

async fn reds(server: &Server) -> crate::support::Answer {
    server
        .call(
            "Query",
            json!({
                "TableName": TABLE,
                "IndexName": "byColor",
                "KeyConditionExpression": "color = :c",
                "ExpressionAttributeValues": {":c": {"S": "red"}},
            }),
        )
        .await
}

#[tokio::test]
async fn an_index_is_created_from_the_items_then_deleted() {
    let server = Server::start().await;
    shop(&server, 1_200).await;
    let answer = server
        .call(
            "UpdateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(),
                "GlobalSecondaryIndexUpdates": [create_by_color(None)],
            }),
        )
        .await
        .ok();
    let table = &answer["TableDescription"];
    assert_eq!(table["TableStatus"], "UPDATING");
    let index = &table["GlobalSecondaryIndexes"][0];
    assert_eq!(index["IndexName"], "byColor");
    assert_eq!(index["IndexStatus"], "CREATING");
    assert_eq!(index["Backfilling"], true);
    assert_eq!(index["ItemCount"], 0);
    assert_eq!(
        table["AttributeDefinitions"],
        json!([
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "color", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
        ])
    );
    // Until the backfill is over the index is CREATING and cannot be read;
    // then it is ACTIVE, without the Backfilling flag, and holds every
    // item with a colour.
    let reds_expected = (0..1_200).filter(|i| i % 6 == 0).count();
    let deadline = std::time::Instant::now() + BACKFILL_DEADLINE;
    let active = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the index never became ACTIVE"
        );
        let table = describe(&server).await;
        assert_eq!(table["TableStatus"], "ACTIVE");
        let index = table["GlobalSecondaryIndexes"][0].clone();
        let query = reds(&server).await;
        if index["IndexStatus"] == "ACTIVE" {
            break index;
        }
        assert_eq!(index["IndexStatus"], "CREATING");
        assert_eq!(index["Backfilling"], true);
        if query.status != 200 {
            query.error(
                400,
                "ValidationException",
                "Cannot read from backfilling global secondary index: byColor",
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(active.get("Backfilling"), None);
    assert_eq!(active["ItemCount"], 400);
    let page = reds(&server).await.ok();
    assert_eq!(page["Count"], reds_expected);
    assert_eq!(
        page["Items"][0],
        json!({"pk": {"S": "p0000"}, "color": {"S": "red"}, "n": {"N": "0"}})
    );

    let deleted = server
        .call(
            "UpdateTable",
            json!({"TableName": TABLE, "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "byColor"}}]}),
        )
        .await
        .ok();
    // Answered DELETING, as DynamoDB answers; gone once deleted.
    let deleting = &deleted["TableDescription"]["GlobalSecondaryIndexes"];
    assert_eq!(deleting.as_array().map(Vec::len), Some(1));
    assert_eq!(deleting[0]["IndexName"], "byColor");
    assert_eq!(deleting[0]["IndexStatus"], "DELETING");
    let described = server
        .call("DescribeTable", json!({"TableName": TABLE}))
        .await
        .ok();
    assert_eq!(described["Table"].get("GlobalSecondaryIndexes"), None);
    assert_eq!(
        deleted["TableDescription"]["AttributeDefinitions"],
        json!([{"AttributeName": "pk", "AttributeType": "S"}])
    );
    reds(&server).await.error(
        400,
        "ValidationException",
        "The table does not have the specified index: byColor",
    );
}

#[tokio::test]
async fn refused_updates_say_why_as_dynamodb_does_and_change_nothing() {
    let server = Server::start().await;
    shop(&server, 3).await;
    let before = describe(&server).await;
    let refused = |request: Value| async {
        let mut request = request;
        request["TableName"] = json!(TABLE);
        server.call("UpdateTable", request).await
    };
    refused(json!({})).await.error(
        400,
        "ValidationException",
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required",
    );
    refused(json!({"GlobalSecondaryIndexUpdates": [create_by_color(None)]}))
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [color, n], AttributeDefinitions: []",
        );
    refused(json!({"GlobalSecondaryIndexUpdates": [{}]})).await.error(
        400,
        "ValidationException",
        "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null",
    );
    refused(json!({
        "AttributeDefinitions": definitions(),
        "GlobalSecondaryIndexUpdates": [create_by_color(None), {"Delete": {"IndexName": "byColor"}}],
    }))
    .await
    .error(
        400,
        "ValidationException",
        "One or more parameter values were invalid: Only one global secondary index update per index is allowed simultaneously. Index: byColor",
    );
    refused(json!({
        "AttributeDefinitions": definitions(),
        "GlobalSecondaryIndexUpdates": [create_by_color(None), {"Delete": {"IndexName": "other"}}],
    }))
    .await
    .error(
        400,
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    );
    refused(json!({"GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "nothing"}}]}))
        .await
        .error(
            400,
            "ResourceNotFoundException",
            "Requested resource not found: Index: nothing not found on table shop",
        );
    refused(json!({
        "AttributeDefinitions": definitions(),
        "GlobalSecondaryIndexUpdates": [create_by_color(Some(json!({"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})))],
    }))
    .await
    .error(
        400,
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: byColor when BillingMode is PAY_PER_REQUEST",
    );
    refused(json!({"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}))
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        );
    refused(json!({"BillingMode": "PROVISIONED"})).await.error(
        400,
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
    );
    refused(json!({"TableClass": "GLACIER"})).await.error(
        400,
        "ValidationException",
        "1 validation error detected: Value 'GLACIER' at 'tableClass' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, STANDARD_INFREQUENT_ACCESS]",
    );
    server
        .call(
            "UpdateTable",
            json!({"TableName": "missing", "BillingMode": "PAY_PER_REQUEST"}),
        )
        .await
        .error(
            400,
            "ResourceNotFoundException",
            "Requested resource not found: Table: missing not found",
        );
    assert_eq!(describe(&server).await, before);
}

#[tokio::test]
async fn billing_and_throughput_change_for_the_table_and_its_indexes() {
    let server = Server::start().await;
    shop(&server, 3).await;
    let units =
        |read: i64, write: i64| json!({"ReadCapacityUnits": read, "WriteCapacityUnits": write});
    server
        .call(
            "UpdateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(),
                "GlobalSecondaryIndexUpdates": [create_by_color(None)],
            }),
        )
        .await
        .ok();
    let provision = json!({
        "TableName": TABLE,
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": units(5, 6),
    });
    server.call("UpdateTable", provision.clone()).await.error(
        400,
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: byColor",
    );
    let mut with_index = provision.clone();
    with_index["GlobalSecondaryIndexUpdates"] =
        json!([{"Update": {"IndexName": "byColor", "ProvisionedThroughput": units(2, 3)}}]);
    server.call("UpdateTable", with_index).await.ok();
    let table = describe(&server).await;
    assert_eq!(table["BillingModeSummary"]["BillingMode"], "PROVISIONED");
    assert_eq!(table["ProvisionedThroughput"]["ReadCapacityUnits"], 5);
    assert_eq!(table["ProvisionedThroughput"]["WriteCapacityUnits"], 6);
    let index = &table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"];
    assert_eq!(
        (
            index["ReadCapacityUnits"].clone(),
            index["WriteCapacityUnits"].clone()
        ),
        (json!(2), json!(3))
    );

    server
        .call(
            "UpdateTable",
            json!({"TableName": TABLE, "ProvisionedThroughput": units(5, 6)}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. Current WriteCapacityUnits provisioned for the table: 6. Requested WriteCapacityUnits: 6. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
        );
    server
        .call(
            "UpdateTable",
            json!({"TableName": TABLE, "ProvisionedThroughput": units(10, 6)}),
        )
        .await
        .ok();
    let table = describe(&server).await;
    assert_eq!(table["ProvisionedThroughput"]["ReadCapacityUnits"], 10);
    assert_eq!(
        table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"], 2,
        "the index keeps its own"
    );

    server
        .call(
            "UpdateTable",
            json!({"TableName": TABLE, "BillingMode": "PAY_PER_REQUEST"}),
        )
        .await
        .ok();
    let table = describe(&server).await;
    assert_eq!(
        table["BillingModeSummary"]["BillingMode"],
        "PAY_PER_REQUEST"
    );
    assert_eq!(table["ProvisionedThroughput"]["ReadCapacityUnits"], 0);
    assert_eq!(
        table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"],
        0
    );
}

/// An index whose key reuses the table's key, declared again with another
/// type: DynamoDB creates it and keeps the type the table declared.
#[tokio::test]
async fn a_key_declared_again_with_another_type_keeps_its_first_type() {
    let server = Server::start().await;
    shop(&server, 3).await;
    server
        .call(
            "UpdateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "N"},
                    {"AttributeName": "color", "AttributeType": "S"},
                ],
                "GlobalSecondaryIndexUpdates": [{"Create": {
                    "IndexName": "byColorThenKey",
                    "KeySchema": [{"AttributeName": "color", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "ALL"},
                }}],
            }),
        )
        .await
        .ok();
    let deadline = std::time::Instant::now() + BACKFILL_DEADLINE;
    let table = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the index never became ACTIVE"
        );
        let table = describe(&server).await;
        if table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE" {
            break table;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(
        table["AttributeDefinitions"],
        json!([
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "color", "AttributeType": "S"},
        ])
    );
    let page = server
        .call(
            "Query",
            json!({
                "TableName": TABLE,
                "IndexName": "byColorThenKey",
                "KeyConditionExpression": "color = :c",
                "ExpressionAttributeValues": {":c": {"S": "red"}},
            }),
        )
        .await
        .ok();
    assert_eq!(page["Items"][0]["pk"], json!({"S": "p0000"}));
}

//! Table settings, Time to Live, DescribeEndpoints, DescribeLimits,
//! tagging and TransactGetItems through the HTTP server.

use serde_json::{Value, json};

use crate::support::{Server, hash_keyed_table};

const ARN: &str = "arn:aws:dynamodb:local:000000000000:table/";

async fn create_table(server: &Server, name: &str, extra: Value) -> Value {
    let mut request = hash_keyed_table(name);
    if let (Value::Object(request), Value::Object(extra)) = (&mut request, extra) {
        request.extend(extra);
    }
    server.call("CreateTable", request).await.ok()
}

/// Table class, deletion protection, on-demand maximums and encryption:
/// set by CreateTable and UpdateTable, described, kept across a restart;
/// a protected table cannot be deleted.
#[tokio::test]
async fn table_settings_are_described_kept_and_deletion_protection_enforced() {
    let server = Server::start().await;
    let created = create_table(
        &server,
        "ledger",
        json!({
            "TableClass": "STANDARD_INFREQUENT_ACCESS",
            "DeletionProtectionEnabled": true,
            "OnDemandThroughput": {"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": 5},
            "SSESpecification": {"Enabled": true, "SSEType": "KMS"},
        }),
    )
    .await["TableDescription"]
        .clone();
    let table_id = created["TableId"].as_str().unwrap().to_owned();
    assert_eq!(table_id.len(), 36, "{table_id}");
    assert_eq!(created["DeletionProtectionEnabled"], true);
    assert_eq!(
        created["TableClassSummary"]["TableClass"],
        "STANDARD_INFREQUENT_ACCESS"
    );
    assert_eq!(
        created["OnDemandThroughput"],
        json!({"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": 5})
    );
    assert_eq!(created["SSEDescription"]["Status"], "ENABLED");
    assert_eq!(created["SSEDescription"]["SSEType"], "KMS");
    assert!(
        created["SSEDescription"]["KMSMasterKeyArn"]
            .as_str()
            .unwrap()
            .starts_with("arn:aws:kms:")
    );

    server
        .call("DeleteTable", json!({"TableName": "ledger"}))
        .await
        .error(
            400,
            "ValidationException",
            "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
        );
    let server = Server::start_in(server.stop().await).await;
    let described = server
        .call("DescribeTable", json!({"TableName": "ledger"}))
        .await
        .ok()["Table"]
        .clone();
    assert_eq!(described["TableId"], table_id.as_str());
    assert_eq!(described["DeletionProtectionEnabled"], true);
    assert_eq!(described["TableClassSummary"], created["TableClassSummary"]);

    let updated = server
        .call(
            "UpdateTable",
            json!({
                "TableName": "ledger",
                "DeletionProtectionEnabled": false,
                "TableClass": "STANDARD",
                "SSESpecification": {"Enabled": false},
            }),
        )
        .await
        .ok()["TableDescription"]
        .clone();
    assert_eq!(updated["DeletionProtectionEnabled"], false);
    assert_eq!(updated["TableClassSummary"]["TableClass"], "STANDARD");
    assert!(updated.get("SSEDescription").is_none(), "{updated}");
    assert_eq!(updated["TableId"], table_id.as_str());
    server
        .call("DeleteTable", json!({"TableName": "ledger"}))
        .await
        .ok();

    // Unset, a table is STANDARD without a summary, unprotected, and its
    // id stays the same from one description to the next.
    let plain = create_table(&server, "plain", json!({})).await["TableDescription"].clone();
    assert_eq!(plain["DeletionProtectionEnabled"], false);
    assert!(plain.get("TableClassSummary").is_none());
    assert!(plain.get("SSEDescription").is_none());
    let again = server
        .call("DescribeTable", json!({"TableName": "plain"}))
        .await
        .ok();
    assert_eq!(again["Table"]["TableId"], plain["TableId"]);
}

#[tokio::test]
async fn time_to_live_is_enabled_described_and_disabled_under_dynamodbs_rules() {
    let server = Server::start().await;
    create_table(&server, "sessions", json!({})).await;
    let describe = || server.call("DescribeTimeToLive", json!({"TableName": "sessions"}));
    assert_eq!(
        describe().await.ok(),
        json!({"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}})
    );
    let enable = json!({"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": true}});
    assert_eq!(
        server.call("UpdateTimeToLive", enable.clone()).await.ok(),
        json!({"TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": true}})
    );
    assert_eq!(
        describe().await.ok(),
        json!({"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}})
    );
    server.call("UpdateTimeToLive", enable).await.error(
        400,
        "ValidationException",
        "TimeToLive is already enabled",
    );
    server
        .call(
            "UpdateTimeToLive",
            json!({"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "other", "Enabled": false}}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "TimeToLive is enabled on attribute expires, not other",
        );
    server
        .call("UpdateTimeToLive", json!({"TableName": "sessions"}))
        .await
        .error(
            400,
            "ValidationException",
            "1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null",
        );
    server
        .call(
            "UpdateTimeToLive",
            json!({"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "expires"}}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "1 validation error detected: Value null at 'timeToLiveSpecification.enabled' failed to satisfy constraint: Member must not be null",
        );
    assert_eq!(
        server
            .call(
                "UpdateTimeToLive",
                json!({"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": false}}),
            )
            .await
            .ok(),
        json!({"TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": false}})
    );
    assert_eq!(
        describe().await.ok()["TimeToLiveDescription"]["TimeToLiveStatus"],
        "DISABLED"
    );
    let missing = server
        .call("DescribeTimeToLive", json!({"TableName": "nothing"}))
        .await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.body["__type"],
        "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
    );
}

#[tokio::test]
async fn describe_endpoints_names_the_address_the_client_reached() {
    let server = Server::start().await;
    let host = server.url.trim_start_matches("http://");
    assert_eq!(
        server.call("DescribeEndpoints", json!({})).await.ok(),
        json!({"Endpoints": [{"Address": host, "CachePeriodInMinutes": 1440}]})
    );
}

#[tokio::test]
async fn describe_limits_reports_dynamodbs_default_quotas() {
    let server = Server::start().await;
    assert_eq!(
        server.call("DescribeLimits", json!({})).await.ok(),
        json!({
            "AccountMaxReadCapacityUnits": 80000,
            "AccountMaxWriteCapacityUnits": 80000,
            "TableMaxReadCapacityUnits": 40000,
            "TableMaxWriteCapacityUnits": 40000,
        })
    );
}

async fn list_tags(server: &Server, arn: &str) -> Value {
    server
        .call("ListTagsOfResource", json!({"ResourceArn": arn}))
        .await
        .ok()
}

#[tokio::test]
async fn tags_are_added_listed_removed_and_survive_a_restart() {
    let server = Server::start().await;
    create_table(
        &server,
        "orders",
        json!({"Tags": [{"Key": "team", "Value": "shop"}]}),
    )
    .await;
    let arn = format!("{ARN}orders");
    assert_eq!(
        list_tags(&server, &arn).await,
        json!({"Tags": [{"Key": "team", "Value": "shop"}]})
    );
    server
        .call(
            "TagResource",
            json!({"ResourceArn": arn, "Tags": [{"Key": "env", "Value": "test"}, {"Key": "team", "Value": "orders"}]}),
        )
        .await
        .ok();
    assert_eq!(
        list_tags(&server, &arn).await,
        json!({"Tags": [{"Key": "env", "Value": "test"}, {"Key": "team", "Value": "orders"}]})
    );
    server
        .call(
            "UntagResource",
            json!({"ResourceArn": arn, "TagKeys": ["env", "absent"]}),
        )
        .await
        .ok();
    let server = Server::start_in(server.stop().await).await;
    assert_eq!(
        list_tags(&server, &arn).await,
        json!({"Tags": [{"Key": "team", "Value": "orders"}]})
    );
    server
        .call(
            "ListTagsOfResource",
            json!({"ResourceArn": format!("{ARN}nothing")}),
        )
        .await
        .error(
            400,
            "ResourceNotFoundException",
            &format!("Requested resource not found: ResourceArn: {ARN}nothing not found"),
        );
    server
        .call("ListTagsOfResource", json!({"ResourceArn": "orders"}))
        .await
        .error(
            400,
            "ValidationException",
            "Invalid TableArn: Invalid ResourceArn provided as input orders",
        );
    let too_many: Vec<Value> = (0..51)
        .map(|n| json!({"Key": format!("k{n}"), "Value": "v"}))
        .collect();
    server
        .call("TagResource", json!({"ResourceArn": arn, "Tags": too_many}))
        .await
        .error(
            400,
            "LimitExceededException",
            "The number of tags on a resource cannot exceed 50",
        );
}

#[tokio::test]
async fn transact_get_items_reads_each_key_in_order_and_charges_double() {
    let server = Server::start().await;
    create_table(&server, "orders", json!({})).await;
    create_table(&server, "customers", json!({})).await;
    for (table, item) in [
        (
            "orders",
            json!({"pk": {"S": "o1"}, "total": {"N": "12"}, "note": {"S": "gift"}}),
        ),
        (
            "customers",
            json!({"pk": {"S": "c1"}, "name": {"S": "Ada"}}),
        ),
        (
            "customers",
            json!({"pk": {"S": "c2"}, "name": {"S": "Grace"}}),
        ),
    ] {
        server
            .call("PutItem", json!({"TableName": table, "Item": item}))
            .await
            .ok();
    }
    let answer = server
        .call(
            "TransactGetItems",
            json!({
                "TransactItems": [
                    {"Get": {"TableName": "customers", "Key": {"pk": {"S": "c1"}}}},
                    {"Get": {"TableName": "orders", "Key": {"pk": {"S": "missing"}}}},
                    {"Get": {
                        "TableName": "orders",
                        "Key": {"pk": {"S": "o1"}},
                        "ProjectionExpression": "#t",
                        "ExpressionAttributeNames": {"#t": "total"},
                    }},
                    {"Get": {
                        "TableName": "customers",
                        "Key": {"pk": {"S": "c2"}},
                        "ProjectionExpression": "nickname",
                    }},
                ],
                "ReturnConsumedCapacity": "TOTAL",
            }),
        )
        .await
        .ok();
    assert_eq!(
        answer["Responses"],
        json!([
            {"Item": {"pk": {"S": "c1"}, "name": {"S": "Ada"}}},
            {},
            {"Item": {"total": {"N": "12"}}},
            // A projection matching nothing on a present item: no `Item`.
            {},
        ])
    );
    assert_eq!(
        answer["ConsumedCapacity"],
        json!([
            {"TableName": "customers", "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0},
            {"TableName": "orders", "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0},
        ])
    );
    server
        .call(
            "TransactGetItems",
            json!({"TransactItems": [
                {"Get": {"TableName": "orders", "Key": {"pk": {"S": "o1"}}}},
                {"Get": {"TableName": "orders", "Key": {"pk": {"S": "o1"}}}},
            ]}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "Transaction request cannot include multiple operations on one item",
        );
    let missing_table = server
        .call(
            "TransactGetItems",
            json!({"TransactItems": [{"Get": {"TableName": "nothing", "Key": {"pk": {"S": "x"}}}}]}),
        )
        .await;
    assert_eq!(
        missing_table.body["__type"],
        "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
    );
}

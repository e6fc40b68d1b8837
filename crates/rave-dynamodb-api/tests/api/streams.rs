//! DynamoDB Streams through the HTTP server: streams listed and described,
//! iterators of every type, records with the table's view type, and the
//! records Time to Live makes.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::support::{Server, hash_keyed_table};

async fn create_table(server: &Server, name: &str, view: Option<&str>) -> Value {
    let mut request = hash_keyed_table(name);
    if let Some(view) = view {
        request["StreamSpecification"] = json!({"StreamEnabled": true, "StreamViewType": view});
    }
    server.call("CreateTable", request).await.ok()["TableDescription"].clone()
}

async fn put(server: &Server, table: &str, pk: &str, n: i64) {
    server
        .call(
            "PutItem",
            json!({"TableName": table, "Item": {"pk": {"S": pk}, "n": {"N": n.to_string()}}}),
        )
        .await
        .ok();
}

async fn iterator(server: &Server, arn: &str, kind: &str, sequence: Option<&str>) -> String {
    let mut request = json!({
        "StreamArn": arn,
        "ShardId": shard(server, arn).await,
        "ShardIteratorType": kind,
    });
    if let Some(sequence) = sequence {
        request["SequenceNumber"] = json!(sequence);
    }
    let answer = server.call_streams("GetShardIterator", request).await.ok();
    answer["ShardIterator"]
        .as_str()
        .expect("an iterator")
        .to_owned()
}

async fn shard(server: &Server, arn: &str) -> String {
    let described = server
        .call_streams("DescribeStream", json!({"StreamArn": arn}))
        .await
        .ok();
    described["StreamDescription"]["Shards"][0]["ShardId"]
        .as_str()
        .expect("a shard")
        .to_owned()
}

/// Every record from `iterator` on, and the iterator to continue from.
async fn records(server: &Server, iterator: &str, limit: Option<i64>) -> (Vec<Value>, String) {
    let mut request = json!({"ShardIterator": iterator});
    if let Some(limit) = limit {
        request["Limit"] = json!(limit);
    }
    let answer = server.call_streams("GetRecords", request).await.ok();
    let records = answer["Records"].as_array().expect("records").clone();
    let next = answer["NextShardIterator"]
        .as_str()
        .expect("a next iterator")
        .to_owned();
    (records, next)
}

fn names(records: &[Value]) -> Vec<&str> {
    records
        .iter()
        .map(|r| r["eventName"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn streams_are_listed_and_described_as_dynamodb_describes_them() {
    let server = Server::start().await;
    let orders = create_table(&server, "orders", Some("NEW_IMAGE")).await;
    create_table(&server, "plain", None).await;
    let arn = orders["LatestStreamArn"].as_str().expect("a stream ARN");
    let label = orders["LatestStreamLabel"]
        .as_str()
        .expect("a stream label");
    assert_eq!(
        arn,
        format!("arn:aws:dynamodb:local:000000000000:table/orders/stream/{label}")
    );
    assert_eq!(
        orders["StreamSpecification"],
        json!({"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"})
    );
    let expected =
        json!({"Streams": [{"StreamArn": arn, "TableName": "orders", "StreamLabel": label}]});
    assert_eq!(
        server.call_streams("ListStreams", json!({})).await.ok(),
        expected
    );
    assert_eq!(
        server
            .call_streams("ListStreams", json!({"TableName": "orders"}))
            .await
            .ok(),
        expected
    );
    assert_eq!(
        server
            .call_streams("ListStreams", json!({"TableName": "plain"}))
            .await
            .ok(),
        json!({"Streams": []})
    );
    put(&server, "orders", "a", 1).await;
    let described = server
        .call_streams("DescribeStream", json!({"StreamArn": arn}))
        .await
        .ok()["StreamDescription"]
        .clone();
    assert_eq!(described["StreamArn"], json!(arn));
    assert_eq!(described["StreamLabel"], json!(label));
    assert_eq!(described["StreamStatus"], "ENABLED");
    assert_eq!(described["StreamViewType"], "NEW_IMAGE");
    assert_eq!(described["TableName"], "orders");
    assert_eq!(
        described["KeySchema"],
        json!([{"AttributeName": "pk", "KeyType": "HASH"}])
    );
    let shards = described["Shards"].as_array().expect("shards");
    assert_eq!(shards.len(), 1);
    let starting = shards[0]["SequenceNumberRange"]["StartingSequenceNumber"]
        .as_str()
        .expect("a starting sequence number");
    assert!(starting.len() >= 21 && starting.bytes().all(|b| b.is_ascii_digit()));
    assert!(
        shards[0]["SequenceNumberRange"]
            .get("EndingSequenceNumber")
            .is_none()
    );
    server
        .call_streams(
            "DescribeStream",
            json!({"StreamArn": format!("arn:aws:dynamodb:local:000000000000:table/plain/stream/{label}")}),
        )
        .await
        .error(
            400,
            "ResourceNotFoundException",
            &format!("Requested resource not found: Stream: arn:aws:dynamodb:local:000000000000:table/plain/stream/{label} not found"),
        );
}

#[tokio::test]
async fn records_carry_the_images_their_view_type_names() {
    let server = Server::start().await;
    let mut arns = Vec::new();
    for (table, view) in [
        ("keys", "KEYS_ONLY"),
        ("news", "NEW_IMAGE"),
        ("olds", "OLD_IMAGE"),
        ("both", "NEW_AND_OLD_IMAGES"),
    ] {
        let described = create_table(&server, table, Some(view)).await;
        arns.push((
            table,
            view,
            described["LatestStreamArn"]
                .as_str()
                .expect("ARN")
                .to_owned(),
        ));
        put(&server, table, "a", 1).await;
        put(&server, table, "a", 2).await;
        server
            .call(
                "DeleteItem",
                json!({"TableName": table, "Key": {"pk": {"S": "a"}}}),
            )
            .await
            .ok();
    }
    let item = |n: i64| json!({"pk": {"S": "a"}, "n": {"N": n.to_string()}});
    for (table, view, arn) in arns {
        let start = iterator(&server, &arn, "TRIM_HORIZON", None).await;
        let (records, _) = records(&server, &start, None).await;
        assert_eq!(names(&records), ["INSERT", "MODIFY", "REMOVE"], "{table}");
        let images = |member: &str| -> Vec<Option<Value>> {
            records
                .iter()
                .map(|r| r["dynamodb"].get(member).cloned())
                .collect()
        };
        let (new, old) = match view {
            "KEYS_ONLY" => (vec![None, None, None], vec![None, None, None]),
            "NEW_IMAGE" => (
                vec![Some(item(1)), Some(item(2)), None],
                vec![None, None, None],
            ),
            "OLD_IMAGE" => (
                vec![None, None, None],
                vec![None, Some(item(1)), Some(item(2))],
            ),
            _ => (
                vec![Some(item(1)), Some(item(2)), None],
                vec![None, Some(item(1)), Some(item(2))],
            ),
        };
        assert_eq!(images("NewImage"), new, "{table}");
        assert_eq!(images("OldImage"), old, "{table}");
        for record in &records {
            assert_eq!(record["eventSource"], "aws:dynamodb");
            assert_eq!(record["eventVersion"], "1.1");
            assert_eq!(record["awsRegion"], "local");
            assert!(record["eventID"].as_str().is_some_and(|id| !id.is_empty()));
            assert_eq!(record["dynamodb"]["Keys"], json!({"pk": {"S": "a"}}));
            assert_eq!(record["dynamodb"]["StreamViewType"], view);
            assert!(
                record["dynamodb"]["SizeBytes"]
                    .as_u64()
                    .is_some_and(|s| s > 0)
            );
            assert!(
                record["dynamodb"]["ApproximateCreationDateTime"]
                    .as_u64()
                    .is_some()
            );
            assert!(record.get("userIdentity").is_none());
        }
    }
}

#[tokio::test]
async fn iterators_start_where_their_type_says_and_continue() {
    let server = Server::start().await;
    let described = create_table(&server, "events", Some("NEW_IMAGE")).await;
    let arn = described["LatestStreamArn"]
        .as_str()
        .expect("ARN")
        .to_owned();
    for n in 1..=3 {
        put(&server, "events", &format!("k{n}"), n).await;
    }
    let latest = iterator(&server, &arn, "LATEST", None).await;
    let start = iterator(&server, &arn, "TRIM_HORIZON", None).await;
    let (first, next) = records(&server, &start, Some(2)).await;
    assert_eq!(first.len(), 2);
    let (rest, next) = records(&server, &next, None).await;
    assert_eq!(rest.len(), 1);
    let keys = |records: &[Value]| -> Vec<Value> {
        records
            .iter()
            .map(|r| r["dynamodb"]["Keys"]["pk"]["S"].clone())
            .collect()
    };
    assert_eq!(keys(&first), [json!("k1"), json!("k2")]);
    assert_eq!(keys(&rest), [json!("k3")]);
    let (none, next) = records(&server, &next, None).await;
    assert!(none.is_empty());
    let second = first[1]["dynamodb"]["SequenceNumber"]
        .as_str()
        .expect("a number");
    let at = iterator(&server, &arn, "AT_SEQUENCE_NUMBER", Some(second)).await;
    assert_eq!(
        keys(&records(&server, &at, None).await.0),
        [json!("k2"), json!("k3")]
    );
    let after = iterator(&server, &arn, "AFTER_SEQUENCE_NUMBER", Some(second)).await;
    assert_eq!(keys(&records(&server, &after, None).await.0), [json!("k3")]);
    put(&server, "events", "k4", 4).await;
    assert_eq!(
        keys(&records(&server, &latest, None).await.0),
        [json!("k4")]
    );
    assert_eq!(keys(&records(&server, &next, None).await.0), [json!("k4")]);

    let shard = shard(&server, &arn).await;
    server
        .call_streams(
            "GetShardIterator",
            json!({"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "AT_SEQUENCE_NUMBER"}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Invalid SequenceNumber",
        );
    server
        .call_streams(
            "GetShardIterator",
            json!({"StreamArn": arn, "ShardId": "shardId-nothing", "ShardIteratorType": "LATEST"}),
        )
        .await
        .error(
            400,
            "ResourceNotFoundException",
            "Requested resource not found: Shard does not exist: shardId-nothing",
        );
    server
        .call_streams("GetRecords", json!({"ShardIterator": "garbage"}))
        .await
        .error(400, "ValidationException", "Invalid ShardIterator");
}

#[tokio::test]
async fn removals_by_time_to_live_name_dynamodb_as_their_author() {
    let server = Server::start().await;
    let described = create_table(&server, "sessions", Some("OLD_IMAGE")).await;
    let arn = described["LatestStreamArn"]
        .as_str()
        .expect("ARN")
        .to_owned();
    server
        .call(
            "UpdateTimeToLive",
            json!({"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "exp", "Enabled": true}}),
        )
        .await
        .ok();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    server
        .call(
            "PutItem",
            json!({"TableName": "sessions", "Item": {"pk": {"S": "s"}, "exp": {"N": (now - 60).to_string()}}}),
        )
        .await
        .ok();
    assert_eq!(server.engine.sweep_expired().await.expect("swept"), 1);
    let start = iterator(&server, &arn, "TRIM_HORIZON", None).await;
    let (records, _) = records(&server, &start, None).await;
    assert_eq!(names(&records), ["INSERT", "REMOVE"]);
    assert!(records[0].get("userIdentity").is_none());
    assert_eq!(
        records[1]["userIdentity"],
        json!({"type": "Service", "principalId": "dynamodb.amazonaws.com"})
    );
    assert_eq!(records[1]["dynamodb"]["OldImage"]["pk"], json!({"S": "s"}));
}

#[tokio::test]
async fn update_table_enables_a_new_empty_stream_and_disables_it() {
    let server = Server::start().await;
    let created = create_table(&server, "later", None).await;
    assert_eq!(created.get("LatestStreamArn"), None);
    put(&server, "later", "before", 1).await;
    let update = |stream: Value| {
        server.call(
            "UpdateTable",
            json!({"TableName": "later", "StreamSpecification": stream}),
        )
    };
    update(json!({"StreamEnabled": false})).await.error(
        400,
        "ValidationException",
        "Table has no stream to disable: TableName: later",
    );
    let enabled = update(json!({"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}))
        .await
        .ok()["TableDescription"]
        .clone();
    assert_eq!(
        enabled["StreamSpecification"],
        json!({"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"})
    );
    let first = enabled["LatestStreamArn"]
        .as_str()
        .expect("a stream")
        .to_owned();
    update(json!({"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}))
        .await
        .error(
            400,
            "ValidationException",
            "Table already has an enabled stream: TableName: later",
        );
    put(&server, "later", "during", 2).await;
    let (seen, _) = records(
        &server,
        &iterator(&server, &first, "TRIM_HORIZON", None).await,
        None,
    )
    .await;
    assert_eq!(seen.len(), 1, "only what the stream saw: {seen:?}");
    assert_eq!(seen[0]["dynamodb"]["Keys"], json!({"pk": {"S": "during"}}));
    assert_eq!(seen[0]["dynamodb"].get("NewImage"), None, "KEYS_ONLY");

    let disabled = update(json!({"StreamEnabled": false})).await.ok()["TableDescription"].clone();
    assert_eq!(disabled.get("StreamSpecification"), None);
    assert_eq!(
        disabled["LatestStreamArn"], first,
        "still the latest stream"
    );
    put(&server, "later", "off", 3).await;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let again = update(json!({"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}))
        .await
        .ok()["TableDescription"]
        .clone();
    let second = again["LatestStreamArn"]
        .as_str()
        .expect("a stream")
        .to_owned();
    assert_ne!(second, first, "a new stream, with a new label");
    put(&server, "later", "after", 4).await;
    let (seen, _) = records(
        &server,
        &iterator(&server, &second, "TRIM_HORIZON", None).await,
        None,
    )
    .await;
    assert_eq!(seen.len(), 1, "the new stream starts empty: {seen:?}");
    assert_eq!(seen[0]["dynamodb"]["NewImage"]["pk"], json!({"S": "after"}));
    let listed = server
        .call_streams("ListStreams", json!({"TableName": "later"}))
        .await
        .ok();
    assert_eq!(listed["Streams"][0]["StreamArn"], second);
}

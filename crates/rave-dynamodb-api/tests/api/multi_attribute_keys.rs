//! Global secondary indexes whose key has several attributes (up to four
//! HASH and four RANGE): CreateTable and DescribeTable, every Query form and
//! refusal of the case DynamoDB was observed answering, paging, Scan,
//! UpdateTable building such an index from the items, and CreateTable's
//! refusals.

use serde_json::{Map, Value, json};

use crate::support::{Answer, Server};

const TABLE: &str = "orders";

pub(crate) fn element(name: &str, role: &str) -> Value {
    json!({"AttributeName": name, "KeyType": role})
}

pub(crate) fn definitions(names: &[&str]) -> Value {
    names
        .iter()
        .map(|name| json!({"AttributeName": name, "AttributeType": "S"}))
        .collect()
}

/// `byOwner`: `h` HASH then `a`, `b`, `c`, `d` RANGE; `byOwnerAndFlag`: `h`
/// and `a` HASH, `d` RANGE.
pub(crate) fn by_owner() -> Value {
    json!({
        "IndexName": "byOwner",
        "KeySchema": [element("h", "HASH"), element("a", "RANGE"), element("b", "RANGE"), element("c", "RANGE"), element("d", "RANGE")],
        "Projection": {"ProjectionType": "ALL"},
    })
}

pub(crate) fn by_owner_and_flag() -> Value {
    json!({
        "IndexName": "byOwnerAndFlag",
        "KeySchema": [element("h", "HASH"), element("a", "HASH"), element("d", "RANGE")],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    })
}

/// The items: (pk, a, b, c, d), all with `h = o1`; p6 has no `c` and so no
/// entry in `byOwner`.
const ITEMS: [(&str, &str, &str, Option<&str>, &str); 6] = [
    ("p1", "T", "live", Some("b"), "r1"),
    ("p2", "T", "live", Some("a"), "r2"),
    ("p3", "T", "live", Some("a"), "r1"),
    ("p4", "T", "draft", Some("c"), "r1"),
    ("p5", "F", "live", Some("a"), "r0"),
    ("p6", "T", "live", None, "r1"),
];

/// The items, each as DynamoDB JSON.
pub(crate) fn items() -> impl Iterator<Item = Value> {
    ITEMS.into_iter().map(|(pk, a, b, c, d)| {
        let mut item =
            json!({"pk": {"S": pk}, "h": {"S": "o1"}, "a": {"S": a}, "b": {"S": b}, "d": {"S": d}});
        if let Some(c) = c {
            item["c"] = json!({"S": c});
        }
        item
    })
}

async fn put_items(server: &Server) {
    for item in items() {
        server
            .call("PutItem", json!({"TableName": TABLE, "Item": item}))
            .await
            .ok();
    }
}

async fn query(server: &Server, index: &str, expression: &str, extra: Value) -> Answer {
    server
        .call("Query", query_request(TABLE, index, expression, extra))
        .await
}

/// A Query of `index` of `table` with the values its expression names (`:h`
/// o1, `:a` T, `:b` live, `:c` a, `:d` r, `:lo` and `:hi` r1), and `extra`
/// members.
pub(crate) fn query_request(table: &str, index: &str, expression: &str, extra: Value) -> Value {
    let known = [
        (":h", "o1"),
        (":a", "T"),
        (":b", "live"),
        (":c", "a"),
        (":d", "r"),
        (":lo", "r1"),
        (":hi", "r1"),
    ];
    let values: Map<String, Value> = known
        .iter()
        .filter(|(name, _)| {
            expression
                .split(|c: char| !(c.is_alphanumeric() || c == ':'))
                .any(|token| token == *name)
        })
        .map(|(name, value)| (name.to_string(), json!({"S": value})))
        .collect();
    let mut request = json!({
        "TableName": table,
        "IndexName": index,
        "KeyConditionExpression": expression,
        "ExpressionAttributeValues": values,
    });
    if let (Some(request), Value::Object(extra)) = (request.as_object_mut(), extra) {
        request.extend(extra);
    }
    request
}

fn keys(page: &Value) -> Vec<&str> {
    page["Items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["pk"]["S"].as_str())
        .collect()
}

async fn orders_with_indexes(server: &Server) {
    server
        .call(
            "CreateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(&["pk", "h", "a", "b", "c", "d"]),
                "KeySchema": [element("pk", "HASH")],
                "BillingMode": "PAY_PER_REQUEST",
                "GlobalSecondaryIndexes": [by_owner(), by_owner_and_flag()],
            }),
        )
        .await
        .ok();
    put_items(server).await;
}

#[tokio::test]
async fn queries_select_equal_prefixes_and_one_range_sorted_attribute_by_attribute() {
    let server = Server::start().await;
    orders_with_indexes(&server).await;
    let none = json!({});
    for (expression, expected) in [
        ("h = :h", vec!["p5", "p4", "p3", "p2", "p1"]),
        ("h = :h AND a = :a", vec!["p4", "p3", "p2", "p1"]),
        ("h = :h AND a = :a AND b = :b", vec!["p3", "p2", "p1"]),
        ("b = :b AND h = :h AND a = :a", vec!["p3", "p2", "p1"]),
        ("h = :h AND a = :a AND b = :b AND c = :c", vec!["p3", "p2"]),
        ("h = :h AND a = :a AND b = :b AND c > :c", vec!["p1"]),
        (
            "h = :h AND a = :a AND b = :b AND c = :c AND begins_with(d, :d)",
            vec!["p3", "p2"],
        ),
        (
            "h = :h AND a = :a AND b = :b AND c = :c AND d BETWEEN :lo AND :hi",
            vec!["p3"],
        ),
        ("h = :h AND a = :a AND b < :b", vec!["p4"]),
    ] {
        let page = query(&server, "byOwner", expression, none.clone())
            .await
            .ok();
        assert_eq!(keys(&page), expected, "{expression}");
        let backwards = query(
            &server,
            "byOwner",
            expression,
            json!({"ScanIndexForward": false}),
        )
        .await
        .ok();
        let mut reversed = expected.clone();
        reversed.reverse();
        assert_eq!(keys(&backwards), reversed, "{expression}, backwards");
    }
    // Every partition attribute takes an equality; the sort attribute
    // orders within the partition.
    let page = query(&server, "byOwnerAndFlag", "a = :a AND h = :h", none.clone())
        .await
        .ok();
    let mut found = keys(&page);
    let sort_values: Vec<&str> = page["Items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["d"]["S"].as_str())
        .collect();
    assert!(sort_values.is_sorted(), "{sort_values:?}");
    found.sort_unstable();
    assert_eq!(found, ["p1", "p2", "p3", "p4", "p6"]);
    assert_eq!(
        page["Items"][0].as_object().map(|item| item.len()),
        Some(4),
        "KEYS_ONLY holds the table's and the index's keys: {page}"
    );

    // The legacy KeyConditions name the same conditions.
    let eq =
        |value: &str| json!({"ComparisonOperator": "EQ", "AttributeValueList": [{"S": value}]});
    let legacy = server
        .call(
            "Query",
            json!({
                "TableName": TABLE,
                "IndexName": "byOwner",
                "KeyConditions": {
                    "b": eq("live"),
                    "h": eq("o1"),
                    "a": eq("T"),
                    "c": {"ComparisonOperator": "GT", "AttributeValueList": [{"S": "a"}]},
                },
            }),
        )
        .await
        .ok();
    assert_eq!(keys(&legacy), ["p1"]);

    // A Scan of the index holds only the items with every key attribute.
    let scanned = server
        .call("Scan", json!({"TableName": TABLE, "IndexName": "byOwner"}))
        .await
        .ok();
    assert_eq!(scanned["Count"], 5);
}

#[tokio::test]
async fn pages_carry_every_key_attribute_and_resume_where_they_stopped() {
    let server = Server::start().await;
    orders_with_indexes(&server).await;
    let first = query(&server, "byOwner", "h = :h AND a = :a", json!({"Limit": 2}))
        .await
        .ok();
    assert_eq!(keys(&first), ["p4", "p3"]);
    let last_key = first["LastEvaluatedKey"].clone();
    let mut names: Vec<&str> = last_key
        .as_object()
        .map(|key| key.keys().map(String::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c", "d", "h", "pk"]);
    for forward in [true, false] {
        let mut seen = Vec::new();
        let mut start = Value::Null;
        loop {
            let mut extra = json!({"Limit": 1, "ScanIndexForward": forward});
            if !start.is_null() {
                extra["ExclusiveStartKey"] = start.clone();
            }
            let page = query(&server, "byOwner", "h = :h AND a = :a", extra)
                .await
                .ok();
            seen.extend(keys(&page).into_iter().map(str::to_owned));
            match page.get("LastEvaluatedKey") {
                Some(next) => start = next.clone(),
                None => break,
            }
        }
        let mut expected = vec!["p4", "p3", "p2", "p1"];
        if !forward {
            expected.reverse();
        }
        assert_eq!(seen, expected, "forward {forward}");
    }
    // A start key outside what the condition selects is refused.
    query(
        &server,
        "byOwner",
        "h = :h AND a = :a AND b = :b",
        json!({"ExclusiveStartKey": first["Items"][0].clone()}),
    )
    .await
    .error(
        400,
        "ValidationException",
        "The provided starting key does not match the range key predicate",
    );
}

#[tokio::test]
async fn key_conditions_that_are_not_one_range_are_refused() {
    let server = Server::start().await;
    orders_with_indexes(&server).await;
    let gap = |missing: &str, present: &str| {
        format!(
            "RANGE key attributes {missing} must have equality conditions specified in the query because a condition is present on key attribute {present}"
        )
    };
    for (index, expression, message) in [
        ("byOwner", "h = :h AND a = :a AND c = :c", gap("b", "c")),
        (
            "byOwner",
            "h = :h AND a = :a AND b > :b AND c = :c",
            gap("b", "c"),
        ),
        ("byOwner", "h = :h AND b = :b", gap("a", "b")),
        ("byOwner", "h = :h AND c = :c", gap("a, b", "c")),
        (
            "byOwner",
            "h = :h AND a > :a AND b = :b AND c = :c",
            gap("a", "c"),
        ),
        (
            "byOwner",
            "a = :a AND b = :b",
            "HASH key attributes h must have equality conditions specified in the query".into(),
        ),
        (
            "byOwner",
            "h = :h AND pk = :a",
            "Query key condition not supported".into(),
        ),
        (
            "byOwnerAndFlag",
            "d = :d",
            "HASH key attributes h, a must have equality conditions specified in the query".into(),
        ),
        (
            "byOwnerAndFlag",
            "h = :h AND a > :a",
            "HASH key attributes a must have equality conditions specified in the query".into(),
        ),
    ] {
        query(&server, index, expression, json!({})).await.error(
            400,
            "ValidationException",
            &message,
        );
    }
}

#[tokio::test]
async fn describe_table_lists_every_key_attribute_in_order() {
    let server = Server::start().await;
    orders_with_indexes(&server).await;
    let table = server
        .call("DescribeTable", json!({"TableName": TABLE}))
        .await
        .ok()["Table"]
        .clone();
    let indexes = table["GlobalSecondaryIndexes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let by_name = |name: &str| {
        indexes
            .iter()
            .find(|index| index["IndexName"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(by_name("byOwner")["KeySchema"], by_owner()["KeySchema"]);
    assert_eq!(
        by_name("byOwnerAndFlag")["KeySchema"],
        by_owner_and_flag()["KeySchema"]
    );
    assert_eq!(by_name("byOwner")["ItemCount"], 5);
    assert_eq!(
        table["AttributeDefinitions"],
        definitions(&["pk", "h", "a", "b", "c", "d"])
    );
    // An item whose index key attribute has another type is refused.
    server
        .call(
            "PutItem",
            json!({"TableName": TABLE, "Item": {"pk": {"S": "p9"}, "h": {"S": "o1"}, "c": {"N": "1"}}}),
        )
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Type mismatch for Index Key c Expected: S Actual: N IndexName: byOwner",
        );
}

#[tokio::test]
async fn update_table_builds_an_index_of_several_attributes_from_the_items() {
    let server = Server::start().await;
    server
        .call(
            "CreateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(&["pk"]),
                "KeySchema": [element("pk", "HASH")],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .ok();
    put_items(&server).await;
    server
        .call(
            "UpdateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(&["h", "a", "b", "c", "d"]),
                "GlobalSecondaryIndexUpdates": [{"Create": by_owner()}],
            }),
        )
        .await
        .ok();
    // Longer than the backfill takes: the test fails rather than hangs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let page = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the index never became readable"
        );
        let answer = query(&server, "byOwner", "h = :h AND a = :a", json!({})).await;
        if answer.status == 200 {
            break answer.body;
        }
        answer.error(
            400,
            "ValidationException",
            "Cannot read from backfilling global secondary index: byOwner",
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(keys(&page), ["p4", "p3", "p2", "p1"]);
    let described = server
        .call("DescribeTable", json!({"TableName": TABLE}))
        .await
        .ok();
    assert_eq!(
        described["Table"]["GlobalSecondaryIndexes"][0]["KeySchema"],
        by_owner()["KeySchema"]
    );
}

#[tokio::test]
async fn create_table_refuses_keys_of_more_than_four_of_a_kind_and_misplaced_ones() {
    let server = Server::start().await;
    let names = ["pk", "k1", "k2", "k3", "k4", "k5"];
    let with_index = |key_schema: Value| {
        json!({
            "TableName": TABLE,
            "AttributeDefinitions": definitions(&names),
            "KeySchema": [element("pk", "HASH")],
            "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexes": [{"IndexName": "wide", "KeySchema": key_schema, "Projection": {"ProjectionType": "ALL"}}],
        })
    };
    let hashes: Vec<Value> = names[1..].iter().map(|n| element(n, "HASH")).collect();
    let ranges: Vec<Value> = names[1..].iter().map(|n| element(n, "RANGE")).collect();
    let mut five_ranges = vec![element("pk", "HASH")];
    five_ranges.extend(ranges.clone());
    let nine: Vec<Value> = hashes[..4].iter().chain(&ranges).cloned().collect();
    for (key_schema, message) in [
        (
            json!(hashes),
            "Too many partition keys. GSI can have at most 4 partition keys",
        ),
        (
            json!(five_ranges),
            "Too many sort keys. GSI can have at most 4 sort keys",
        ),
        (
            json!([
                element("k1", "HASH"),
                element("k2", "RANGE"),
                element("k1", "RANGE")
            ]),
            "Two keys can not have the same name",
        ),
        (
            json!([element("k1", "HASH"), element("k1", "HASH")]),
            "Two keys can not have the same name",
        ),
        (
            json!([
                element("k1", "HASH"),
                element("k2", "RANGE"),
                element("k3", "HASH")
            ]),
            "Invalid key order. Hash Key must be specified first in key schema, Range Key must be specifed second",
        ),
        (
            json!([element("k1", "RANGE"), element("k2", "HASH")]),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            json!(nine),
            "Key Schema too big.  Key Schema must at most consist of the hash and range key of a table",
        ),
    ] {
        server
            .call("CreateTable", with_index(key_schema))
            .await
            .error(400, "ValidationException", message);
    }
    // A table's own key stays one HASH and at most one RANGE attribute.
    server
        .call(
            "CreateTable",
            json!({
                "TableName": TABLE,
                "AttributeDefinitions": definitions(&["pk", "k1"]),
                "KeySchema": [element("pk", "HASH"), element("k1", "HASH")],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .error(
            400,
            "ValidationException",
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        );
    let tables = server.call("ListTables", json!({})).await.ok();
    assert_eq!(tables["TableNames"], json!([]));
}

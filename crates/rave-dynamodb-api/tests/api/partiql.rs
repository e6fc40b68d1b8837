//! PartiQL statements through rave's server, where DynamoDB Local cannot be
//! the reference: the capacity a statement consumes (DynamoDB Local reports
//! none) is the equivalent call's, at each level of detail, an index's
//! writes included; the batch and transaction limits; a transaction's
//! client request token.

use serde_json::{Value, json};

use crate::support::Server;

fn statement(text: &str) -> Value {
    json!({"Statement": text})
}

fn with(mut body: Value, extra: Value) -> Value {
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
        body.extend(extra);
    }
    body
}

#[tokio::test]
async fn statements_consume_what_the_equivalent_calls_consume() {
    let server = Server::start().await;
    server.create_comments_table("comments").await;
    let indexes = json!({"ReturnConsumedCapacity": "INDEXES"});
    let item = |pk: &str| json!({"pk": {"S": pk}, "sk": {"N": "1"}, "gsi": {"S": "g"}, "title": {"S": "t"}});
    let put = server
        .call(
            "PutItem",
            with(
                json!({"TableName": "comments", "Item": item("a")}),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    let insert = server
        .call(
            "ExecuteStatement",
            with(
                statement(
                    "INSERT INTO comments VALUE {'pk': 'b', 'sk': 1, 'gsi': 'g', 'title': 't'}",
                ),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    assert_eq!(insert["ConsumedCapacity"], put["ConsumedCapacity"]);
    assert_eq!(
        insert["ConsumedCapacity"]["GlobalSecondaryIndexes"]["byGsi"]["CapacityUnits"],
        1.0
    );

    let update_item = server
        .call(
            "UpdateItem",
            with(
                json!({"TableName": "comments", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "UpdateExpression": "SET title = :t", "ExpressionAttributeValues": {":t": {"S": "u"}}}),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    let update = server
        .call(
            "ExecuteStatement",
            with(
                statement("UPDATE comments SET title = 'u' WHERE pk = 'b' AND sk = 1"),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    assert_eq!(update["ConsumedCapacity"], update_item["ConsumedCapacity"]);

    let query = server
        .call(
            "Query",
            with(
                json!({"TableName": "comments", "IndexName": "byGsi", "KeyConditionExpression": "gsi = :g", "ExpressionAttributeValues": {":g": {"S": "g"}}}),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    let select = server
        .call(
            "ExecuteStatement",
            with(
                statement(r#"SELECT * FROM "comments"."byGsi" WHERE gsi = 'g'"#),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    assert_eq!(select["ConsumedCapacity"], query["ConsumedCapacity"]);
    assert_eq!(select["Items"], query["Items"]);

    let delete_item = server
        .call(
            "DeleteItem",
            with(
                json!({"TableName": "comments", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    let delete = server
        .call(
            "ExecuteStatement",
            with(
                statement("DELETE FROM comments WHERE pk = 'b' AND sk = 1"),
                indexes.clone(),
            ),
        )
        .await
        .ok();
    assert_eq!(delete["ConsumedCapacity"], delete_item["ConsumedCapacity"]);
    server.assert_table_empty("comments").await;

    // A batch sums its statements' units per table; a transaction's are
    // TransactWriteItems'.
    let batch = server
        .call(
            "BatchExecuteStatement",
            json!({"Statements": [
                statement("INSERT INTO comments VALUE {'pk': 'c', 'sk': 1}"),
                statement("INSERT INTO comments VALUE {'pk': 'd', 'sk': 1}"),
            ], "ReturnConsumedCapacity": "TOTAL"}),
        )
        .await
        .ok();
    assert_eq!(
        batch["ConsumedCapacity"],
        json!([{"TableName": "comments", "CapacityUnits": 2.0}])
    );
    let transaction = server
        .call(
            "ExecuteTransaction",
            json!({"TransactStatements": [
                statement("DELETE FROM comments WHERE pk = 'c' AND sk = 1"),
                statement("DELETE FROM comments WHERE pk = 'd' AND sk = 1"),
            ], "ReturnConsumedCapacity": "TOTAL"}),
        )
        .await
        .ok();
    assert_eq!(
        transaction["ConsumedCapacity"],
        json!([{"TableName": "comments", "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}])
    );
}

#[tokio::test]
async fn batches_and_transactions_hold_to_their_limits() {
    let server = Server::start().await;
    server.create_comments_table("comments").await;
    let inserts = |count: usize| -> Vec<Value> {
        (0..count)
            .map(|n| {
                statement(&format!(
                    "INSERT INTO comments VALUE {{'pk': 'p', 'sk': {n}}}"
                ))
            })
            .collect()
    };
    let too_many = inserts(26);
    server
        .call("BatchExecuteStatement", json!({"Statements": too_many}))
        .await
        .error(
            400,
            "ValidationException",
            &format!("1 validation error detected: Value '{}' at 'statements' failed to satisfy constraint: Member must have length less than or equal to 25", Value::Array(too_many.clone())),
        );
    server
        .call("BatchExecuteStatement", json!({"Statements": []}))
        .await
        .error(
            400,
            "ValidationException",
            "1 validation error detected: Value '[]' at 'statements' failed to satisfy constraint: Member must have length greater than or equal to 1",
        );
    let full = server
        .call("BatchExecuteStatement", json!({"Statements": inserts(25)}))
        .await
        .ok();
    assert_eq!(full["Responses"].as_array().map(Vec::len), Some(25));
    let too_many = inserts(101);
    server
        .call("ExecuteTransaction", json!({"TransactStatements": too_many}))
        .await
        .error(
            400,
            "ValidationException",
            &format!("1 validation error detected: Value '{}' at 'transactStatements' failed to satisfy constraint: Member must have length less than or equal to 100", Value::Array(too_many.clone())),
        );
    server
        .call("ExecuteStatement", json!({}))
        .await
        .error(
            400,
            "ValidationException",
            "1 validation error detected: Value null at 'statement' failed to satisfy constraint: Member must not be null",
        );

    // A token replays its transaction: the second call changes nothing.
    let once = json!({
        "TransactStatements": [statement("UPDATE comments SET n = 1 WHERE pk = 'p' AND sk = 0")],
        "ClientRequestToken": "once",
    });
    server.call("ExecuteTransaction", once.clone()).await.ok();
    server
        .call(
            "ExecuteStatement",
            statement("UPDATE comments SET n = 5 WHERE pk = 'p' AND sk = 0"),
        )
        .await
        .ok();
    server.call("ExecuteTransaction", once).await.ok();
    let read = server
        .call(
            "ExecuteStatement",
            statement("SELECT n FROM comments WHERE pk = 'p' AND sk = 0"),
        )
        .await
        .ok();
    assert_eq!(read["Items"], json!([{"n": {"N": "5"}}]));
    // The batch's 25 items and 75 that are not there: 100 statements fit.
    let hundred: Vec<Value> = (0..100)
        .map(|n| statement(&format!("DELETE FROM comments WHERE pk = 'p' AND sk = {n}")))
        .collect();
    server
        .call("ExecuteTransaction", json!({"TransactStatements": hundred}))
        .await
        .ok();
    server.assert_table_empty("comments").await;
}

#[tokio::test]
async fn index_reads_are_held_to_what_the_index_projects() {
    let server = Server::start().await;
    server.create_comments_table("comments").await;
    server
        .call(
            "PutItem",
            json!({"TableName": "comments", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}, "gsi": {"S": "g"}, "title": {"S": "t"}, "body": {"S": "b"}}}),
        )
        .await
        .ok();
    let star = server
        .call(
            "ExecuteStatement",
            statement(r#"SELECT * FROM "comments"."byGsi" WHERE gsi = 'g'"#),
        )
        .await
        .ok();
    assert_eq!(
        star["Items"],
        json!([{"pk": {"S": "p"}, "sk": {"N": "1"}, "gsi": {"S": "g"}, "title": {"S": "t"}}]),
        "SELECT * of an index is what it projects"
    );
    server
        .call(
            "ExecuteStatement",
            statement(r#"SELECT body, pk FROM "comments"."byGsi" WHERE gsi = 'g'"#),
        )
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Global secondary index byGsi does not project [body]",
        );
    server
        .call(
            "ExecuteStatement",
            statement(r#"SELECT pk FROM "comments"."byGsi" WHERE gsi = 'g' AND body = 'b'"#),
        )
        .await
        .error(
            400,
            "ValidationException",
            "One or more parameter values were invalid: Secondary index byGsi does not project one or more filter attributes: [body]",
        );
}

#[tokio::test]
async fn an_index_of_several_key_attributes_is_not_read_by_statements() {
    let server = Server::start().await;
    let attribute = |name: &str| json!({"AttributeName": name, "AttributeType": "S"});
    server
        .call(
            "CreateTable",
            json!({
                "TableName": "multi",
                "AttributeDefinitions": [attribute("id"), attribute("h1"), attribute("h2"), attribute("r1")],
                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                "GlobalSecondaryIndexes": [{
                    "IndexName": "gsi",
                    "KeySchema": [
                        {"AttributeName": "h1", "KeyType": "HASH"},
                        {"AttributeName": "h2", "KeyType": "HASH"},
                        {"AttributeName": "r1", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await
        .ok();
    let refused = "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys.";
    server
        .call(
            "ExecuteStatement",
            statement(r#"SELECT * FROM "multi"."gsi" WHERE h1 = 'a'"#),
        )
        .await
        .error(400, "ValidationException", refused);
    let batch = server
        .call(
            "BatchExecuteStatement",
            json!({"Statements": [
                statement(r#"SELECT * FROM "multi"."gsi" WHERE h1 = 'a' AND h2 = 'x' AND r1 = 'm'"#),
                statement(r#"SELECT * FROM "multi" WHERE h1 = 'a'"#),
            ]}),
        )
        .await
        .ok();
    assert_eq!(
        batch["Responses"],
        json!([
            {"Error": {"Code": "ValidationError", "Message": refused}},
            {"Error": {"Code": "ValidationError", "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where clause."}},
        ])
    );
}

#[tokio::test]
async fn a_batch_answers_what_its_statements_return() {
    let server = Server::start().await;
    server.create_hash_keyed_table("songs").await;
    for pk in ["gone", "kept"] {
        server
            .call(
                "PutItem",
                json!({"TableName": "songs", "Item": {"pk": {"S": pk}, "data": {"S": "old"}}}),
            )
            .await
            .ok();
    }
    let batch = server
        .call(
            "BatchExecuteStatement",
            json!({"Statements": [
                statement("DELETE FROM songs WHERE pk = 'gone' RETURNING ALL OLD *"),
                statement("UPDATE songs REMOVE data WHERE pk = 'kept' RETURNING MODIFIED NEW *"),
                statement("DELETE FROM songs WHERE pk = 'x' RETURNING MODIFIED OLD *"),
                {"Statement": "UPDATE songs SET data = 'new' WHERE pk = 'nothing' AND data = 'old'", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
            ]}),
        )
        .await
        .ok();
    assert_eq!(
        batch["Responses"],
        json!([
            {"TableName": "songs", "Item": {"pk": {"S": "gone"}, "data": {"S": "old"}}},
            {"TableName": "songs"},
            {"Error": {"Code": "ValidationError", "Message": "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is allowed in DELETE statements."}},
            {"TableName": "songs", "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}},
        ])
    );
}

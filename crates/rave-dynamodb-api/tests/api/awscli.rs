//! The AWS CLI against rave's DynamoDB API, end to end.
//!
//! Runs when `RAVE_AWSCLI` names the `aws` executable, for instance one
//! installed with `pip install awscli==1.45.11` into a virtualenv under
//! `.tools/`; without it the test only says so. When it is set, any failing
//! command fails the test.

use std::ffi::OsString;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::Server;

/// Runs `aws dynamodb <args> --endpoint-url <server>` with throwaway
/// credentials, isolated from the user's configuration.
fn aws(cli: &OsString, url: &str, args: &[&str]) -> Result<Value, String> {
    aws_as(cli, url, ("rave", "rave"), args)
}

/// `aws`, signing with the access key `key_id` and its `secret`.
pub fn aws_as(
    cli: &OsString,
    url: &str,
    (key_id, secret): (&str, &str),
    args: &[&str],
) -> Result<Value, String> {
    let output = Command::new(cli)
        .arg("dynamodb")
        .args(args)
        .args(["--endpoint-url", url, "--output", "json"])
        .env("AWS_ACCESS_KEY_ID", key_id)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_PAGER", "")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cli.to_string_lossy()))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    if output.stdout.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("{args:?} printed no JSON: {e}"))
}

fn ok(cli: &OsString, url: &str, args: &[&str]) -> Value {
    aws(cli, url, args).unwrap_or_else(|stderr| panic!("aws dynamodb {args:?} failed: {stderr}"))
}

/// The CLI `RAVE_AWSCLI` names, if set.
pub fn cli() -> Option<OsString> {
    let cli = std::env::var_os("RAVE_AWSCLI");
    if cli.is_none() {
        // scripts/test.sh installs the CLI and sets RAVE_AWSCLI; in CI its
        // absence is a failure, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "RAVE_AWSCLI is not set: run the tests through scripts/test.sh"
        );
        eprintln!("RAVE_AWSCLI is not set: the AWS CLI test does not run");
    }
    cli
}

/// Runs `session` with the CLI against a fresh server.
async fn with_cli(session: fn(&OsString, &str)) {
    let Some(cli) = cli() else {
        return;
    };
    let server = Server::start().await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || session(&cli, &url))
        .await
        .expect("the AWS CLI session completes");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_aws_cli_creates_writes_reads_and_deletes() {
    with_cli(drive).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_aws_cli_adds_an_index_changes_billing_and_enables_a_stream() {
    with_cli(update_table).await;
}

fn update_table(cli: &OsString, url: &str) {
    ok(
        cli,
        url,
        &[
            "create-table",
            "--table-name",
            "orders",
            "--attribute-definitions",
            "AttributeName=id,AttributeType=S",
            "--key-schema",
            "AttributeName=id,KeyType=HASH",
            "--billing-mode",
            "PAY_PER_REQUEST",
        ],
    );
    // 25 orders, a full BatchWriteItem; every tenth one active.
    let orders = json!({"orders": (0..25)
        .map(|i| {
            let mut item = json!({"id": {"S": format!("o{i:02}")}});
            if i % 10 == 0 {
                item["status"] = json!({"S": "ACTIVE"});
            }
            json!({"PutRequest": {"Item": item}})
        })
        .collect::<Vec<Value>>()});
    ok(
        cli,
        url,
        &["batch-write-item", "--request-items", &orders.to_string()],
    );
    let created = ok(
        cli,
        url,
        &[
            "update-table",
            "--table-name",
            "orders",
            "--attribute-definitions",
            "AttributeName=status,AttributeType=S",
            "--global-secondary-index-updates",
            r#"[{"Create":{"IndexName":"byStatus","KeySchema":[{"AttributeName":"status","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]"#,
        ],
    );
    assert_eq!(
        created["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"],
        "CREATING"
    );
    let mut polls = 0;
    while ok(cli, url, &["describe-table", "--table-name", "orders"])["Table"]["GlobalSecondaryIndexes"]
        [0]["IndexStatus"]
        != "ACTIVE"
    {
        polls += 1;
        assert!(polls < 100, "the index becomes active");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let active = ok(
        cli,
        url,
        &[
            "query",
            "--table-name",
            "orders",
            "--index-name",
            "byStatus",
            "--key-condition-expression",
            "#s = :s",
            "--expression-attribute-names",
            r##"{"#s":"status"}"##,
            "--expression-attribute-values",
            r#"{":s":{"S":"ACTIVE"}}"#,
        ],
    );
    assert_eq!(active["Count"], 3, "o00, o10 and o20");

    let provisioned = ok(
        cli,
        url,
        &[
            "update-table",
            "--table-name",
            "orders",
            "--billing-mode",
            "PROVISIONED",
            "--provisioned-throughput",
            "ReadCapacityUnits=4,WriteCapacityUnits=2",
            "--global-secondary-index-updates",
            r#"[{"Update":{"IndexName":"byStatus","ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}}}]"#,
        ],
    );
    assert_eq!(
        provisioned["TableDescription"]["BillingModeSummary"]["BillingMode"],
        "PROVISIONED"
    );
    let streamed = ok(
        cli,
        url,
        &[
            "update-table",
            "--table-name",
            "orders",
            "--stream-specification",
            "StreamEnabled=true,StreamViewType=NEW_IMAGE",
        ],
    );
    assert_eq!(
        streamed["TableDescription"]["StreamSpecification"]["StreamViewType"],
        "NEW_IMAGE"
    );
    let refused = aws(
        cli,
        url,
        &[
            "update-table",
            "--table-name",
            "orders",
            "--global-secondary-index-updates",
            r#"[{"Delete":{"IndexName":"byNothing"}}]"#,
        ],
    )
    .expect_err("an unknown index cannot be deleted");
    assert!(
        refused.contains("ResourceNotFoundException")
            && refused.contains("Index: byNothing not found on table orders"),
        "{refused}"
    );
    let deleted = ok(
        cli,
        url,
        &[
            "update-table",
            "--table-name",
            "orders",
            "--global-secondary-index-updates",
            r#"[{"Delete":{"IndexName":"byStatus"}}]"#,
        ],
    );
    // Answered DELETING, as DynamoDB answers; gone once deleted.
    let deleting = &deleted["TableDescription"]["GlobalSecondaryIndexes"];
    assert_eq!(deleting[0]["IndexName"], "byStatus");
    assert_eq!(deleting[0]["IndexStatus"], "DELETING");
    let described = ok(cli, url, &["describe-table", "--table-name", "orders"]);
    assert_eq!(described["Table"].get("GlobalSecondaryIndexes"), None);
}

fn drive(cli: &OsString, url: &str) {
    assert_eq!(ok(cli, url, &["list-tables"]), json!({"TableNames": []}));
    for table in ["music", "books"] {
        let created = ok(
            cli,
            url,
            &[
                "create-table",
                "--table-name",
                table,
                "--attribute-definitions",
                "AttributeName=Artist,AttributeType=S",
                "AttributeName=Song,AttributeType=S",
                "AttributeName=Genre,AttributeType=S",
                "--key-schema",
                "AttributeName=Artist,KeyType=HASH",
                "AttributeName=Song,KeyType=RANGE",
                "--global-secondary-indexes",
                r#"[{"IndexName":"byGenre","KeySchema":[{"AttributeName":"Genre","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]"#,
                "--billing-mode",
                "PAY_PER_REQUEST",
            ],
        );
        assert_eq!(created["TableDescription"]["TableStatus"], "ACTIVE");
        assert_eq!(
            created["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"],
            "ACTIVE"
        );
    }
    ok(cli, url, &["wait", "table-exists", "--table-name", "music"]);
    // One table a page: the CLI follows LastEvaluatedTableName.
    assert_eq!(
        ok(cli, url, &["list-tables", "--page-size", "1"]),
        json!({"TableNames": ["books", "music"]})
    );

    let song = |artist: &str, title: &str, genre: &str| json!({"Artist": {"S": artist}, "Song": {"S": title}, "Genre": {"S": genre}, "Year": {"N": "1999"}});
    let writes = json!({"music": [
        {"PutRequest": {"Item": song("A", "one", "rock")}},
        {"PutRequest": {"Item": song("A", "two", "pop")}},
        {"PutRequest": {"Item": song("B", "three", "rock")}},
    ]});
    let written = ok(
        cli,
        url,
        &["batch-write-item", "--request-items", &writes.to_string()],
    );
    assert_eq!(written["UnprocessedItems"], json!({}));

    let replaced = ok(
        cli,
        url,
        &[
            "put-item",
            "--table-name",
            "music",
            "--item",
            &song("A", "one", "jazz").to_string(),
            "--return-values",
            "ALL_OLD",
            "--return-consumed-capacity",
            "TOTAL",
        ],
    );
    assert_eq!(replaced["Attributes"], song("A", "one", "rock"));
    // One unit on the table, two on the index whose key changed (rock → jazz).
    assert_eq!(replaced["ConsumedCapacity"]["CapacityUnits"], 3.0);

    let key = json!({"Artist": {"S": "A"}, "Song": {"S": "one"}}).to_string();
    let got = ok(
        cli,
        url,
        &[
            "get-item",
            "--table-name",
            "music",
            "--key",
            &key,
            "--consistent-read",
        ],
    );
    assert_eq!(got["Item"], song("A", "one", "jazz"));

    let mut scanned = 0;
    for segment in ["0", "1"] {
        let page = ok(
            cli,
            url,
            &[
                "scan",
                "--table-name",
                "music",
                "--segment",
                segment,
                "--total-segments",
                "2",
            ],
        );
        scanned += page["Count"].as_u64().expect("a count");
    }
    assert_eq!(scanned, 3);
    let by_genre = ok(
        cli,
        url,
        &[
            "scan",
            "--table-name",
            "music",
            "--index-name",
            "byGenre",
            "--select",
            "COUNT",
        ],
    );
    assert_eq!(by_genre["Count"], 3);

    let described = ok(cli, url, &["describe-table", "--table-name", "music"]);
    assert_eq!(described["Table"]["ItemCount"], 3);
    assert_eq!(
        described["Table"]["GlobalSecondaryIndexes"][0]["ItemCount"],
        3
    );

    ok(
        cli,
        url,
        &["delete-item", "--table-name", "music", "--key", &key],
    );
    assert_eq!(
        ok(
            cli,
            url,
            &["get-item", "--table-name", "music", "--key", &key]
        ),
        Value::Null,
        "an absent item prints nothing"
    );
    let queried = ok(
        cli,
        url,
        &[
            "query",
            "--table-name",
            "music",
            "--key-condition-expression",
            "Artist = :a AND begins_with(Song, :s)",
            "--expression-attribute-values",
            r#"{":a":{"S":"B"},":s":{"S":"th"}}"#,
            "--projection-expression",
            "Song",
        ],
    );
    assert_eq!(queried["Items"], json!([{"Song": {"S": "three"}}]));
    let updated = ok(
        cli,
        url,
        &[
            "update-item",
            "--table-name",
            "music",
            "--key",
            r#"{"Artist":{"S":"B"},"Song":{"S":"three"}}"#,
            "--update-expression",
            "SET #y = #y + :one",
            "--condition-expression",
            "attribute_exists(Artist)",
            "--expression-attribute-names",
            r##"{"#y":"Year"}"##,
            "--expression-attribute-values",
            r#"{":one":{"N":"1"}}"#,
            "--return-values",
            "UPDATED_NEW",
        ],
    );
    assert_eq!(updated["Attributes"], json!({"Year": {"N": "2000"}}));
    let refused = aws(
        cli,
        url,
        &[
            "put-item",
            "--table-name",
            "music",
            "--item",
            &song("B", "three", "rock").to_string(),
            "--condition-expression",
            "attribute_not_exists(Artist)",
        ],
    )
    .expect_err("the item exists");
    assert!(
        refused.contains("ConditionalCheckFailedException"),
        "{refused}"
    );
    let deleted = ok(cli, url, &["delete-table", "--table-name", "music"]);
    assert_eq!(deleted["TableDescription"]["TableStatus"], "DELETING");

    let missing =
        aws(cli, url, &["describe-table", "--table-name", "music"]).expect_err("the table is gone");
    assert!(
        missing.contains("ResourceNotFoundException") && missing.contains("Table: music not found"),
        "{missing}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_aws_cli_runs_partiql_statements_batches_and_transactions() {
    with_cli(partiql).await;
}

/// `execute-statement`, `batch-execute-statement` and
/// `execute-transaction`, as the AWS CLI sends and prints them.
fn partiql(cli: &OsString, url: &str) {
    ok(
        cli,
        url,
        &[
            "create-table",
            "--table-name",
            "music",
            "--attribute-definitions",
            "AttributeName=Artist,AttributeType=S",
            "AttributeName=SongTitle,AttributeType=S",
            "--key-schema",
            "AttributeName=Artist,KeyType=HASH",
            "AttributeName=SongTitle,KeyType=RANGE",
            "--billing-mode",
            "PAY_PER_REQUEST",
        ],
    );
    let inserted = ok(
        cli,
        url,
        &[
            "execute-statement",
            "--statement",
            "INSERT INTO music VALUE {'Artist': ?, 'SongTitle': ?, 'Awards': 8}",
            "--parameters",
            r#"[{"S": "Acme Band"}, {"S": "PartiQL Rocks"}]"#,
        ],
    );
    assert_eq!(inserted, json!({"Items": []}));
    let again = aws(
        cli,
        url,
        &[
            "execute-statement",
            "--statement",
            "INSERT INTO music VALUE {'Artist': 'Acme Band', 'SongTitle': 'PartiQL Rocks'}",
        ],
    )
    .expect_err("INSERT is not an upsert");
    assert!(
        again.contains("(DuplicateItemException)")
            && again.contains("Duplicate primary key exists in table"),
        "{again}"
    );
    let batch = ok(
        cli,
        url,
        &[
            "batch-execute-statement",
            "--statements",
            r#"[{"Statement": "INSERT INTO music VALUE {'Artist': 'Acme Band', 'SongTitle': 'Happy Day', 'Awards': 10}"},
                {"Statement": "UPDATE music SET Awards = Awards + 1 WHERE Artist = 'Acme Band' AND SongTitle = 'PartiQL Rocks'"}]"#,
        ],
    );
    assert_eq!(
        batch,
        json!({"Responses": [{"TableName": "music"}, {"TableName": "music"}]})
    );
    let transaction = ok(
        cli,
        url,
        &[
            "execute-transaction",
            "--transact-statements",
            r#"[{"Statement": "SELECT Awards FROM music WHERE Artist = 'Acme Band' AND SongTitle = 'PartiQL Rocks'"},
                {"Statement": "SELECT Awards FROM music WHERE Artist = 'Acme Band' AND SongTitle = 'Happy Day'"}]"#,
        ],
    );
    assert_eq!(
        transaction,
        json!({"Responses": [
            {"Item": {"Awards": {"N": "9"}}},
            {"Item": {"Awards": {"N": "10"}}},
        ]})
    );
    let cancelled = aws(
        cli,
        url,
        &[
            "execute-transaction",
            "--transact-statements",
            r#"[{"Statement": "DELETE FROM music WHERE Artist = 'Acme Band' AND SongTitle = 'Happy Day'"},
                {"Statement": "UPDATE music SET Awards = 0 WHERE Artist = 'Acme Band' AND SongTitle = 'PartiQL Rocks' AND Awards > 100"}]"#,
        ],
    )
    .expect_err("a failed condition cancels the transaction");
    assert!(
        cancelled.contains("(TransactionCanceledException)")
            && cancelled.contains("[None, ConditionalCheckFailed]"),
        "{cancelled}"
    );
    // The SELECT the CLI pages through itself: every item, newest title first.
    let selected = ok(
        cli,
        url,
        &[
            "execute-statement",
            "--statement",
            "SELECT SongTitle FROM music WHERE Artist = 'Acme Band' ORDER BY SongTitle DESC",
        ],
    );
    assert_eq!(
        selected["Items"],
        json!([
            {"SongTitle": {"S": "PartiQL Rocks"}},
            {"SongTitle": {"S": "Happy Day"}},
        ])
    );
}

//! Signature V4 verification: unsigned and badly signed requests over
//! HTTP, and the AWS CLI signing with the right key, a wrong secret and an
//! unknown key (boto3 does the same in `boto3`).

use serde_json::json;

use crate::awscli::{aws_as, cli};
use crate::support::Server;

/// The credentials file the verifying servers read.
pub const KEYS: &str = "# the test's only key\nrave-key:rave-secret\n";

#[tokio::test]
async fn unsigned_and_incompletely_signed_requests_are_refused() {
    let server = Server::start_verifying(KEYS).await;
    let unsigned = server
        .send_with("DynamoDB_20120810.ListTables", "{}".into(), &[])
        .await;
    assert_eq!(unsigned.status, 400);
    assert_eq!(
        unsigned.body,
        json!({
            "__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
            "message": "Request is missing Authentication Token",
        })
    );
    let incomplete = server
        .send_with(
            "DynamoDB_20120810.ListTables",
            "{}".into(),
            &[
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=rave-key/20260101/us-east-1/dynamodb/aws4_request",
                ),
                ("x-amz-date", "20260101T000000Z"),
            ],
        )
        .await;
    assert_eq!(incomplete.status, 400);
    assert_eq!(
        incomplete.body["__type"],
        "com.amazon.coral.service#IncompleteSignatureException"
    );
    // An operation rave does not serve is answered as such, signed or not.
    let unknown = server
        .send_with("DynamoDB_20120810.DescribeBackup", "{}".into(), &[])
        .await;
    assert_eq!(
        unknown.body["__type"],
        "com.amazon.coral.service#UnknownOperationException"
    );
}

#[tokio::test]
async fn without_keys_a_signature_is_still_required_but_not_checked() {
    let server = Server::start().await;
    let unsigned = server
        .send_with("DynamoDB_20120810.ListTables", "{}".into(), &[])
        .await;
    assert_eq!(unsigned.status, 400);
    assert_eq!(
        unsigned.body,
        json!({
            "__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
            "message": "Request is missing Authentication Token",
        })
    );
    let no_date = server
        .send_with(
            "DynamoDB_20120810.ListTables",
            "{}".into(),
            &[(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=any/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00",
            )],
        )
        .await;
    assert_eq!(no_date.status, 400);
    assert_eq!(
        no_date.body["__type"],
        "com.amazon.coral.service#IncompleteSignatureException"
    );
    // Any key and any signature do, when rave has no keys to check them against.
    let listed = server.call("ListTables", json!({})).await.ok();
    assert_eq!(listed, json!({"TableNames": []}));
    let unknown = server
        .send_with("DynamoDB_20120810.DescribeBackup", "{}".into(), &[])
        .await;
    assert_eq!(
        unknown.body["__type"],
        "com.amazon.coral.service#UnknownOperationException"
    );
}

#[tokio::test]
async fn a_signed_request_from_another_time_is_refused() {
    let server = Server::start_verifying(KEYS).await;
    let stale = server
        .send_with(
            "DynamoDB_20120810.ListTables",
            "{}".into(),
            &[
                ("authorization", "AWS4-HMAC-SHA256 Credential=rave-key/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"),
                ("x-amz-date", "20200101T000000Z"),
            ],
        )
        .await;
    assert_eq!(stale.status, 400);
    assert_eq!(
        stale.body["__type"],
        "com.amazon.coral.service#InvalidSignatureException"
    );
    let message = stale.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Signature expired: 20200101T000000Z is now earlier than "),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_aws_cli_is_served_with_the_right_keys_only() {
    let Some(cli) = cli() else {
        return;
    };
    let server = Server::start_verifying(KEYS).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        let listed = aws_as(&cli, &url, ("rave-key", "rave-secret"), &["list-tables"])
            .unwrap_or_else(|stderr| panic!("the right keys are refused: {stderr}"));
        assert_eq!(listed, json!({"TableNames": []}));
        let wrong = aws_as(&cli, &url, ("rave-key", "wrong"), &["list-tables"])
            .expect_err("a wrong secret is refused");
        assert!(wrong.contains("InvalidSignatureException"), "{wrong}");
        let unknown = aws_as(&cli, &url, ("nobody", "rave-secret"), &["list-tables"])
            .expect_err("an unknown key is refused");
        assert!(unknown.contains("UnrecognizedClientException"), "{unknown}");
    })
    .await
    .expect("the AWS CLI session completes");
}

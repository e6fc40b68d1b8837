//! What an anonymous client can do to the server, through real HTTP: it
//! cannot grow the metrics, cannot pass for another client with forwarding
//! headers, and cannot grow the rate limiter past its bound. Behind a trusted
//! proxy, each client the proxy names is limited on its own.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rave_access::{Access, AccessConfig};
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_engine::Engine;
use rave_server::{AppState, ServerConfig, TrustedProxies, TrustedProxy};
use rave_store::SharedStore;
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};

struct TestServer {
    base: String,
    client: Client,
    _dir: tempfile::TempDir,
}

/// A server limiting public writes to `per_minute` (bursts of a tenth),
/// believing forwarding headers from `trusted`.
async fn start(per_minute: u32, trusted: &[&str]) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let comments = Arc::new(Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([5; 32]),
            moderation: Moderation::Off,
        },
    ));
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(engine.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        admin_token: None,
        rate_limit_per_minute: per_minute,
    };
    let proxies: TrustedProxies = trusted
        .iter()
        .map(|block| block.parse::<TrustedProxy>().unwrap())
        .collect();
    let state = AppState::new(comments, access, &config).with_trusted_proxies(proxies);
    tokio::spawn(rave_server::serve(
        listener,
        state,
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));
    TestServer {
        base,
        client: Client::new(),
        _dir: dir,
    }
}

fn comment() -> Value {
    json!({"author": "bob", "language": "en", "rating": 4, "title": "Fine", "body": "Does the job."})
}

impl TestServer {
    /// Posts a comment with `headers`, answering the status.
    async fn post(&self, headers: &[(&str, &str)]) -> StatusCode {
        let mut request = self
            .client
            .post(format!("{}/v1/products/p/comments", self.base))
            .json(&comment());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap().status()
    }

    /// How many posts with `headers` pass before the first 429 (at most 20).
    async fn burst(&self, headers: &[(&str, &str)]) -> usize {
        for passed in 0..20 {
            let status = self.post(headers).await;
            if status == StatusCode::TOO_MANY_REQUESTS {
                return passed;
            }
            assert_eq!(status, StatusCode::CREATED);
        }
        20
    }

    async fn metrics(&self) -> String {
        let response = self
            .client
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.text().await.unwrap()
    }

    /// The number of series (sample lines) /metrics exposes.
    async fn series(&self) -> usize {
        self.metrics()
            .await
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .count()
    }

    async fn status(&self, method: &str, path: &str) -> StatusCode {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        self.client
            .request(method, format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .status()
    }
}

#[tokio::test]
async fn made_up_methods_and_paths_add_no_metric_series() {
    let s = start(0, &[]).await;
    let initial = s.series().await;
    // The first request of each kind may add its series.
    assert_eq!(
        s.status("BREW", "/healthz").await,
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(
        s.status("BREW", "/no/such/path").await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.status("GET", "/made-up/path").await,
        StatusCode::NOT_FOUND
    );
    let before = s.series().await;
    for n in 0..1_000 {
        let method = format!("MADE-UP-{n}");
        let path = if n % 2 == 0 { "/healthz" } else { "/elsewhere" };
        assert!(s.status(&method, path).await.is_client_error());
    }
    for n in 0..1_000 {
        let path = format!("/made-up/{n}/{}", "x".repeat(n % 7));
        assert_eq!(s.status("GET", &path).await, StatusCode::NOT_FOUND);
    }
    let after = s.series().await;
    eprintln!(
        "metric series: {initial} at start, {before} after one request of each kind, {after} after 2,000 more"
    );
    assert_eq!(after, before, "made-up methods or paths added series");
    let text = s.metrics().await;
    assert!(
        text.contains(
            r#"rave_http_requests_total{method="OTHER",route="/healthz",status="405"} 501"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"rave_http_requests_total{method="GET",route="unmatched",status="404"} 1001"#
        ),
        "{text}"
    );
    assert!(
        !text.contains("MADE-UP") && !text.contains("made-up"),
        "{text}"
    );
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_bucket() {
    let s = start(20, &["127.0.0.1"]).await;
    let first = [("x-forwarded-for", "198.51.100.7, 203.0.113.1")];
    assert_eq!(s.burst(&first).await, 2);
    // Another client behind the same proxy is not held back by the first.
    assert_eq!(s.burst(&[("x-forwarded-for", "203.0.113.2")]).await, 2);
    // The proxy's own requests are a third client.
    assert_eq!(s.burst(&[]).await, 2);
    // A client cannot escape its bucket by writing its own entry first.
    assert_eq!(
        s.post(&[("x-forwarded-for", "192.0.2.99, 203.0.113.1")])
            .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // The same client through a proxy speaking RFC 7239.
    assert_eq!(
        s.post(&[(
            "forwarded",
            "for=192.0.2.99;proto=https, for=\"203.0.113.1:5123\""
        )])
        .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        s.burst(&[("forwarded", "for=\"203.0.113.3:5123\"")]).await,
        2
    );
}

#[tokio::test]
async fn from_an_untrusted_peer_forwarding_headers_are_ignored() {
    let s = start(20, &["10.0.0.0/8", "2001:db8::/32"]).await;
    let mut passed = 0;
    for n in 0..10 {
        let spoofed = format!("203.0.113.{n}");
        let forwarded = format!("for=198.51.100.{n}");
        let headers = [
            ("x-forwarded-for", spoofed.as_str()),
            ("forwarded", forwarded.as_str()),
        ];
        match s.post(&headers).await {
            StatusCode::CREATED => passed += 1,
            status => assert_eq!(status, StatusCode::TOO_MANY_REQUESTS),
        }
    }
    assert_eq!(passed, 2, "the spoofer is limited by its real address");
}

#[tokio::test]
async fn ipv6_clients_in_one_64_share_a_bucket() {
    let s = start(20, &["127.0.0.1"]).await;
    assert_eq!(s.burst(&[("x-forwarded-for", "2001:db8:1:2::1")]).await, 2);
    assert_eq!(
        s.post(&[("x-forwarded-for", "2001:db8:1:2:aaaa:bbbb:cccc:dddd")])
            .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        s.post(&[("forwarded", "for=\"[2001:db8:1:2::9]:443\"")])
            .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(s.burst(&[("x-forwarded-for", "2001:db8:1:3::1")]).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_distinct_addresses_leaves_the_limiter_bounded() {
    const FLOOD: u32 = 100_000;
    const SENDERS: u32 = 16;
    let s = Arc::new(start(1, &["127.0.0.1"]).await);
    // Past the cap new clients share one overflow bucket: most of them are
    // then refused, which shows the cap was reached.
    let refused = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let s = Arc::clone(&s);
            let refused = Arc::clone(&refused);
            tokio::spawn(async move {
                let url = format!("{}/v1/products/p/comments", s.base);
                for n in (sender..FLOOD).step_by(SENDERS as usize) {
                    // 10.0.0.0 + n: a distinct address per request. No body:
                    // the limit is taken before the body is read (415).
                    let address = std::net::Ipv4Addr::from(0x0a00_0000 + n).to_string();
                    let status = s
                        .client
                        .post(&url)
                        .header("x-forwarded-for", address)
                        .send()
                        .await
                        .unwrap()
                        .status();
                    assert!(
                        status == StatusCode::UNSUPPORTED_MEDIA_TYPE
                            || status == StatusCode::TOO_MANY_REQUESTS,
                        "{status}"
                    );
                    if status == StatusCode::TOO_MANY_REQUESTS {
                        refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    let text = s.metrics().await;
    let tracked: usize = text
        .lines()
        .find_map(|line| line.strip_prefix("rave_rate_limited_clients "))
        .expect("the limiter's size is a metric")
        .parse()
        .unwrap();
    let refused = refused.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("{FLOOD} distinct addresses left {tracked} buckets, {refused} refused");
    // Buckets refill after a minute and are pruned, so on a slow run some
    // of the first clients' buckets are gone by the end: the size is at
    // most the cap, never above it.
    assert!(tracked <= 65_536, "{tracked} buckets: above the cap");
    assert!(
        refused > 0,
        "none refused: the flood never filled the limiter to its cap"
    );
}

/// Log output, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_log_line_names_the_client() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // The test's runtime has one thread, which the server runs on too.
    let _guard = tracing::subscriber::set_default(subscriber);
    let s = start(0, &["127.0.0.1"]).await;
    assert_eq!(
        s.post(&[("x-forwarded-for", "203.0.113.44")]).await,
        StatusCode::CREATED
    );
    assert_eq!(s.post(&[]).await, StatusCode::CREATED);
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let finished: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("finished processing request"))
        .collect();
    assert_eq!(finished.len(), 2, "{log}");
    assert!(finished[0].contains("client=203.0.113.44"), "{log}");
    assert!(finished[1].contains("client=127.0.0.1"), "{log}");
}

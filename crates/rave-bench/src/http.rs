//! The HTTP scenarios: `rave serve` as its own process on loopback, loaded
//! by wrk (Debian's `wrk`) with the Lua scripts in `bench/http/`, bounded
//! in time. Also the plain-socket GETs that time start-up and sample the
//! aggregator's lag.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

pub const PAGES_SCRIPT: &str = include_str!("../../../bench/http/pages.lua");
pub const POST_SCRIPT: &str = include_str!("../../../bench/http/post.lua");
pub const ADMIN_TOKEN: &str = "rave-bench-admin-token";

/// A running `rave serve`, stopped when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `rave serve` on `data` and waits for its first answer to a
    /// page request; returns the server and how long that took.
    pub fn start(rave: &Path, data: &Path, log: &Path) -> anyhow::Result<(Server, Duration)> {
        let port = free_port()?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = std::fs::File::create(log).context("cannot create the server log")?;
        let started = Instant::now();
        let child = Command::new(rave)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(["--addr", &addr.to_string()])
            .args(["--rate-limit-per-minute", "0"])
            .args(["--admin-token", ADMIN_TOKEN])
            .env("RAVE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", rave.display()))?;
        let mut server = Server { child, addr };
        loop {
            if let Ok((200, _)) = get(addr, "/v1/products/p1/comments", None) {
                return Ok((server, started.elapsed()));
            }
            if let Some(status) = server.child.try_wait()? {
                bail!("rave serve exited with {status} before answering (see its log)");
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("rave serve did not answer within 60 s");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Resident memory of the server process, in bytes.
    pub fn resident_bytes(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .context("no VmRSS in /proc/<pid>/status")?;
        Ok(kib * 1024)
    }

    /// The server's user + system CPU time so far.
    pub fn cpu_time(&self) -> anyhow::Result<Duration> {
        crate::running::process_cpu_time(self.child.id())
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM for a graceful stop; the kill is the fallback.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A GET on a fresh connection: (status, body).
pub fn get(addr: SocketAddr, path: &str, bearer: Option<&str>) -> anyhow::Result<(u16, String)> {
    let (status, _, body) = exchange(addr, path, bearer)?;
    Ok((status, body))
}

/// The `ETag` a GET of `path` answers with.
pub fn etag(addr: SocketAddr, path: &str) -> anyhow::Result<String> {
    let (status, head, _) = exchange(addr, path, None)?;
    anyhow::ensure!(status == 200, "GET {path} answered {status}");
    head.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("etag")
                .then(|| value.trim().to_owned())
        })
        .with_context(|| format!("GET {path} has no ETag"))
}

/// The "Older comments" link of a product page, if it has one.
pub fn older_link(page: &str) -> Option<String> {
    let rest = &page[page.find("rel=\"next\" href=\"")? + 17..];
    Some(rest[..rest.find('"')?].replace("&amp;", "&"))
}

/// A GET on a fresh connection: (status, head, body).
fn exchange(
    addr: SocketAddr,
    path: &str,
    bearer: Option<&str>,
) -> anyhow::Result<(u16, String, String)> {
    let auth = bearer
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n");
    send(addr, request.as_bytes(), Duration::from_secs(5))
}

/// A POST of `body` on a fresh connection, answered within `timeout`:
/// (status, body).
pub fn post(
    addr: SocketAddr,
    path: &str,
    content_type: &str,
    body: &[u8],
    timeout: Duration,
) -> anyhow::Result<(u16, String)> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    let (status, _, body) = send(addr, &request, timeout)?;
    Ok((status, body))
}

/// Sends a whole request and reads the whole answer: (status, head, body).
fn send(
    addr: SocketAddr,
    request: &[u8],
    timeout: Duration,
) -> anyhow::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(request)?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("not an HTTP response")?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    Ok((status, head.to_owned(), body.to_owned()))
}

/// What wrk measured.
#[derive(Debug, Clone)]
pub struct WrkResult {
    pub requests_per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub requests: u64,
    /// Responses other than 2xx/3xx, and socket errors.
    pub errors: u64,
}

/// Runs wrk for `seconds` with 64 connections on 2 threads.
pub fn wrk(
    url: &str,
    script: Option<&Path>,
    seconds: u64,
    connections: u32,
) -> anyhow::Result<WrkResult> {
    let mut command = Command::new("wrk");
    command
        .args(["-t2", &format!("-c{connections}"), &format!("-d{seconds}s")])
        .arg("--latency");
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command
        .arg(url)
        .output()
        .context("cannot run wrk (Debian package `wrk`; scripts/test.sh installs it)")?;
    if !output.status.success() {
        bail!("wrk failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    parse_wrk(&String::from_utf8_lossy(&output.stdout))
}

fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = text.split_at(text.find(|c: char| c.is_ascii_alphabetic())?);
    let value: f64 = number.parse().ok()?;
    let seconds = match unit {
        "us" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        "m" => value * 60.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(seconds))
}

fn parse_wrk(out: &str) -> anyhow::Result<WrkResult> {
    let mut result = WrkResult {
        requests_per_second: 0.0,
        p50: Duration::ZERO,
        p99: Duration::ZERO,
        requests: 0,
        errors: 0,
    };
    for line in out.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["Requests/sec:", rate] => result.requests_per_second = rate.parse()?,
            ["50%", d] => result.p50 = parse_duration(d).context("wrk p50")?,
            ["99%", d] => result.p99 = parse_duration(d).context("wrk p99")?,
            [n, "requests", "in", ..] => result.requests = n.parse()?,
            ["Non-2xx", "or", "3xx", "responses:", n] => result.errors += n.parse::<u64>()?,
            ["Socket", "errors:", rest @ ..] => {
                result.errors += rest
                    .iter()
                    .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                    .sum::<u64>()
            }
            _ => {}
        }
    }
    if result.requests == 0 {
        bail!("wrk reported no requests:\n{out}");
    }
    Ok(result)
}

/// Samples `/v1/admin/aggregator`'s `lag_ms` every 100 ms until stopped.
#[derive(Debug)]
pub struct LagSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl LagSampler {
    pub fn start(addr: SocketAddr) -> LagSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let mut samples = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((200, body)) = get(addr, "/v1/admin/aggregator", Some(ADMIN_TOKEN))
                        && let Ok(value) = serde_json::from_str::<serde_json::Value>(&body)
                        && let Some(lag) = value["lag_ms"].as_u64()
                    {
                        samples.push(lag);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                samples
            }
        });
        LagSampler { stop, thread }
    }

    /// The samples, sorted.
    pub fn finish(self) -> anyhow::Result<Vec<u64>> {
        self.stop.store(true, Ordering::Relaxed);
        let mut samples = self
            .thread
            .join()
            .map_err(|_| anyhow::anyhow!("the lag sampler panicked"))?;
        samples.sort_unstable();
        Ok(samples)
    }
}

/// Writes the wrk scripts into `dir`; returns (pages, post).
pub fn write_scripts(dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let pages = dir.join("pages.lua");
    let post = dir.join("post.lua");
    std::fs::write(&pages, PAGES_SCRIPT)?;
    std::fs::write(&post, POST_SCRIPT)?;
    Ok((pages, post))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrk_output() {
        let out = "Running 20s test @ http://127.0.0.1:18080
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     6.95ms    3.10ms  60.12ms   80.00%
  Latency Distribution
     50%    6.90ms
     75%    8.00ms
     90%   10.00ms
     99%   14.50ms
  184000 requests in 20.00s, 300.00MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   9200.12
Transfer/sec:     15.00MB
";
        let r = parse_wrk(out).unwrap();
        assert_eq!(r.requests, 184_000);
        assert!((r.requests_per_second - 9200.12).abs() < 1e-6);
        assert_eq!(r.p50, Duration::from_micros(6_900));
        assert_eq!(r.p99, Duration::from_micros(14_500));
        assert_eq!(r.errors, 7);
        assert_eq!(parse_duration("812.00us"), Some(Duration::from_micros(812)));
        assert_eq!(parse_duration("1.20s"), Some(Duration::from_millis(1_200)));
    }

    #[test]
    fn finds_the_older_comments_link() {
        let page = "<nav><a rel=\"next\" href=\"/products/p?language=en&amp;cursor=abc\">Older comments</a></nav>";
        assert_eq!(
            older_link(page).as_deref(),
            Some("/products/p?language=en&cursor=abc")
        );
        assert_eq!(older_link("<nav></nav>"), None);
    }
}

//! The life of a `rave serve` process as an operator sees it: it rests when
//! there is nothing to do, and it stops when told, within its bound, under
//! load, idle, and with a client that never finishes its request. Each test
//! prints its figures (run with `--nocapture` to see them).
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{Writers, assert_all_present, readiness, serve};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The CPU time `pid` has used so far, in clock ticks (user and system).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/PID/stat");
    // The command name, in parentheses, may hold spaces: count fields
    // after its closing parenthesis (utime and stime are fields 14 and 15).
    let after_name = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |n: usize| -> u64 { fields[n - 3].parse().expect("a number of ticks") };
    field(14) + field(15)
}

/// Clock ticks per second, as /proc counts them.
fn ticks_per_second() -> u64 {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("run getconf CLK_TCK");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("CLK_TCK")
}

async fn post(client: &reqwest::Client, base: &str, i: usize) -> Option<String> {
    let body = json!({"author": format!("a{}", i % 5), "language": "en", "rating": 1 + i % 5, "body": format!("comment {i}")});
    let response = client
        .post(format!("{base}/v1/products/life/comments"))
        .json(&body)
        .send()
        .await
        .ok()?;
    if response.status() != StatusCode::CREATED {
        return None;
    }
    let created: Value = response.json().await.ok()?;
    Some(created["id"].as_str()?.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_rests_after_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &[]);
    let client = reqwest::Client::new();
    for i in 0..20 {
        post(&client, &server.base, i).await.expect("created");
    }
    // The aggregator has applied the writes once the statistics show them.
    let started = Instant::now();
    loop {
        let stats: Value = client
            .get(format!("{}/v1/products/life/stats", server.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if stats["total"] == 20 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{stats}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    readiness(&server.base, StatusCode::OK, Duration::from_secs(10)).await;

    // Nothing to do now: measure what resting costs.
    let pid = server.child.id();
    let window = Duration::from_secs(3);
    let before = cpu_ticks(pid);
    tokio::time::sleep(window).await;
    let used = cpu_ticks(pid) - before;
    let per_second = ticks_per_second();
    // A spinning server uses a whole core or two (one tick per 1/CLK_TCK s
    // of CPU); resting costs the timers of its consumers, well under 1 %.
    // The bound, 10 % of one core, leaves a wide margin for a loaded machine.
    let bound = per_second * window.as_secs() / 10;
    println!(
        "idle after 20 writes: {used} ticks of CPU in {window:?} (bound {bound}, {per_second} ticks a second)"
    );
    assert!(
        used <= bound,
        "the server used {used} ticks of CPU in {window:?} with nothing to do (at most {bound})"
    );

    // Told to stop while idle, it stops at once and cleanly.
    let asked = Instant::now();
    let status = server.terminate();
    println!("idle SIGTERM: exited {status} after {:?}", asked.elapsed());
    assert!(status.success(), "{status}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_stops_in_time_and_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &["--shutdown-timeout", "5"]);
    let writers = Writers::start(&server.base, "life", 16);
    writers.wait_for(300, Duration::from_secs(120)).await;
    // SIGTERM while the writers are still posting.
    let asked = Instant::now();
    let status = server.terminate();
    let took = asked.elapsed();
    let acknowledged = writers.stop().await;
    println!(
        "SIGTERM under 16 writers: exited {status} after {took:?}; {} writes acknowledged",
        acknowledged.len()
    );
    assert!(status.success(), "exited {status}: a clean stop exits 0");
    assert!(took < Duration::from_secs(5), "the stop took {took:?}");

    let server = serve(dir.path(), &[]);
    assert_all_present(&server.base, &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_never_finishes_does_not_hold_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), &["--shutdown-timeout", "2"]);
    // A client that announces a body and sends only part of it.
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut stalled = std::net::TcpStream::connect(&address).expect("connect");
    write!(
        stalled,
        "POST /v1/products/life/comments HTTP/1.1\r\nHost: {address}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"author\":"
    )
    .expect("send part of a request");
    stalled.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let asked = Instant::now();
    let status = server.terminate();
    let took = asked.elapsed();
    println!("SIGTERM with a stalled request: exited {status} after {took:?}");
    assert!(status.success(), "exited {status}");
    assert!(
        took < Duration::from_secs(4),
        "a stop bounded at 2 s took {took:?}"
    );
}

#[test]
fn a_stop_right_after_the_listening_line_is_clean() {
    // The signal handlers are in place before rave says it listens: a
    // SIGTERM at once stops it cleanly instead of killing it.
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let mut server = serve(dir.path(), &[]);
        let status = server.terminate();
        assert!(status.success(), "exited {status}");
    }
}

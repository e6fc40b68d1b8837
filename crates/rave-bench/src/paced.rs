//! B6's open-loop row: single-comment POSTs offered at a fixed rate.
//!
//! wrk (B6's other row) sends a connection's next request when its last one
//! is answered, so a slow answer holds back the requests behind it and the
//! wait never shows in the tail (coordinated omission). Here request `i` is
//! due at `start + i / rate` whatever happened before it, and its latency
//! runs from that due time to the end of its answer: a server that falls
//! behind shows it in p99. At most `connections` requests are in flight; a
//! request waiting for a free one is late, and its wait counts.
//!
//! The comments are those of `bench/http/post.lua` (B6's wrk script): 200
//! products, 8 languages, every rating, a distinct body each.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::measure::{Latencies, show, si};
use crate::report::Row;

/// The rate B6's open-loop row offers POSTs at (BENCH.md).
pub const RATE: u32 = 1_000;
/// Most requests in flight, as B6's closed loop has connections.
const CONNECTIONS: usize = 64;

/// What an open-loop run measured.
#[derive(Debug)]
pub struct Paced {
    /// The rate the requests were due at.
    pub offered_per_second: f64,
    /// Answers (of any status) per second, from the first due time to the
    /// last answer.
    pub answered_per_second: f64,
    /// From each request's due time to its whole answer.
    pub latencies: Latencies,
    /// Answers other than 2xx, and requests that failed.
    pub errors: u64,
    /// How far into the run the slowest request was due: a stall at the
    /// start of every run points at warming up, one anywhere at a job of
    /// the server's own.
    pub slowest_due: Duration,
}

const LANGUAGES: [&str; 8] = ["en", "de", "fr", "es", "it", "pt", "nl", "pl"];

/// The `n`th comment posted: its path and JSON body.
fn comment(n: u64) -> (String, String) {
    let product = format!("b{}", n % 200);
    let body = format!(
        r#"{{"author":"bench{}","language":"{}","rating":{},"title":"Benchmark","body":"A comment posted by the paced load generator, number {n}."}}"#,
        n % 5000,
        LANGUAGES[(n % 8) as usize],
        n % 5 + 1,
    );
    (format!("/v1/products/{product}/comments"), body)
}

/// POSTs `rate` comments a second to the server at `base_url` for
/// `seconds`, with at most `connections` in flight.
pub fn post_at_rate(
    base_url: &str,
    rate: u32,
    seconds: u64,
    connections: usize,
) -> anyhow::Result<Paced> {
    // One thread: the client must leave the server the machine's other
    // core, and a thousand requests a second are little work.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(base_url, rate, seconds, connections))
}

/// B6's open-loop row: POSTs offered at [`RATE`] for `seconds` to the
/// server at `base_url`, and whether its p99 stays within 20 ms.
pub fn open_loop_row(base_url: &str, seconds: u64) -> anyhow::Result<Row> {
    let paced = post_at_rate(base_url, RATE, seconds, CONNECTIONS)?;
    Ok(Row::new(
        "B6",
        format!(
            "durable single-comment POSTs offered at {RATE}/s for {seconds} s (open loop, at most {CONNECTIONS} in flight; latency from each request's due time)"
        ),
        format!(
            "{}/s answered, p50 {}, p99 {}, max {} (due {:.1} s into the run); {} failed",
            si(paced.answered_per_second),
            show(paced.latencies.p50()),
            show(paced.latencies.p99()),
            show(paced.latencies.quantile(1.0)),
            paced.slowest_due.as_secs_f64(),
            paced.errors
        ),
    )
    .ratio(paced.answered_per_second / paced.offered_per_second)
    .target(
        "p99 ≤ 20 ms at 1,000 POSTs/s offered",
        paced.errors == 0
            && paced.answered_per_second >= 0.99 * paced.offered_per_second
            && paced.latencies.p99() <= Duration::from_millis(20),
    ))
}

async fn run(base_url: &str, rate: u32, seconds: u64, connections: usize) -> anyhow::Result<Paced> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .timeout(Duration::from_secs(10))
        .build()?;
    let free = Arc::new(Semaphore::new(connections));
    let total = u64::from(rate) * seconds;
    let interval = Duration::from_secs(1).as_secs_f64() / f64::from(rate.max(1));
    let start = Instant::now();
    let mut in_flight = JoinSet::new();
    for n in 0..total {
        let due = start + Duration::from_secs_f64(interval * n as f64);
        tokio::time::sleep_until(due).await;
        let connection = Arc::clone(&free).acquire_owned().await?;
        let (path, body) = comment(n);
        let request = client
            .post(format!("{base_url}{path}"))
            .header("content-type", "application/json")
            .body(body);
        in_flight.spawn(async move {
            let answered = match request.send().await {
                Ok(answer) => {
                    let ok = answer.status().is_success();
                    answer.bytes().await.is_ok() && ok
                }
                Err(_) => false,
            };
            drop(connection);
            (due - start, due.elapsed(), answered)
        });
    }
    let mut times = Vec::with_capacity(total as usize);
    let mut errors = 0;
    let (mut slowest, mut slowest_due) = (Duration::ZERO, Duration::ZERO);
    while let Some(done) = in_flight.join_next().await {
        let (due, took, answered) = done?;
        if took > slowest {
            (slowest, slowest_due) = (took, due);
        }
        times.push(took);
        errors += u64::from(!answered);
    }
    let elapsed = start.elapsed();
    Ok(Paced {
        offered_per_second: f64::from(rate),
        answered_per_second: times.len() as f64 / elapsed.as_secs_f64().max(1e-9),
        latencies: Latencies::of(times),
        errors,
        slowest_due,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_cycle_through_products_languages_and_ratings() {
        let (path, body) = comment(201);
        assert_eq!(path, "/v1/products/b1/comments");
        let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(json["language"], "de");
        assert_eq!(json["rating"], 2);
        assert_eq!(json["author"], "bench201");
    }
}

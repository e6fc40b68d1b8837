//! The stream aggregator's loop: apply batches as they come, publish the
//! position and lag, stop when asked.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rave_comments::Comments;
use rave_server::AggregatorStatus;
use rave_store::{ChangeFeed, SharedStore};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::shutdown::{self, Shutdown};

/// The consumer name of the statistics aggregator on the stream.
pub const CONSUMER: &str = "statistics";

/// Applies changes until `stop` turns true, with as many readers as the
/// feed can hand batches to at once (one per shard on DynamoDB Streams);
/// publishes its status after every step. Errors are logged and retried
/// after a pause: the position only moves with a successful commit, so
/// nothing is lost.
pub async fn run<F: ChangeFeed>(
    comments: Arc<Comments<SharedStore>>,
    feed: F,
    status: watch::Sender<AggregatorStatus>,
    stop: watch::Receiver<bool>,
) {
    let feed = Arc::new(feed);
    let status = Arc::new(status);
    let applied = Arc::new(AtomicU64::new(0));
    let mut readers = JoinSet::new();
    for _ in 0..feed.concurrent_readers().max(1) {
        readers.spawn(apply_until_stopped(
            Arc::clone(&comments),
            Arc::clone(&feed),
            Arc::clone(&status),
            Arc::clone(&applied),
            stop.clone(),
        ));
    }
    while let Some(finished) = readers.join_next().await {
        if let Err(error) = finished {
            tracing::error!(%error, "an aggregator reader ended abnormally");
        }
    }
    tracing::info!(
        applied = applied.load(Ordering::Relaxed),
        "aggregator stopped"
    );
}

/// One reader of the aggregator: takes batches until `stop` turns true.
async fn apply_until_stopped<F: ChangeFeed>(
    comments: Arc<Comments<SharedStore>>,
    feed: Arc<F>,
    status: Arc<watch::Sender<AggregatorStatus>>,
    applied: Arc<AtomicU64>,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        let step = tokio::select! {
            step = comments.aggregate_once(feed.as_ref(), Duration::from_millis(500)) => step,
            _ = stop.changed() => break,
        };
        match step {
            Ok(n) => {
                applied.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(error) => {
                tracing::error!(%error, "aggregator step failed; retrying");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stop.changed() => {}
                }
            }
        }
        match feed.lag().await {
            Ok(lag) => {
                status.send_replace(AggregatorStatus {
                    position: lag.position,
                    latest: lag.latest,
                    lag_events: lag.events,
                    lag_ms: lag.millis,
                    applied: applied.load(Ordering::Relaxed),
                    published: Some(std::time::Instant::now()),
                });
            }
            Err(error) => tracing::warn!(%error, "cannot read the aggregator's lag"),
        }
    }
}

/// Runs the aggregator alone (`rave aggregate`) until SIGTERM or Ctrl-C.
pub async fn run_until_signalled<F: ChangeFeed>(comments: Arc<Comments<SharedStore>>, feed: F) {
    let shutdown = Shutdown::new(shutdown::DEFAULT_TIMEOUT);
    let (status, _) = watch::channel(AggregatorStatus::default());
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(run(comments, feed, status, stopped));
    shutdown.signalled().await;
    let _ = stop.send(true);
    shutdown::join_within(&shutdown, "aggregator", task).await;
}

/// Applies every change committed so far, with a progress bar, then returns.
pub async fn catch_up<F: ChangeFeed>(
    comments: &Comments<SharedStore>,
    feed: &F,
) -> anyhow::Result<u64> {
    let pending = feed.lag().await?.events;
    if pending == 0 {
        return Ok(0);
    }
    let bar = crate::progress::progress_bar(Some(pending), "applying pending changes");
    let mut applied = 0u64;
    loop {
        applied += comments.catch_up(feed, |n| bar.inc(n as u64)).await? as u64;
        if feed.lag().await?.events == 0 {
            bar.finish_and_clear();
            return Ok(applied);
        }
    }
}

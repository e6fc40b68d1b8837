//! Stopping when told, within a bound.
//!
//! SIGTERM or Ctrl-C starts the stop: the HTTP service stops accepting and
//! gives requests in flight most of the time to finish, the background
//! consumers (aggregator, webhooks) stop after their current step, and the
//! store closes. Nothing is committed half-done at any point: each write is
//! one store transaction, committed whole or not at all, and only a
//! committed write is acknowledged.
//!
//! Whatever happens inside, the process is gone by the deadline: a watchdog
//! thread, started with the stop, exits the process then. Killing it there is
//! as safe as a crash, which the store is built to survive; waiting longer
//! would make the process ignore the orchestrator that told it to stop.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The bound of a stop where no option sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the HTTP service leaves, of the whole stop, to the consumers and the
/// store.
const AFTER_DRAIN: Duration = Duration::from_secs(2);

/// The bounded stop of one process.
#[derive(Debug)]
pub struct Shutdown {
    timeout: Duration,
    deadline: OnceLock<Instant>,
}

impl Shutdown {
    pub fn new(timeout: Duration) -> Shutdown {
        Shutdown {
            timeout,
            deadline: OnceLock::new(),
        }
    }

    /// How long requests in flight may take once the stop begins.
    pub fn drain(&self) -> Duration {
        self.timeout
            .saturating_sub(AFTER_DRAIN)
            .max(self.timeout / 2)
    }

    /// Resolves on SIGTERM or Ctrl-C, and starts the watchdog.
    pub async fn signalled(&self) {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        tokio::select! {
            () = ctrl_c => {},
            () = terminate => {},
        }
        tracing::info!(
            timeout_seconds = self.timeout.as_secs_f64(),
            "shutting down: finishing requests in flight"
        );
        self.start_watchdog();
    }

    /// The time left until the deadline (all of it before the stop began).
    pub fn remaining(&self) -> Duration {
        match self.deadline.get() {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.timeout,
        }
    }

    fn start_watchdog(&self) {
        let deadline = *self.deadline.get_or_init(|| Instant::now() + self.timeout);
        let timeout = self.timeout;
        let started = std::thread::Builder::new()
            .name("rave-shutdown-watchdog".into())
            .spawn(move || {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                tracing::error!(
                    timeout_seconds = timeout.as_secs_f64(),
                    "did not stop within the shutdown timeout: exiting now"
                );
                std::process::exit(1);
            });
        if let Err(error) = started {
            tracing::warn!(%error, "cannot start the shutdown watchdog");
        }
    }
}

/// Waits for `task` until the stop's deadline is near; a task still running
/// then is left behind (the watchdog ends the process anyway).
pub async fn join_within<T>(shutdown: &Shutdown, what: &str, task: tokio::task::JoinHandle<T>) {
    let budget = shutdown
        .remaining()
        .saturating_sub(Duration::from_millis(500));
    match tokio::time::timeout(budget, task).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::error!(%error, task = what, "a background task ended abnormally")
        }
        Err(_) => tracing::warn!(task = what, "a background task did not stop in time"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drain_leaves_time_for_the_rest_of_the_stop() {
        let drain = |seconds| Shutdown::new(Duration::from_secs(seconds)).drain();
        assert_eq!(drain(10), Duration::from_secs(8));
        assert_eq!(drain(3), Duration::from_millis(1500));
        assert_eq!(drain(0), Duration::ZERO);
    }
}

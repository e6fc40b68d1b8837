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

use std::sync::{Mutex, OnceLock};
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
    /// The signals, listened for from the moment the stop is set up: a
    /// signal that arrives before anything waits for it (right after the
    /// listening line, say) then stops the process cleanly instead of
    /// killing it with the signal's default action.
    signals: Mutex<Option<Signals>>,
}

#[cfg(unix)]
#[derive(Debug)]
struct Signals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn listen() -> Option<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(terminate), Ok(interrupt)) => Some(Signals {
                terminate,
                interrupt,
            }),
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(%error, "cannot listen for SIGTERM and SIGINT");
                None
            }
        }
    }

    async fn received(mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {},
            _ = self.interrupt.recv() => {},
        }
    }
}

#[cfg(not(unix))]
#[derive(Debug)]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn listen() -> Option<Signals> {
        Some(Signals)
    }

    async fn received(self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

impl Shutdown {
    /// A stop bounded by `timeout`, listening for its signals from now on
    /// (call it inside the runtime, before the process says it listens).
    pub fn new(timeout: Duration) -> Shutdown {
        Shutdown {
            timeout,
            deadline: OnceLock::new(),
            signals: Mutex::new(Signals::listen()),
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
        let signals = self
            .signals
            .lock()
            .ok()
            .and_then(|mut signals| signals.take());
        match signals {
            Some(signals) => signals.received().await,
            // Listening failed, or another caller took the signals: wait
            // forever rather than stop at once.
            None => std::future::pending::<()>().await,
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

    #[tokio::test]
    async fn the_drain_leaves_time_for_the_rest_of_the_stop() {
        let drain = |seconds| Shutdown::new(Duration::from_secs(seconds)).drain();
        assert_eq!(drain(10), Duration::from_secs(8));
        assert_eq!(drain(3), Duration::from_millis(1500));
        assert_eq!(drain(0), Duration::ZERO);
    }
}

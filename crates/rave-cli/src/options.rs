//! Helpers for reading options.

use std::time::Duration;

/// An option given in seconds, as a duration; `what` names the option.
pub fn seconds(value: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| anyhow::anyhow!("{what} must be a positive number of seconds"))
}

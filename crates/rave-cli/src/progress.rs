//! Progress bars for the long-running commands.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `total` steps (a spinner with a count when the total is not
/// known), labelled `what`, ticking on its own.
pub fn progress_bar(total: Option<u64>, what: &str) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} {what} {{bar:40}} {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template(&format!("{{spinner}} {what} {{pos}} ({{per_sec}})"))
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A spinner labelled `what` with the time it has run: for a step that
/// counts nothing it can show.
pub fn spinner(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template(&format!("{{spinner}} {what} ({{elapsed}})"))
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

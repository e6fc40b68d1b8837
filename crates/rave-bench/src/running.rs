//! Running the `rave` binary from the harness, and progress bars.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

/// Runs `rave` to completion (its progress bars on the terminal) and
/// returns how long it took and what it printed.
pub fn run_rave(rave: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let output = Command::new(rave)
        .args(args)
        .env("RAVE_LOG", "warn")
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", rave.display()))?;
    let elapsed = started.elapsed();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{said}");
    if !output.status.success() {
        bail!("rave {:?} failed: {}", args, output.status);
    }
    Ok((elapsed, said))
}

/// A progress bar of `total` steps labelled `what`, ticking on its own.
pub fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{bar:40}} {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

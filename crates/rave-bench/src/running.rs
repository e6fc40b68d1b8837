//! Running the `rave` binary from the harness, the CPU time a process has
//! used, and progress bars.

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

/// Bytes this process, and every child it has waited for, fetched from
/// the storage layer rather than the page cache (`/proc/self/io`'s
/// `read_bytes`: the kernel adds a child's counts to its parent's when
/// the child is reaped). A store larger than memory shows here.
pub fn disk_reads() -> anyhow::Result<u64> {
    let io = std::fs::read_to_string("/proc/self/io").context("cannot read /proc/self/io")?;
    read_bytes(&io).context("no readable read_bytes in /proc/self/io")
}

/// The `read_bytes` counter of a `/proc/<pid>/io` text.
fn read_bytes(io: &str) -> Option<u64> {
    io.lines()
        .find_map(|line| line.strip_prefix("read_bytes:"))?
        .trim()
        .parse()
        .ok()
}

/// User + system CPU time process `pid` has used so far, every thread, as
/// the OS counts it (`/proc/<pid>/stat`).
pub fn process_cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces: count fields after its ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("unreadable /proc/<pid>/stat")?
        .1
        .split_whitespace()
        .collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 here.
    let ticks: u64 = fields
        .get(11..13)
        .context("short /proc/<pid>/stat")?
        .iter()
        .map(|field| field.parse::<u64>())
        .sum::<Result<u64, _>>()?;
    Ok(Duration::from_secs_f64(ticks as f64 / clock_ticks()?))
}

/// Clock ticks per second of `/proc/<pid>/stat`'s times.
fn clock_ticks() -> anyhow::Result<f64> {
    let output = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .context("cannot run getconf CLK_TCK")?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().parse()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bytes_is_the_storage_layers_count_not_rchar() {
        let io = "rchar: 5000\nwchar: 10\nsyscr: 3\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
        assert_eq!(read_bytes(io), Some(4096));
        assert_eq!(read_bytes("rchar: 5000\n"), None);
    }

    #[test]
    fn this_process_has_a_read_bytes_counter() {
        assert!(disk_reads().is_ok());
    }
}

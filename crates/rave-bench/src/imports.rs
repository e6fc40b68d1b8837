//! B5 (its CSV row): `rave import` of the same reviews as a shop's CSV export and as
//! rave's NDJSON, in the same run: what reading a CSV and mapping it
//! (separator detection, dates, the deterministic ids) costs beside
//! storing, and what detecting the language from the text adds.
//!
//! The reviews are the loaded data set, exported by `rave export`; the CSV
//! holds them as a platform's export would (no id), mapped with `--map`:
//! once with a language column (the same information as the NDJSON: the
//! row with the target), once without, each language detected from the
//! text (what a platform's export without languages costs). Each import
//! runs twice into an empty store, alternating with the others, and the
//! faster run of each counts: all share the machine's noise alike.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use crate::measure::{per_second, si};
use crate::report::Row;
use crate::running::run_rave;

/// The CSV's columns: the fields of an export a platform writes.
const COLUMNS: [(&str, &str); 7] = [
    ("Reviewer", "author"),
    ("Stars", "rating"),
    ("Headline", "title"),
    ("Review", "body"),
    ("Product", "product_id"),
    ("Written", "date"),
    ("Language", "language"),
];
/// Rounds of `rave-bench all`.
pub const ROUNDS: usize = 3;

pub fn csv_against_ndjson(
    rave: &Path,
    loaded: &Path,
    dir: &Path,
    rounds: usize,
) -> anyhow::Result<Vec<Row>> {
    let ndjson = dir.join("import.ndjson");
    run_rave(
        rave,
        &[
            "export".as_ref(),
            "--data".as_ref(),
            loaded.as_os_str(),
            "--output".as_ref(),
            ndjson.as_os_str(),
        ],
    )?;
    let with_language = dir.join("import.csv");
    let count = ndjson_to_csv(&ndjson, &with_language, COLUMNS.len())?;
    let detecting = dir.join("import-no-language.csv");
    ndjson_to_csv(&ndjson, &detecting, COLUMNS.len() - 1)?;
    let maps = |columns: usize| -> Vec<String> {
        COLUMNS[..columns]
            .iter()
            .map(|(column, field)| format!("{column}={field}"))
            .collect()
    };
    let csv_args = |file: &Path, columns: usize| -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["--language".into(), "en".into()];
        for map in maps(columns) {
            args.push("--map".into());
            args.push(map.into());
        }
        args.push(file.into());
        args
    };
    let imports = [
        ("ndjson", vec![ndjson.clone().into_os_string()]),
        ("csv", csv_args(&with_language, COLUMNS.len())),
        ("detect", csv_args(&detecting, COLUMNS.len() - 1)),
    ];
    let mut best = [Duration::MAX; 3];
    for round in 0..rounds {
        for (index, (name, args)) in imports.iter().enumerate() {
            let target = dir.join(format!("import-{name}-{round}"));
            let mut all: Vec<&std::ffi::OsStr> =
                vec!["import".as_ref(), "--data".as_ref(), target.as_os_str()];
            all.extend(args.iter().map(|a| a.as_os_str()));
            let (took, _) = run_rave(rave, &all)?;
            best[index] = best[index].min(took);
            std::fs::remove_dir_all(&target)?;
        }
    }
    let [ndjson_rate, csv_rate, detect_rate] = best.map(|took| per_second(count as f64, took));
    Ok(vec![
        Row::new(
            "B5",
            "`rave import` of a shop's CSV export (--map; language column) beside the same reviews as NDJSON, into an empty store",
            format!("CSV {}/s", si(csv_rate)),
        )
        .peers(format!(
            "NDJSON {}/s ({count} comments, best of {rounds} each, alternating)",
            si(ndjson_rate)
        ))
        .ratio(csv_rate / ndjson_rate)
        .target("CSV within 10 % of NDJSON", csv_rate >= 0.9 * ndjson_rate),
        Row::new(
            "B5",
            "the same CSV without a language column: each language detected from the text (whatlang)",
            format!("CSV {}/s", si(detect_rate)),
        )
        .peers(format!("NDJSON {}/s", si(ndjson_rate)))
        .ratio(detect_rate / ndjson_rate),
    ])
}

/// Writes `ndjson`'s comments as a CSV of the first `columns` of
/// [`COLUMNS`]; how many.
fn ndjson_to_csv(ndjson: &Path, csv: &Path, columns: usize) -> anyhow::Result<u64> {
    let input = BufReader::new(
        std::fs::File::open(ndjson).with_context(|| format!("cannot open {}", ndjson.display()))?,
    );
    let mut out = csv::Writer::from_path(csv)?;
    out.write_record(COLUMNS[..columns].iter().map(|(column, _)| column))?;
    let mut count = 0;
    for line in input.lines() {
        let comment: Value = serde_json::from_str(&line?)?;
        let text = |name: &str| -> anyhow::Result<String> {
            match &comment[name] {
                Value::String(text) => Ok(text.clone()),
                Value::Number(number) => Ok(number.to_string()),
                other => anyhow::bail!("{name} is {other}"),
            }
        };
        let record = [
            text("author")?,
            text("rating")?,
            text("title")?,
            text("body")?,
            text("product_id")?,
            text("created_at")?,
            text("language")?,
        ];
        out.write_record(&record[..columns])?;
        count += 1;
    }
    out.flush()?;
    Ok(count)
}

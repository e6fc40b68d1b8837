//! The scenarios of BENCH.md, in the order the data allows: load (B5),
//! imports of the loaded reviews as CSV and NDJSON (B5's CSV row, `imports`),
//! in-process reads and units (B1–B4, B10), then the HTTP service (B6–B9).

use std::path::Path;
use std::time::{Duration, Instant};

use rave_comments::dataset::Generator;
use rave_comments::{
    Comments, Config, CursorKey, Filter, Language, ListPage, ListRequest, Moderation, NewComment,
    OrderId, Rating, RatingSet, Sort, stored_size, table_definition,
};
use rave_engine::Engine;
use rave_store::{AttributeValue, Store, TableDefinition};
use tokio::runtime::Runtime;

use crate::dynoxide_store::DynoxideStore;
use crate::http::{self, LagSampler, Server};
use crate::measure::{
    HTTP_ROUNDS, Latencies, Rounds, deep_against_first, deep_cell, per_second, show, si,
};
use crate::plan::Plan;
use crate::report::Row;
use crate::running::{disk_reads, progress_bar, run_rave};
use crate::sqlite::{self, After, RatingPlan, Sqlite};

/// The most popular product of every data set (Zipf rank 1).
const HOT: &str = "p1";
const PAGE: usize = 20;
const TABLE: &str = "rave";

/// A listing filter, for rave and for SQLite.
#[derive(Debug, Clone, Copy)]
struct Case {
    name: &'static str,
    language: Option<&'static str>,
    ratings: &'static [i64],
}

const LISTINGS: [Case; 3] = [
    Case {
        name: "AP1 all comments",
        language: None,
        ratings: &[],
    },
    Case {
        name: "AP2 language en",
        language: Some("en"),
        ratings: &[],
    },
    Case {
        name: "AP3 ratings 1, 5",
        language: None,
        ratings: &[1, 5],
    },
];

impl Case {
    fn rave(&self) -> anyhow::Result<Filter> {
        Ok(Filter {
            language: self.language.map(Language::parse).transpose()?,
            ratings: RatingSet::from_ratings(
                self.ratings
                    .iter()
                    .map(|r| Rating::new(*r))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            verified: false,
            incentivized: None,
            has_media: false,
        })
    }

    fn sqlite(&self) -> sqlite::Filter {
        sqlite::Filter {
            language: self.language.map(str::to_owned),
            ratings: self.ratings.to_vec(),
        }
    }
}

fn config() -> Config {
    Config {
        table: TABLE.into(),
        cursor_key: CursorKey::new([7; 32]),
        moderation: Moderation::Off,
    }
}

pub fn run(plan: &Plan, seed: u64, rave: &Path, dir: &Path) -> anyhow::Result<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();

    // B5: the three loads of the same generated data.
    let rave_dir = dir.join("rave");
    println!("\n== loading rave: `rave load`, then `rave aggregate --until-caught-up`");
    let n = plan.comments.to_string();
    let products = plan.products.to_string();
    let seed_text = seed.to_string();
    let reads_before_load = disk_reads()?;
    let (load_time, _) = run_rave(
        rave,
        &[
            "load".as_ref(),
            "--data".as_ref(),
            rave_dir.as_os_str(),
            "--products".as_ref(),
            products.as_ref(),
            "--comments".as_ref(),
            n.as_ref(),
            "--seed".as_ref(),
            seed_text.as_ref(),
        ],
    )?;
    let (aggregate_time, said) = run_rave(
        rave,
        &[
            "aggregate".as_ref(),
            "--data".as_ref(),
            rave_dir.as_os_str(),
            "--until-caught-up".as_ref(),
        ],
    )?;
    let applied = applied_records(&said)?;
    let load_disk_reads = disk_reads()?.saturating_sub(reads_before_load);
    let rave_bytes = DiskUse::of(&rave_dir)?;
    println!("\n== loading SQLite");
    let sqlite_path = dir.join("sqlite.db");
    let (db, sqlite_time) = load_sqlite(plan, seed, &sqlite_path)?;
    println!("\n== loading dynoxide through rave's domain");
    let dynoxide = rt.block_on(load_dynoxide(plan, seed, &dir.join("dynoxide.db")))?;
    let count = plan.comments as f64;
    let rave_rate = per_second(count, load_time + aggregate_time);
    let sqlite_rate = per_second(count, sqlite_time);
    let dynoxide_rate = per_second(dynoxide.comments as f64, dynoxide.load);
    let dynoxide_holds = match plan.dynoxide_hot_tail {
        None => String::new(),
        Some(_) => format!(
            "; it holds the hot product's newest {} comments, which every compared page comes from",
            dynoxide.comments
        ),
    };
    rows.push(
        Row::new(
            "B5",
            "bulk load through the domain: comment items, their index entries, change stream, then statistics caught up",
            format!("{}/s", si(rave_rate)),
        )
        .peers(format!(
            "dynoxide (rave's domain on it, BatchWriteItem of 25, synchronous=OFF, no stream{dynoxide_holds}): {}/s, statistics by reconcile +{:.0} s · SQLite (rows, 4 indexes, counter table): {}/s",
            si(dynoxide_rate),
            dynoxide.stats.as_secs_f64(),
            si(sqlite_rate),
        ))
        .ratio(rave_rate / sqlite_rate)
        .target("≥ 1× SQLite's load rate", rave_rate >= sqlite_rate),
    );
    rows.push(Row::new(
        "B5",
        "the same, in parts: `rave load` / `rave aggregate --until-caught-up`; what both read from the disk (not the page cache)",
        format!(
            "{:.1} s ({}/s) + {:.1} s; {} read",
            load_time.as_secs_f64(),
            si(per_second(count, load_time)),
            aggregate_time.as_secs_f64(),
            bytes(load_disk_reads)
        ),
    ));
    rows.push(
        Row::new(
            "B11",
            "aggregator catching up after the load: stream records applied per second",
            format!(
                "{}/s ({applied} records in {:.1} s: {:.0} % of the load's time)",
                si(per_second(applied as f64, aggregate_time)),
                aggregate_time.as_secs_f64(),
                100.0 * aggregate_time.as_secs_f64() / load_time.as_secs_f64()
            ),
        )
        .target(
            "catching up ≤ 1/5 of the load's time",
            aggregate_time * 5 <= load_time,
        ),
    );
    if plan.imports {
        println!("\n== B5 (CSV): `rave import` of the same reviews as CSV and as NDJSON");
        rows.extend(crate::imports::csv_against_ndjson(
            rave,
            &rave_dir,
            dir,
            crate::imports::ROUNDS,
        )?);
    }
    // The in-process reads.
    let engine = Engine::open(&rave_dir)?;
    let sqlite_bytes = DiskUse::of_files(&sqlite::files(&sqlite_path))?;
    let fill = page_fill(&engine.storage_usage()?);
    rows.push(
        Row::new(
            "disk",
            "bytes on disk after loading and aggregating (files; allocated; per comment); how full the pages are",
            format!(
                "{} ({}; {} B); pages {:.0} % full",
                bytes(rave_bytes.length),
                bytes(rave_bytes.allocated),
                rave_bytes.length / plan.comments.max(1),
                fill * 100.0
            ),
        )
        .peers(format!(
            "SQLite {} ({}; {} B)",
            bytes(sqlite_bytes.length),
            bytes(sqlite_bytes.allocated),
            sqlite_bytes.length / plan.comments.max(1)
        ))
        .ratio(rave_bytes.length as f64 / sqlite_bytes.length.max(1) as f64)
        .target(
            "≤ 10× SQLite's files; pages ≥ 85 % full",
            rave_bytes.length <= 10 * sqlite_bytes.length && fill >= 0.85,
        ),
    );
    let on_rave = Comments::new(engine.clone(), config()).with_stats_freshness(|| true);
    let on_dynoxide = Comments::new(dynoxide.store, config()).with_stats_freshness(|| true);
    let hot = rt.block_on(on_rave.product_stats(HOT, None))?.total;
    println!("\n== in-process reads: hot product {HOT} has {hot} comments");
    reads(
        plan,
        &rt,
        &engine,
        &on_rave,
        &on_dynoxide,
        &db,
        hot,
        &mut rows,
    )?;
    read_amplification(&rt, &on_rave, &mut rows)?;
    sorts(plan, &rt, &on_rave, &mut rows)?;
    units(&rt, &on_rave, &mut rows)?;
    drop(on_rave);
    drop(engine);
    drop(on_dynoxide);
    drop(db);

    println!("\n== B6's peer: durable single-row inserts into SQLite from 64 threads");
    let mut generator = Generator::new(plan.products, plan.comments, seed ^ 0xB6);
    let comments: Vec<_> = (0..4_096).map(|_| generator.next_comment()).collect();
    let inserts = Duration::from_secs(plan.http_seconds);
    let sqlite_durable = sqlite::durable_inserts(&sqlite_path, 64, inserts, |thread, i| {
        comments[(thread * 64 + i as usize) % comments.len()].clone()
    })?;
    let sqlite_durable = Durable {
        per_second: per_second(sqlite_durable.len() as f64, inserts),
        latencies: sqlite_durable,
    };

    println!("\n== the HTTP service: `rave serve` and wrk on loopback");
    serve(plan, rave, &rave_dir, dir, &sqlite_durable, &mut rows)?;

    // Families last: moving the twenty largest products into a group
    // rewrites a third of the medium set's comments (minutes of writes and
    // a long stream), which the HTTP scenarios must not start on.
    let engine = Engine::open(&rave_dir)?;
    let on_rave = Comments::new(engine.clone(), config()).with_stats_freshness(|| true);
    crate::groups::groups(plan, &rt, &on_rave, &mut rows)?;
    Ok(rows)
}

/// How many stream records `rave aggregate --until-caught-up` says it applied.
fn applied_records(said: &str) -> anyhow::Result<u64> {
    said.split_whitespace()
        .skip_while(|word| *word != "applied")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("`rave aggregate` did not say what it applied: {said:?}"))
}

/// The files of a store: their lengths, and the blocks the file system
/// allocated for them (less where a file has holes).
#[derive(Debug, Clone, Copy, Default)]
struct DiskUse {
    length: u64,
    allocated: u64,
}

impl DiskUse {
    /// Every file under `dir`.
    fn of(dir: &Path) -> anyhow::Result<DiskUse> {
        let mut files = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                if entry.file_type()?.is_dir() {
                    pending.push(entry.path());
                } else {
                    files.push(entry.path());
                }
            }
        }
        DiskUse::of_files(&files)
    }

    fn of_files(files: &[std::path::PathBuf]) -> anyhow::Result<DiskUse> {
        use std::os::unix::fs::MetadataExt;
        let mut total = DiskUse::default();
        for file in files {
            let metadata = std::fs::metadata(file)?;
            total.length += metadata.len();
            total.allocated += metadata.blocks() * 512;
        }
        Ok(total)
    }
}

/// `7_400_000_000` → `7.40 GB`.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.2} GB", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n => format!("{:.1} kB", n as f64 / 1e3),
    }
}

fn load_sqlite(plan: &Plan, seed: u64, path: &Path) -> anyhow::Result<(Sqlite, Duration)> {
    let mut db = Sqlite::create(path)?;
    let bar = progress_bar(plan.comments, "SQLite");
    let mut generator = Generator::new(plan.products, plan.comments, seed);
    let started = Instant::now();
    let mut remaining = plan.comments;
    while remaining > 0 {
        let n = remaining.min(1_000);
        let batch: Vec<_> = (0..n).map(|_| generator.next_comment()).collect();
        db.insert(&batch)?;
        bar.inc(n);
        remaining -= n;
    }
    db.analyze()?;
    let elapsed = started.elapsed();
    bar.finish();
    println!(
        "SQLite: {} comments in {:.1} s, {} MB",
        plan.comments,
        elapsed.as_secs_f64(),
        db.size_bytes(path) / 1_000_000
    );
    Ok((db, elapsed))
}

/// Loads through `Comments::import` (the code `rave load` runs), then
/// computes the statistics with `reconcile --fix`: dynoxide's stream is
/// not wired to rave's aggregator here.
async fn load_dynoxide(plan: &Plan, seed: u64, path: &Path) -> anyhow::Result<DynoxideLoad> {
    let store = DynoxideStore::open(path)?;
    let comments = Comments::new(store.clone(), config());
    // Without its stream, which nothing here reads: with it on, each of
    // dynoxide's writes looks up the next stream sequence number by
    // reading its stream records, and the load slows to ~50 comments/s
    // past 40 k comments.
    store
        .create_table(TableDefinition {
            stream_enabled: false,
            time_to_live_attribute: None,
            ..table_definition(TABLE)
        })
        .await?;
    store.bulk_loading(true)?;
    // Which comments of the stream dynoxide gets: all, or the hot
    // product's from the `skip`-th on (its newest `tail`).
    let (total, skip) = match plan.dynoxide_hot_tail {
        None => (plan.comments, None),
        Some(tail) => {
            let mut generator = Generator::new(plan.products, plan.comments, seed);
            let hot = (0..plan.comments)
                .filter(|_| generator.next_comment().product == HOT)
                .count() as u64;
            (tail.min(hot), Some(hot.saturating_sub(tail)))
        }
    };
    let bar = progress_bar(total, "dynoxide");
    let mut generator = Generator::new(plan.products, plan.comments, seed);
    let started = Instant::now();
    let mut loaded = 0u64;
    let mut hot_seen = 0u64;
    let mut batch = Vec::with_capacity(100);
    for _ in 0..plan.comments {
        let comment = generator.next_comment();
        if let Some(skip) = skip {
            if comment.product != HOT {
                continue;
            }
            hot_seen += 1;
            if hot_seen <= skip {
                continue;
            }
        }
        batch.push(comment);
        if batch.len() == 100 {
            loaded += 100;
            comments.import(std::mem::take(&mut batch)).await?;
            bar.inc(100);
        }
    }
    loaded += batch.len() as u64;
    if !batch.is_empty() {
        comments.import(batch).await?;
    }
    let load = started.elapsed();
    bar.finish();
    let started = Instant::now();
    let bar = progress_bar(plan.comments, "dynoxide statistics");
    let report = comments.reconcile(1, true, &|n| bar.inc(n)).await?;
    bar.finish();
    let stats = started.elapsed();
    store.bulk_loading(false)?;
    println!(
        "dynoxide: {loaded} comments in {:.1} s, statistics from {} items in {:.1} s, {} MB",
        load.as_secs_f64(),
        report.items_scanned,
        stats.as_secs_f64(),
        store.size_bytes()? / 1_000_000
    );
    Ok(DynoxideLoad {
        store,
        comments: loaded,
        load,
        stats,
    })
}

/// dynoxide after its load.
struct DynoxideLoad {
    store: DynoxideStore,
    /// How many comments it holds (see `Plan::dynoxide_hot_tail`).
    comments: u64,
    load: Duration,
    stats: Duration,
}

fn list<S: Store>(
    rt: &Runtime,
    comments: &Comments<S>,
    filter: &Filter,
    sort: Sort,
    cursor: Option<&str>,
) -> rave_comments::Result<ListPage> {
    rt.block_on(comments.list(&ListRequest {
        sort,
        product: HOT,
        filter: filter.clone(),
        limit: PAGE,
        cursor,
    }))
}

/// The cursor that opens page `page` (1-based).
fn rave_cursor<S: Store>(
    rt: &Runtime,
    comments: &Comments<S>,
    filter: &Filter,
    sort: Sort,
    page: usize,
) -> anyhow::Result<Option<String>> {
    let mut cursor = None;
    for _ in 1..page {
        cursor = list(rt, comments, filter, sort, cursor.as_deref())?.next_cursor;
        anyhow::ensure!(cursor.is_some(), "the listing has fewer than {page} pages");
    }
    Ok(cursor)
}

fn sqlite_after(db: &Sqlite, filter: &sqlite::Filter, page: usize) -> anyhow::Result<After> {
    let mut after = After::start();
    for _ in 1..page {
        after = db
            .page(HOT, filter, RatingPlan::In, &after, PAGE)?
            .1
            .ok_or_else(|| anyhow::anyhow!("the SQLite listing has fewer than {page} pages"))?;
    }
    Ok(after)
}

fn time_rave<S: Store>(
    plan: &Plan,
    rt: &Runtime,
    comments: &Comments<S>,
    filter: &Filter,
    sort: Sort,
    cursor: Option<&str>,
) -> anyhow::Result<Latencies> {
    Ok(Latencies::sample(
        plan.iterations / 10,
        plan.iterations,
        || list(rt, comments, filter, sort, cursor),
    )?)
}

fn time_sqlite(
    plan: &Plan,
    db: &Sqlite,
    filter: &sqlite::Filter,
    rating_plan: RatingPlan,
    after: &After,
) -> anyhow::Result<Latencies> {
    Ok(Latencies::sample(
        plan.iterations / 10,
        plan.iterations,
        || db.page(HOT, filter, rating_plan, after, PAGE),
    )?)
}

/// The faster of SQLite's two ways to answer a rating set.
fn time_sqlite_best(
    plan: &Plan,
    db: &Sqlite,
    filter: &sqlite::Filter,
    after: &After,
) -> anyhow::Result<(Latencies, &'static str)> {
    let by_in = time_sqlite(plan, db, filter, RatingPlan::In, after)?;
    if filter.ratings.len() < 2 {
        return Ok((by_in, "keyset"));
    }
    let by_union = time_sqlite(plan, db, filter, RatingPlan::Union, after)?;
    Ok(if by_union.p50() < by_in.p50() {
        (by_union, "keyset, UNION of ratings")
    } else {
        (by_in, "keyset, rating IN")
    })
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}

/// The floor under B1: the stored entries an AP1 page of the hot product
/// reads, read from redb through the engine and decoded into nothing.
fn time_floor(
    plan: &Plan,
    rt: &Runtime,
    engine: &Engine,
    on_rave: &Comments<Engine>,
    filter: &Filter,
) -> anyhow::Result<Latencies> {
    let page = list(rt, on_rave, filter, Sort::Newest, None)?;
    let [query] = &page.plan.queries[..] else {
        anyhow::bail!("an AP1 page is one query, not {}", page.plan.queries.len());
    };
    let partition = AttributeValue::s(&query.partition_key);
    Ok(Latencies::sample(
        plan.iterations / 10,
        plan.iterations,
        || engine.read_raw_partition(TABLE, Some(query.index), &partition, false, PAGE),
    )?)
}

/// B1, B2, B3: page latencies on all three, page 1 and deep.
#[allow(clippy::too_many_arguments)]
fn reads(
    plan: &Plan,
    rt: &Runtime,
    engine: &Engine,
    on_rave: &Comments<Engine>,
    on_dynoxide: &Comments<DynoxideStore>,
    db: &Sqlite,
    hot: u64,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let deep = plan.deep_page;
    for (i, case) in LISTINGS.iter().enumerate() {
        println!("{}: page 1 and page {deep}", case.name);
        let filter = case.rave()?;
        let sql_filter = case.sqlite();
        let newest = Sort::Newest;
        let cursor = rave_cursor(rt, on_rave, &filter, newest, deep)?;
        let (rave_first, rave_deep, rave_ratios) = deep_against_first(plan.iterations, |deep| {
            list(
                rt,
                on_rave,
                &filter,
                newest,
                cursor.as_deref().filter(|_| deep),
            )
        })?;
        let dx_first = time_rave(plan, rt, on_dynoxide, &filter, newest, None)?;
        let dx_cursor = rave_cursor(rt, on_dynoxide, &filter, newest, deep)?;
        let dx_deep = time_rave(plan, rt, on_dynoxide, &filter, newest, dx_cursor.as_deref())?;
        let (sql_first, how_first) = time_sqlite_best(plan, db, &sql_filter, &After::start())?;
        let after = sqlite_after(db, &sql_filter, deep)?;
        let (sql_deep, how_deep) = time_sqlite_best(plan, db, &sql_filter, &after)?;
        // OFFSET pages cost up to 100 ms deep down: a tenth of the calls
        // gives a stable median without dominating the run.
        let offset_calls = (plan.iterations / 10).max(5);
        let offset_first = Latencies::sample(2, offset_calls, || {
            db.page_by_offset(HOT, &sql_filter, 1, PAGE)
        })?;
        let offset_deep = Latencies::sample(2, offset_calls, || {
            db.page_by_offset(HOT, &sql_filter, deep, PAGE)
        })?;
        // The same data must give the same answers, field by field.
        for (cursor, dx_cursor, after) in [
            (None, None, After::start()),
            (cursor.clone(), dx_cursor.clone(), after.clone()),
        ] {
            let ours = list(rt, on_rave, &filter, newest, cursor.as_deref())?.items;
            let theirs = list(rt, on_dynoxide, &filter, newest, dx_cursor.as_deref())?.items;
            let rows_sql = db.page(HOT, &sql_filter, RatingPlan::In, &after, PAGE)?.0;
            anyhow::ensure!(
                ours == theirs
                    && ours.len() == rows_sql.len()
                    && ours.iter().zip(&rows_sql).all(|(c, r)| r.is(c)),
                "{}: rave, dynoxide and SQLite disagree on a page",
                case.name
            );
        }
        if i == 0 {
            let floor = time_floor(plan, rt, engine, on_rave, &filter)?;
            let over_floor = ratio(rave_first.p50(), floor.p50());
            let over_sqlite = ratio(rave_first.p50(), sql_first.p50());
            rows.push(
                Row::new(
                    "B1",
                    format!("AP1 page of 20, in process, hot product ({hot} comments), p50"),
                    format!(
                        "{} (p99 {}); {over_floor:.2}× the floor",
                        show(rave_first.p50()),
                        show(rave_first.p99())
                    ),
                )
                .peers(format!(
                    "floor (raw redb range of the page's {PAGE} entries) {} · SQLite {} · dynoxide {}",
                    show(floor.p50()),
                    show(sql_first.p50()),
                    show(dx_first.p50())
                ))
                .ratio(over_sqlite)
                .target(
                    "≤ 4× the floor and ≤ 0.25× SQLite",
                    over_floor <= 4.0 && over_sqlite <= 0.25,
                ),
            );
        }
        rows.push(
            Row::new(
                "B2",
                format!("{}: page {deep} ÷ page 1", case.name),
                deep_cell(&rave_first, &rave_deep, &rave_ratios),
            )
            .peers(format!(
                "SQLite keyset {:.2} · SQLite OFFSET {:.2} ({} → {}) · dynoxide {:.2}",
                ratio(sql_deep.p50(), sql_first.p50()),
                ratio(offset_deep.p50(), offset_first.p50()),
                show(offset_first.p50()),
                show(offset_deep.p50()),
                ratio(dx_deep.p50(), dx_first.p50()),
            ))
            .target("≤ 1.2 in every round", rave_ratios.highest() <= 1.2),
        );
        for (page, rave_time, sql_time, how, dx_time) in [
            (1, &rave_first, &sql_first, how_first, &dx_first),
            (deep, &rave_deep, &sql_deep, how_deep, &dx_deep),
        ] {
            let r = ratio(rave_time.p50(), sql_time.p50());
            rows.push(
                Row::new(
                    "B3",
                    format!("{} page {page}, p50", case.name),
                    show(rave_time.p50()),
                )
                .peers(format!(
                    "SQLite {} ({how}) · dynoxide {}",
                    show(sql_time.p50()),
                    show(dx_time.p50())
                ))
                .ratio(r)
                .target("≤ 0.5", r <= 0.5),
            );
        }
    }
    // AP4/AP7: the rating counts of a product.
    let rave_counts = Latencies::sample(plan.iterations / 10, plan.iterations, || {
        rt.block_on(on_rave.product_stats(HOT, None))
    })?;
    let dx_counts = Latencies::sample(plan.iterations / 10, plan.iterations, || {
        rt.block_on(on_dynoxide.product_stats(HOT, None))
    })?;
    let maintained = Latencies::sample(plan.iterations / 10, plan.iterations, || {
        db.counts_maintained(HOT, None)
    })?;
    let grouped = Latencies::sample(2, (plan.iterations / 20).max(5), || {
        db.counts_grouped(HOT, None)
    })?;
    let rave_answer = rt.block_on(on_rave.product_stats(HOT, None))?.counts.0;
    anyhow::ensure!(
        rave_answer == db.counts_maintained(HOT, None)?,
        "rave's and SQLite's rating counts differ: {rave_answer:?}"
    );
    let r = ratio(rave_counts.p50(), maintained.p50());
    rows.push(
        Row::new(
            "B3",
            "rating counts of the hot product (AP7), p50",
            show(rave_counts.p50()),
        )
        .peers(format!(
            "SQLite counter table {} · SQLite GROUP BY {} · dynoxide {}",
            show(maintained.p50()),
            show(grouped.p50()),
            show(dx_counts.p50())
        ))
        .ratio(r)
        .target("rave ÷ SQLite ≤ 1.0", r <= 1.0),
    );
    Ok(())
}

/// B4: items read ÷ items returned over the first 50 pages of rating
/// fan-outs, with the statistics (rave) and without (part 2's overscan).
fn read_amplification(
    rt: &Runtime,
    on_rave: &Comments<Engine>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    for ratings in [&[1, 5][..], &[1, 2, 5][..], &[1, 2, 3, 5][..]] {
        let case = Case {
            name: "",
            language: None,
            ratings,
        };
        let filter = case.rave()?;
        let figures = [
            amplification(rt, on_rave, &filter, Sort::Newest, true)?,
            amplification(rt, on_rave, &filter, Sort::Newest, false)?,
        ];
        rows.push(
            Row::new(
                "B4",
                format!("AP3 ratings {ratings:?}: items read ÷ returned, first 50 pages"),
                format!("{:.2}", figures[0]),
            )
            .peers(format!("part 2's design (no counts): {:.2}", figures[1]))
            .target("≤ 1.3", figures[0] <= 1.3),
        );
    }
    Ok(())
}

/// Items read ÷ items returned over the first 50 pages of a listing of the
/// hot product, planned with the statistics or (`with_counts` false)
/// without them.
fn amplification(
    rt: &Runtime,
    on_rave: &Comments<Engine>,
    filter: &Filter,
    sort: Sort,
    with_counts: bool,
) -> anyhow::Result<f64> {
    let (mut read, mut returned) = (0usize, 0usize);
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let request = ListRequest {
            sort,
            product: HOT,
            filter: filter.clone(),
            limit: PAGE,
            cursor: cursor.as_deref(),
        };
        let page = if with_counts {
            rt.block_on(on_rave.list(&request))?
        } else {
            rt.block_on(on_rave.list_with_counts(&request, None))?
        };
        read += page.plan.items_read;
        returned += page.items.len();
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    Ok(read as f64 / returned.max(1) as f64)
}

/// B2 and B4 for the orders that are not by time (highest, lowest,
/// helpful) under a language and under a rating filter: page `deep` ÷ page
/// 1, and items read ÷ returned over the first 50 pages. The data set has
/// no votes, so `helpful` is newest first within each rating partition's
/// equal scores, merged over the partitions.
fn sorts(
    plan: &Plan,
    rt: &Runtime,
    on_rave: &Comments<Engine>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let deep = plan.deep_page;
    let cases = [
        Case {
            name: "language en",
            language: Some("en"),
            ratings: &[],
        },
        Case {
            name: "ratings 1, 5",
            language: None,
            ratings: &[1, 5],
        },
    ];
    for case in cases {
        let filter = case.rave()?;
        for sort in [Sort::Highest, Sort::Lowest, Sort::Helpful] {
            println!(
                "sort={} {}: page 1 and page {deep}",
                sort.as_str(),
                case.name
            );
            let cursor = rave_cursor(rt, on_rave, &filter, sort, deep)?;
            let (first, deeper, ratios) = deep_against_first(plan.iterations, |deep| {
                list(
                    rt,
                    on_rave,
                    &filter,
                    sort,
                    cursor.as_deref().filter(|_| deep),
                )
            })?;
            rows.push(
                Row::new(
                    "B2",
                    format!("sort={} {}: page {deep} ÷ page 1", sort.as_str(), case.name),
                    deep_cell(&first, &deeper, &ratios),
                )
                .target("≤ 1.2 in every round", ratios.highest() <= 1.2),
            );
            let read = amplification(rt, on_rave, &filter, sort, true)?;
            rows.push(
                Row::new(
                    "B4",
                    format!(
                        "sort={} {}: items read ÷ returned, first 50 pages",
                        sort.as_str(),
                        case.name
                    ),
                    format!("{read:.2}"),
                )
                .target("≤ 1.3", read <= 1.3),
            );
        }
    }
    Ok(())
}

/// B10: read and write units per access pattern from rave's capacity
/// accounting, beside the seeds' two designs on the same data.
fn units(rt: &Runtime, on_rave: &Comments<Engine>, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    // The comments' own item size, which part 1 duplicates.
    let sample = list(rt, on_rave, &Filter::default(), Sort::Newest, None)?;
    let sizes: Vec<usize> = sample.items.iter().map(stored_size).collect();
    let item_bytes = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
    // Part 1 reads one partition of pre-filtered duplicates: a page and the
    // one item that says whether more follow, eventually consistent.
    let part1_read = (((PAGE + 1) as f64 * item_bytes) / 4096.0).ceil() * 0.5;
    // Part 1 writes the comment and 32 duplicates (16 rating sets, for all
    // languages and for its own).
    let part1_write = 33.0 * (item_bytes / 1024.0).ceil();
    for case in [
        LISTINGS[0],
        LISTINGS[1],
        LISTINGS[2],
        Case {
            name: "AP3 ratings 1, 2, 5",
            language: None,
            ratings: &[1, 2, 5],
        },
        Case {
            name: "AP3 en, ratings 2, 4",
            language: Some("en"),
            ratings: &[2, 4],
        },
    ] {
        let filter = case.rave()?;
        let page = list(rt, on_rave, &filter, Sort::Newest, None)?;
        let request = ListRequest {
            sort: Default::default(),
            product: HOT,
            filter: filter.clone(),
            limit: PAGE,
            cursor: None,
        };
        let part2 = rt.block_on(on_rave.list_with_counts(&request, None))?;
        rows.push(
            Row::new(
                "B10",
                format!("{}: first page, read units (items read)", case.name),
                format!("{:.1} ({})", page.plan.read_units, page.plan.items_read),
            )
            .peers(format!(
                "part 1: {part1_read:.1} ({}) · part 2: {:.1} ({})",
                PAGE + 1,
                part2.plan.read_units,
                part2.plan.items_read
            )),
        );
    }
    let before = on_rave.usage().read_units();
    rt.block_on(on_rave.product_stats(HOT, Some("en")))?;
    let stats_read = on_rave.usage().read_units() - before;
    rows.push(
        Row::new(
            "B10",
            "AP8 rating counts in one language: read units",
            format!("{stats_read:.1}"),
        )
        .peers("part 1 and part 2: no counts (a page per rating, or a scan)"),
    );
    let before = on_rave.usage().write_units();
    rt.block_on(on_rave.create(
        "bench-units",
        NewComment {
            media: Vec::new(),
            attributes: Default::default(),
            author: "bench".into(),
            language: "en".into(),
            rating: 5,
            title: Some("Units".into()),
            body: "One comment, to read the write units it costs.".into(),
            created_at: None,
        },
        None,
    ))?;
    let write = on_rave.usage().write_units() - before;
    rows.push(
        Row::new(
            "B10",
            format!("create a comment ({item_bytes:.0}-byte item): write units"),
            format!(
                "{write:.1} (one transaction: the comment and the check that its product's family is still the one read; + statistics, batched by the aggregator)"
            ),
        )
        .peers(format!(
            "part 1: {part1_write:.0} (33 items) · part 2: the item and its index entries, as rave"
        )),
    );
    let before = on_rave.usage().write_units();
    rt.block_on(on_rave.create_verified(
        "bench-units",
        NewComment {
            media: Vec::new(),
            attributes: Default::default(),
            author: "bench".into(),
            language: "en".into(),
            rating: 5,
            title: Some("Units".into()),
            body: "One verified comment, to read the write units it costs.".into(),
            created_at: None,
        },
        None,
        &OrderId::parse("bench-order")?,
    ))?;
    let verified = on_rave.usage().write_units() - before;
    rows.push(
        Row::new(
            "B10",
            "create a verified comment: write units",
            format!(
                "{verified:.1} (four sparse verified entries, the order item and the family check, one transaction)"
            ),
        )
        .peers(
            "verified copies of byLangAndRating and byRating only: 2 entries fewer, but verified listings without a rating fan out over five partitions",
        ),
    );
    Ok(())
}

/// HTML: the crawlable product pages of the hot product against the JSON
/// page they render, revalidation with `If-None-Match`, and a deep keyset
/// page against the first; and the CPU row: the server's CPU time per
/// answer (from the OS) of each, kept and read afresh (`Cache-Control:
/// no-cache`), against the trivial route's.
fn html_pages(plan: &Plan, server: &Server, dir: &Path, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let url = server.base_url();
    let page = format!("/products/{HOT}");
    let json_page = format!("/v1/products/{HOT}/comments");
    // What each run cost the server, in CPU µs per answer.
    let run_costed = |path: &str,
                      script: Option<&Path>,
                      seconds: u64|
     -> anyhow::Result<(http::WrkResult, f64)> {
        let before = server.cpu_time()?;
        let result = http::wrk(&format!("{url}{path}"), script, seconds, 64)?;
        let cpu = server.cpu_time()?.saturating_sub(before);
        anyhow::ensure!(
            result.errors == 0,
            "HTML {path}: {} failed requests",
            result.errors
        );
        let per_answer = cpu.as_secs_f64() * 1e6 / result.requests as f64;
        Ok((result, per_answer))
    };
    println!("HTML: crawlable pages, and CPU per answer ({HTTP_ROUNDS} rounds)");
    let fresh = dir.join("fresh.lua");
    std::fs::write(&fresh, "wrk.headers[\"Cache-Control\"] = \"no-cache\"\n")?;
    let tag = http::etag(server.addr, &page)?;
    let revalidate = dir.join("revalidate.lua");
    std::fs::write(
        &revalidate,
        format!("wrk.headers[\"If-None-Match\"] = '{tag}'\n"),
    )?;
    // Follow the links a crawler follows, as far as the product goes.
    let mut deep = page.clone();
    let mut depth = 1;
    while depth < plan.deep_page {
        let (status, body) = http::get(server.addr, &deep, None)?;
        anyhow::ensure!(status == 200, "GET {deep} answered {status}");
        match http::older_link(&body) {
            Some(next) => deep = next,
            None => break,
        }
        depth += 1;
    }
    // Every route once a round, the rounds one after another, so that a
    // slow stretch of the machine weighs on every route alike; each row
    // compares routes within a round, and reports its median round and
    // the rounds' spread.
    let routes: [(&str, Option<&Path>); 7] = [
        (&json_page, None),
        (&page, None),
        ("/healthz", None),
        (&json_page, Some(&fresh)),
        (&page, Some(&fresh)),
        (&page, Some(&revalidate)),
        (&deep, None),
    ];
    let seconds = (plan.http_seconds / HTTP_ROUNDS as u64).max(1);
    let mut measured: [Vec<(http::WrkResult, f64)>; 7] = std::array::from_fn(|_| Vec::new());
    for _ in 0..HTTP_ROUNDS {
        for ((path, script), runs) in routes.iter().zip(&mut measured) {
            runs.push(run_costed(path, *script, seconds)?);
        }
    }
    let [
        json,
        html,
        trivial,
        json_miss,
        html_miss,
        revalidated,
        deep_runs,
    ] = &measured;
    let rate = |runs: &[(http::WrkResult, f64)], round: usize| runs[round].0.requests_per_second;
    let cpu = |runs: &[(http::WrkResult, f64)], round: usize| runs[round].1;
    let by_round =
        |figure: &dyn Fn(usize) -> f64| Rounds::of((0..HTTP_ROUNDS).map(figure).collect());
    // The round of the median rate, for its latencies.
    let median_run = |runs: &[(http::WrkResult, f64)]| {
        let mut order: Vec<usize> = (0..runs.len()).collect();
        order.sort_by(|&a, &b| rate(runs, a).total_cmp(&rate(runs, b)));
        runs[order[order.len() / 2]].0.clone()
    };
    let (html_run, json_run) = (median_run(html), median_run(json));
    let html_to_json = by_round(&|round| rate(html, round) / rate(json, round));
    rows.push(
        Row::new(
            "HTML",
            "HTML product page ÷ JSON page, hot product's first page, 64 connections",
            format!(
                "{} pages/s (p99 {}) vs {} (p99 {}); {}",
                si(html_run.requests_per_second),
                show(html_run.p99),
                si(json_run.requests_per_second),
                show(json_run.p99),
                html_to_json.spread()
            ),
        )
        .ratio(html_to_json.median())
        .target("≥ 0.8", html_to_json.median() >= 0.8),
    );
    let revalidated_run = median_run(revalidated);
    let revalidated_to_html = by_round(&|round| rate(revalidated, round) / rate(html, round));
    rows.push(
        Row::new(
            "HTML",
            "304 revalidations (If-None-Match) ÷ full HTML pages, same URL",
            format!(
                "{} req/s (p99 {}); {}",
                si(revalidated_run.requests_per_second),
                show(revalidated_run.p99),
                revalidated_to_html.spread()
            ),
        )
        .ratio(revalidated_to_html.median())
        .target("≥ 1", revalidated_to_html.median() >= 1.0),
    );
    let trivial_cpu = by_round(&|round| cpu(trivial, round));
    let trivial_cell = format!("/healthz {:.1} µs", trivial_cpu.median());
    for (what, runs, target) in [
        (
            "JSON page, read afresh (Cache-Control: no-cache)",
            json_miss,
            Some(3.0),
        ),
        (
            "HTML page, read afresh (Cache-Control: no-cache)",
            html_miss,
            Some(3.5),
        ),
        ("304 revalidation of the HTML page", revalidated, Some(1.5)),
        ("JSON page, kept", json, None),
        ("HTML page, kept", html, None),
    ] {
        let per_answer = by_round(&|round| cpu(runs, round));
        let ratio = by_round(&|round| cpu(runs, round) / cpu(trivial, round));
        let row = Row::new(
            "CPU",
            format!("server CPU per answer ÷ the trivial route's: {what}, 64 connections"),
            format!("{:.1} µs; {}", per_answer.median(), ratio.spread()),
        )
        .peers(trivial_cell.clone())
        .ratio(ratio.median());
        rows.push(match target {
            Some(limit) => row.target(format!("≤ {limit}×"), ratio.median() <= limit),
            None => row,
        });
    }
    let deep_cost = by_round(&|round| rate(html, round) / rate(deep_runs, round));
    rows.push(
        Row::new(
            "HTML",
            format!("HTML page {depth} (\"Older comments\" links) ÷ page 1: cost"),
            format!(
                "{:.2} ({} → {} pages/s; {})",
                deep_cost.median(),
                si(html_run.requests_per_second),
                si(median_run(deep_runs).requests_per_second),
                deep_cost.spread()
            ),
        )
        .target("≤ 1.2", deep_cost.median() <= 1.2),
    );
    Ok(())
}

/// The share of the store's pages its stored keys and values fill.
fn page_fill(usage: &rave_engine::StorageUsage) -> f64 {
    let stored: u64 = usage.parts.iter().map(|part| part.stored_bytes).sum();
    let pages: u64 = usage.parts.iter().map(|part| part.page_bytes()).sum();
    stored as f64 / pages.max(1) as f64
}

/// Durable single-row inserts: B6's peer.
struct Durable {
    per_second: f64,
    latencies: Latencies,
}

/// B6–B9 against `rave serve`.
fn serve(
    plan: &Plan,
    rave: &Path,
    data: &Path,
    dir: &Path,
    sqlite_durable: &Durable,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let (pages, post) = http::write_scripts(dir)?;
    let (server, first_answer) = Server::start(rave, data, &dir.join("serve.log"))?;
    rows.push(
        Row::new(
            "B9",
            "`rave serve` on the data set: start to first page answered",
            format!("{:.0} ms", first_answer.as_secs_f64() * 1e3),
        )
        .target("≤ 1 s", first_answer <= Duration::from_secs(1)),
    );
    let url = server.base_url();
    println!("ceiling: /healthz");
    let ceiling = http::wrk(&format!("{url}/healthz"), None, plan.http_seconds, 64)?;
    rows.push(Row::new(
        "B7",
        "the machine's ceiling: trivial route (/healthz), 64 connections",
        format!(
            "{} req/s, p99 {}",
            si(ceiling.requests_per_second),
            show(ceiling.p99)
        ),
    ));
    println!("B7: pages");
    let b7 = http::wrk(&url, Some(&pages), plan.http_seconds, 64)?;
    anyhow::ensure!(b7.errors == 0, "B7 saw {} failed requests", b7.errors);
    rows.push(
        Row::new(
            "B7",
            "page GETs, mixed filters (AP1–AP3, limit 20/50), 64 connections",
            format!(
                "{} req/s, p50 {}, p99 {}",
                si(b7.requests_per_second),
                show(b7.p50),
                show(b7.p99)
            ),
        )
        .ratio(b7.requests_per_second / ceiling.requests_per_second)
        .target(
            "≥ 0.5 of the trivial route's rate, p99 ≤ 2× its p99",
            b7.requests_per_second >= 0.5 * ceiling.requests_per_second
                && b7.p99 <= 2 * ceiling.p99,
        ),
    );
    let rss = server.resident_bytes()?;
    rows.push(
        Row::new(
            "B9",
            "resident memory of `rave serve` after B7",
            format!("{} MB", rss / 1_000_000),
        )
        .target("≤ 256 MB", rss <= 256 * 1024 * 1024),
    );
    html_pages(plan, &server, dir, rows)?;
    println!("B6: POSTs, B8: aggregation lag");
    let sampler = LagSampler::start(server.addr);
    let b6 = http::wrk(&url, Some(&post), plan.http_seconds, 64)?;
    let lags = sampler.finish()?;
    anyhow::ensure!(b6.errors == 0, "B6 saw {} failed requests", b6.errors);
    rows.push(
        Row::new(
            "B6",
            "durable single-comment POSTs, 64 connections",
            format!(
                "{}/s, p50 {}, p99 {}",
                si(b6.requests_per_second),
                show(b6.p50),
                show(b6.p99)
            ),
        )
        .peers(format!(
            "SQLite (WAL, synchronous = FULL, one row per transaction, 64 threads): {}/s, p50 {}, p99 {}",
            si(sqlite_durable.per_second),
            show(sqlite_durable.latencies.p50()),
            show(sqlite_durable.latencies.p99())
        ))
        .ratio(b6.requests_per_second / sqlite_durable.per_second)
        .target(
            "≥ 1× SQLite's durable inserts",
            b6.requests_per_second >= sqlite_durable.per_second,
        ),
    );
    println!("B6: POSTs offered at a fixed rate (open loop)");
    rows.push(crate::paced::open_loop_row(&url, plan.http_seconds)?);
    anyhow::ensure!(!lags.is_empty(), "no aggregator lag samples during B6");
    let pick = |q: f64| lags[((lags.len() - 1) as f64 * q).round() as usize];
    rows.push(
        Row::new(
            "B8",
            format!(
                "write → statistics lag under B6 ({} samples, every 100 ms)",
                lags.len()
            ),
            format!(
                "p50 {} ms, p99 {} ms, max {} ms",
                pick(0.5),
                pick(0.99),
                lags[lags.len() - 1]
            ),
        )
        .target("p99 ≤ 1 s", pick(0.99) <= 1_000),
    );
    drop(server);
    Ok(())
}

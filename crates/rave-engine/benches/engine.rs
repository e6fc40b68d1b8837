//! Engine micro-benchmarks (BENCH.md B1, B2, B5 at the engine level, and
//! durable single puts with and without group commit).
//!
//! The data is comment-shaped: one item per comment with four global
//! secondary indexes (projection ALL) and the change stream on, as the
//! comments domain stores them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rave_engine::{Engine, EngineOptions};
use rave_store::*;
use tokio::runtime::Runtime;

// The `rave` binary runs on mimalloc; measure what it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TABLE: &str = "comments";
const LANGUAGES: [&str; 4] = ["en", "de", "fr", "es"];

fn definition() -> TableDefinition {
    let index = |name: &str, partition: &str| GlobalSecondaryIndex {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(partition, KeyType::S),
            Some(KeyAttribute::new("GSISK", KeyType::S)),
        ),
        projection: Projection::All,
    };
    TableDefinition {
        name: TABLE.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new("PK", KeyType::S),
            Some(KeyAttribute::new("SK", KeyType::S)),
        ),
        global_secondary_indexes: vec![
            index("byLangAndRating", "GSIPK"),
            index("byLang", "GSI2PK"),
            index("byRating", "GSI3PK"),
            index("all", "GSI4PK"),
        ],
        stream_enabled: true,
        time_to_live_attribute: None,
        local_secondary_indexes: Vec::new(),
    }
}

/// A comment item of about 400 bytes with its four index keys.
fn comment(product: u64, n: u64) -> Item {
    let id = format!("{:016}{:08}", n, product);
    let language = LANGUAGES[(n % 4) as usize];
    let rating = 1 + (n * 7 % 5);
    let gsisk = format!("2026-01-01T00:00:00.000Z#{id}");
    item! {
        "PK" => format!("COMMENT#{id}"),
        "SK" => format!("COMMENT#{id}"),
        "GSIPK" => format!("PRODUCT#{product}/{language}/{rating}"),
        "GSI2PK" => format!("PRODUCT#{product}/{language}"),
        "GSI3PK" => format!("PRODUCT#{product}/{rating}"),
        "GSI4PK" => format!("PRODUCT#{product}"),
        "GSISK" => gsisk,
        "author" => format!("author{}", n % 1000),
        "language" => language,
        "rating" => rating as i64,
        "title" => "A fair title for a product",
        "body" => "Works as described. The battery lasts a week, the strap is comfortable and the screen is readable in sunlight. Would buy again.",
        "status" => "published",
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Loads `count` comments of one product with `writers` concurrent batch writers.
async fn load(engine: &Engine, product: u64, count: u64, writers: u64) {
    let mut tasks = Vec::new();
    for w in 0..writers {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = w * 25;
            while n < count {
                let requests = (n..(n + 25).min(count))
                    .map(|i| (TABLE.to_string(), WriteRequest::Put(comment(product, i))))
                    .collect();
                engine
                    .batch_write_item(BatchWriteItemInput { requests })
                    .await
                    .expect("batch write");
                n += writers * 25;
            }
        }));
    }
    for task in tasks {
        task.await.expect("loader task");
    }
}

fn query_pages(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(dir.path()).expect("open");
    const ITEMS: u64 = 100_000;
    rt.block_on(async {
        engine.create_table(definition()).await.expect("create");
        load(&engine, 42, ITEMS, 8).await;
    });
    let page = |start: Option<Item>| {
        let mut q = QueryInput::new(
            TABLE,
            Some("all"),
            KeyCondition::partition("GSI4PK", "PRODUCT#42"),
        );
        q.scan_index_forward = false;
        q.limit = Some(20);
        q.exclusive_start_key = start;
        q
    };
    // The start key of a page deep inside the partition (page 2,500 of 5,000).
    let deep = comment(42, ITEMS / 2);
    let deep_start: Item = ["GSI4PK", "GSISK", "PK", "SK"]
        .iter()
        .map(|k| (k.to_string(), deep[*k].clone()))
        .collect();
    let mut group = c.benchmark_group("gsi_query_20_of_100k");
    group.bench_function("first_page", |b| {
        b.iter(|| rt.block_on(engine.query(page(None))).expect("query"))
    });
    // The same page shown to a visitor that reads what a listing shows of
    // each item, in place; and the floor under both: the page's stored
    // entries read from redb, decoded into nothing.
    group.bench_function("first_page_visiting", |b| {
        b.iter(|| {
            rt.block_on(engine.query_visiting(
                page(None),
                Box::new(|item| {
                    let shown = [
                        "PK", "author", "language", "title", "body", "status", "GSISK",
                    ]
                    .iter()
                    .filter_map(|name| item.attribute(name)?.as_s())
                    .map(str::len)
                    .sum::<usize>()
                        + item.attribute("rating").and_then(|r| r.as_n()).is_some() as usize;
                    std::hint::black_box(shown);
                }),
            ))
            .expect("query")
        })
    });
    let all = AttributeValue::s("PRODUCT#42");
    group.bench_function("first_page_floor", |b| {
        b.iter(|| {
            engine
                .read_raw_partition(TABLE, Some("all"), &all, false, 20)
                .expect("raw read")
        })
    });
    group.bench_function("deep_page", |b| {
        b.iter(|| {
            rt.block_on(engine.query(page(Some(deep_start.clone()))))
                .expect("query")
        })
    });
    group.finish();
}

fn bulk_load(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("bulk_load_4_gsis_and_stream");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    const BATCH: u64 = 20_000;
    group.throughput(Throughput::Elements(BATCH));
    group.bench_function("batch_write_25_x32_writers", |b| {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Engine::open(dir.path()).expect("open");
        rt.block_on(engine.create_table(definition()))
            .expect("create");
        let mut product = 0;
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                product += 1;
                rt.block_on(load(&engine, product, BATCH, 32));
            }
            start.elapsed()
        })
    });
    group.finish();
}

fn durable_puts(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("durable_single_puts_64_writers");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    const PUTS: u64 = 2_000;
    group.throughput(Throughput::Elements(PUTS));
    for (name, max_group) in [("group_commit", 1024), ("one_commit_per_put", 1)] {
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            let dir = tempfile::tempdir().expect("tempdir");
            let options = EngineOptions {
                max_commit_group: max_group,
                ..EngineOptions::default()
            };
            let engine = Arc::new(Engine::open_with(dir.path(), options).expect("open"));
            rt.block_on(engine.create_table(definition()))
                .expect("create");
            let mut round = 0u64;
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    round += 1;
                    rt.block_on(async {
                        let mut tasks = Vec::new();
                        for w in 0..64u64 {
                            let engine = engine.clone();
                            tasks.push(tokio::spawn(async move {
                                for i in 0..PUTS / 64 {
                                    let item = comment(round * 1000 + w, i);
                                    let input = PutItemInput {
                                        table: TABLE.into(),
                                        item,
                                        condition: None,
                                        return_values: ReturnValues::None,
                                    };
                                    engine.put_item(input).await.expect("put");
                                }
                            }));
                        }
                        for task in tasks {
                            task.await.expect("writer");
                        }
                    });
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, query_pages, bulk_load, durable_puts);
criterion_main!(benches);

//! Listing pages through the domain on the embedded engine (BENCH.md B1,
//! B2, in every sort) and read amplification of rating fan-outs and of the
//! sorts (B4).
//!
//! One hot product with 60,000 comments from the data sets' generator
//! (`rave_comments::dataset`): languages and ratings skewed, creation times
//! spread over two years. Page 1000 of 20 sits 20,000 comments deep. Two
//! more products hold as many comments of other seeds with helpful votes,
//! one with votes that follow the rating and one with votes independent of
//! it, for the `helpful` order.

use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rave_comments::*;
use rave_engine::Engine;
use tokio::runtime::Runtime;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const COMMENTS: u64 = 60_000;
const PAGE: usize = 20;
/// The products with votes (following the rating, and independent of it)
/// and their data sets' seeds: another seed than the hot product's, whose
/// comments' ids they would otherwise share.
const VOTED: [(&str, dataset::Votes, u64); 2] = [
    ("voted_by_rating", dataset::Votes::ByRating, 1),
    ("voted_independently", dataset::Votes::Independent, 2),
];

struct Setup {
    rt: Runtime,
    comments: Arc<Comments<Engine>>,
    /// The hot product's counts.
    counts_all: RatingCounts,
    counts_en: RatingCounts,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(dir.path()).expect("engine");
    let config = Config {
        table: "rave".into(),
        cursor_key: CursorKey::new([1; 32]),
        moderation: Moderation::Off,
    };
    let comments = Arc::new(Comments::new(engine.clone(), config));
    // One product: every generated comment lands on it, with the data
    // sets' language, rating and time distributions.
    let mut generator = dataset::Generator::new(1, COMMENTS, 0x5EED);
    let mut counts_all = [0u64; 5];
    let mut counts_en = [0u64; 5];
    let specs: Vec<NewComment> = (0..COMMENTS)
        .map(|_| {
            let new = generator.next_comment().comment;
            counts_all[(new.rating - 1) as usize] += 1;
            if new.language == "en" {
                counts_en[(new.rating - 1) as usize] += 1;
            }
            new
        })
        .collect();
    rt.block_on(async {
        comments.ensure_table().await.expect("table");
        let mut tasks = Vec::new();
        for chunk in specs.chunks(specs.len().div_ceil(64)) {
            let comments = comments.clone();
            let chunk = chunk.to_vec();
            tasks.push(tokio::spawn(async move {
                for new in chunk {
                    comments.create("hot", new, None).await.expect("create");
                }
            }));
        }
        for task in tasks {
            task.await.expect("loader");
        }
        for (product, votes, seed) in VOTED {
            let mut generator = dataset::Generator::new(1, COMMENTS, seed).with_votes(votes);
            for _ in 0..COMMENTS / 500 {
                let batch = (0..500)
                    .map(|_| {
                        let mut comment = generator.next_comment();
                        comment.product = product.into();
                        comment
                    })
                    .collect();
                comments.import(batch).await.expect("import");
            }
        }
        // Listings read their counts from the statistics, as served.
        let feed = rave_engine::EngineFeed::open(engine.clone(), "rave", "stats")
            .await
            .expect("feed");
        while comments
            .aggregate_once(&feed, Duration::from_millis(10))
            .await
            .expect("aggregate")
            > 0
        {}
    });
    Setup {
        rt,
        comments,
        counts_all: RatingCounts(counts_all),
        counts_en: RatingCounts(counts_en),
        _dir: dir,
    }
}

fn filter(language: Option<&str>, ratings: &[i64]) -> Filter {
    Filter {
        language: language.map(|l| Language::parse(l).expect("language")),
        ratings: RatingSet::from_ratings(ratings.iter().map(|r| Rating::new(*r).expect("rating"))),
        verified: false,
        incentivized: None,
        has_media: false,
    }
}

/// The cursor that opens page `page` (1-based) of a listing.
fn cursor_for_page(
    s: &Setup,
    product: &str,
    filter: &Filter,
    sort: Sort,
    page: usize,
) -> Option<String> {
    let mut cursor = None;
    for _ in 1..page {
        let request = ListRequest {
            sort,
            product,
            filter: filter.clone(),
            limit: PAGE,
            cursor: cursor.as_deref(),
        };
        cursor =
            s.rt.block_on(s.comments.list(&request))
                .expect("list")
                .next_cursor;
        assert!(cursor.is_some(), "the listing has fewer than {page} pages");
    }
    cursor
}

fn pages(c: &mut Criterion) {
    let s = setup();
    let (by_rating, independent) = (VOTED[0].0, VOTED[1].0);
    let cases = [
        ("AP1_all", "hot", filter(None, &[]), Sort::Newest),
        ("AP2_en", "hot", filter(Some("en"), &[]), Sort::Newest),
        (
            "AP3_ratings_1_5",
            "hot",
            filter(None, &[1, 5]),
            Sort::Newest,
        ),
        ("oldest_all", "hot", filter(None, &[]), Sort::Oldest),
        ("highest_all", "hot", filter(None, &[]), Sort::Highest),
        ("lowest_en", "hot", filter(Some("en"), &[]), Sort::Lowest),
        (
            "helpful_by_rating_en",
            by_rating,
            filter(Some("en"), &[]),
            Sort::Helpful,
        ),
        (
            "helpful_by_rating_1_5",
            by_rating,
            filter(None, &[1, 5]),
            Sort::Helpful,
        ),
        (
            "helpful_independent_en",
            independent,
            filter(Some("en"), &[]),
            Sort::Helpful,
        ),
    ];
    let mut group = c.benchmark_group("page_of_20");
    group.measurement_time(Duration::from_secs(4));
    for (name, product, filter, sort) in &cases {
        for page in [1usize, 1000] {
            let cursor = cursor_for_page(&s, product, filter, *sort, page);
            group.bench_function(BenchmarkId::new(*name, format!("page_{page}")), |b| {
                b.iter(|| {
                    let request = ListRequest {
                        sort: *sort,
                        product,
                        filter: filter.clone(),
                        limit: PAGE,
                        cursor: cursor.as_deref(),
                    };
                    s.rt.block_on(s.comments.list(&request)).expect("list")
                })
            });
        }
    }
    group.finish();
    read_amplification(&s);
    sort_amplification(&s);
}

/// B4 for the sorts: items read per item returned over the first 50 pages
/// of each sort under each kind of filter, planned with the statistics; and
/// of `helpful` on the products with votes.
fn sort_amplification(s: &Setup) {
    println!(
        "\nB4 by sort (items read / items returned, first 50 pages of 20, with the statistics):"
    );
    amplification_by_sort(s, "hot", &Sort::ALL);
    for (product, _, _) in VOTED {
        println!("\n{product}:");
        amplification_by_sort(s, product, &[Sort::Helpful]);
    }
}

fn amplification_by_sort(s: &Setup, product: &str, sorts: &[Sort]) {
    let filters = [
        (None, &[][..]),
        (Some("en"), &[][..]),
        (None, &[1, 5][..]),
        (Some("en"), &[2, 4][..]),
        (None, &[4, 5][..]),
        (Some("en"), &[1, 2, 3][..]),
    ];
    for (language, ratings) in filters {
        let f = filter(language, ratings);
        let mut figures = Vec::new();
        for &sort in sorts {
            let (mut read, mut returned) = (0usize, 0usize);
            let mut cursor: Option<String> = None;
            for _ in 0..50 {
                let request = ListRequest {
                    sort,
                    product,
                    filter: f.clone(),
                    limit: PAGE,
                    cursor: cursor.as_deref(),
                };
                let page = s.rt.block_on(s.comments.list(&request)).expect("list");
                read += page.plan.items_read;
                returned += page.items.len();
                cursor = page.next_cursor;
                if cursor.is_none() {
                    break;
                }
            }
            figures.push(format!(
                "{} {:.2}",
                sort.as_str(),
                read as f64 / returned as f64
            ));
        }
        let name = format!(
            "{}{:?}",
            language.map(|l| format!("{l} ")).unwrap_or_default(),
            ratings
        );
        println!("{name:<22} {}", figures.join("  "));
    }
}

/// B4: items read per item returned over the first 50 pages, printed as a table.
fn read_amplification(s: &Setup) {
    println!("\nB4 read amplification (items read / items returned, first 50 pages of 20):");
    println!("{:<22} {:>12} {:>12}", "filter", "no counts", "with counts");
    for (language, ratings) in [
        (None, &[1, 5][..]),
        (None, &[1, 2, 5][..]),
        (None, &[1, 2, 3, 5][..]),
        (Some("en"), &[2, 4][..]),
        (Some("en"), &[1, 3, 4][..]),
        (Some("en"), &[1, 2, 3, 4][..]),
    ] {
        let f = filter(language, ratings);
        let counts = if language.is_some() {
            s.counts_en
        } else {
            s.counts_all
        };
        let mut figures = Vec::new();
        for with_counts in [false, true] {
            let (mut read, mut returned) = (0usize, 0usize);
            let mut cursor: Option<String> = None;
            for _ in 0..50 {
                let request = ListRequest {
                    sort: Default::default(),
                    product: "hot",
                    filter: f.clone(),
                    limit: PAGE,
                    cursor: cursor.as_deref(),
                };
                let page =
                    s.rt.block_on(
                        s.comments
                            .list_with_counts(&request, with_counts.then_some(&counts)),
                    )
                    .expect("list");
                read += page.plan.items_read;
                returned += page.items.len();
                cursor = page.next_cursor;
                if cursor.is_none() {
                    break;
                }
            }
            figures.push(read as f64 / returned as f64);
        }
        let name = format!(
            "{}{:?}",
            language.map(|l| format!("{l} ")).unwrap_or_default(),
            ratings
        );
        println!("{name:<22} {:>12.2} {:>12.2}", figures[0], figures[1]);
    }
}

criterion_group!(benches, pages);
criterion_main!(benches);

//! Statistics against a brute-force recount.
//!
//! Random sequences of creates, edits, deletes, flags and approvals (with
//! pre-moderation, so pending comments come and go) run while the
//! aggregator is interrupted at random: batches read and dropped, batches
//! whose effects were computed but never committed, consumers restarted
//! from their durable position, and a second, stale consumer racing the
//! first. Once the aggregator catches up, every product's counts (overall
//! and per language), the leaderboards and the global aggregates must equal
//! a recount of the comments, and `reconcile` must find no drift.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{fixture, new_comment};
use proptest::prelude::*;
use rave_comments::{CommentPatch, Comments, Moderation};
use rave_engine::{Engine, EngineFeed};
use rave_store::{ChangeBatch, ChangeFeed};

const PRODUCTS: [&str; 3] = ["a", "b", "c"];
const LANGUAGES: [&str; 3] = ["en", "de", "fr"];
const AUTHORS: [&str; 4] = ["ann", "bob", "cy", "dee"];

#[derive(Debug, Clone)]
enum Op {
    Create {
        product: usize,
        language: usize,
        rating: i64,
        author: usize,
    },
    Edit {
        nth: usize,
        language: Option<usize>,
        rating: Option<i64>,
    },
    Delete {
        nth: usize,
    },
    Flag {
        nth: usize,
    },
    Approve {
        nth: usize,
    },
    /// How the aggregator runs (or fails) at this point.
    Aggregate(Fault),
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Applies one batch normally.
    None,
    /// Reads a batch and crashes before computing anything.
    CrashAfterRead,
    /// Computes the effects and crashes before committing them.
    CrashBeforeCommit,
    /// Restarts the consumer from its durable position.
    Restart,
    /// A second consumer with a stale position tries the same batch.
    StaleDuplicate,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..3usize, 1..=5i64, 0..4usize)
            .prop_map(|(product, language, rating, author)| Op::Create { product, language, rating, author }),
        2 => (any::<usize>(), proptest::option::of(0..3usize), proptest::option::of(1..=5i64))
            .prop_map(|(nth, language, rating)| Op::Edit { nth, language, rating }),
        1 => any::<usize>().prop_map(|nth| Op::Delete { nth }),
        1 => any::<usize>().prop_map(|nth| Op::Flag { nth }),
        3 => any::<usize>().prop_map(|nth| Op::Approve { nth }),
        3 => prop_oneof![
            Just(Fault::None),
            Just(Fault::CrashAfterRead),
            Just(Fault::CrashBeforeCommit),
            Just(Fault::Restart),
            Just(Fault::StaleDuplicate),
        ].prop_map(Op::Aggregate),
    ]
}

async fn feed(engine: &Engine) -> EngineFeed {
    EngineFeed::open(engine.clone(), "rave", "stats")
        .await
        .unwrap()
}

async fn catch_up(comments: &Comments<Engine>, feed: &EngineFeed) {
    loop {
        comments
            .aggregate_once(feed, Duration::from_millis(1))
            .await
            .unwrap();
        if feed.lag().await.unwrap().events == 0 {
            return;
        }
    }
}

/// (product, language or `None` for all) → comments per rating.
type StatsRecount = BTreeMap<(String, Option<String>), [u64; 5]>;

/// Counts recounted from every comment, and comments per author.
fn recount(all: &[rave_comments::Comment]) -> (StatsRecount, BTreeMap<String, u64>) {
    let mut stats = StatsRecount::new();
    let mut authors: BTreeMap<String, u64> = BTreeMap::new();
    for c in all.iter().filter(|c| c.status.is_visible()) {
        let rating = usize::from(c.rating.get()) - 1;
        stats.entry((c.product_id.to_string(), None)).or_default()[rating] += 1;
        stats
            .entry((c.product_id.to_string(), Some(c.language.to_string())))
            .or_default()[rating] += 1;
        *authors.entry(c.author.clone()).or_default() += 1;
    }
    (stats, authors)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn statistics_equal_a_recount_despite_crashes(ops in proptest::collection::vec(op(), 1..50)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Pre).await;
            let engine = f.comments.store().clone();
            let mut consumer = feed(&engine).await;
            let mut ids: Vec<String> = Vec::new();
            let pick = |ids: &Vec<String>, nth: usize| (!ids.is_empty()).then(|| ids[nth % ids.len()].clone());
            for op in &ops {
                match op {
                    Op::Create { product, language, rating, author } => {
                        let mut new = new_comment(LANGUAGES[*language], *rating, "text");
                        new.author = AUTHORS[*author].into();
                        ids.push(f.comments.create(PRODUCTS[*product], new, None).await.unwrap().comment.id);
                    }
                    Op::Edit { nth, language, rating } => {
                        if let Some(id) = pick(&ids, *nth) {
                            let patch = CommentPatch {
                                language: language.map(|l| LANGUAGES[l].to_owned()),
                                rating: *rating,
                                ..CommentPatch::default()
                            };
                            f.comments.edit(&id, &patch).await.unwrap();
                        }
                    }
                    Op::Delete { nth } => {
                        if let Some(id) = pick(&ids, *nth) {
                            f.comments.delete(&id).await.unwrap();
                            ids.retain(|i| *i != id);
                        }
                    }
                    Op::Flag { nth } => {
                        if let Some(id) = pick(&ids, *nth) {
                            f.comments.flag(&id).await.unwrap();
                        }
                    }
                    Op::Approve { nth } => {
                        if let Some(id) = pick(&ids, *nth) {
                            f.comments.approve(&id).await.unwrap();
                        }
                    }
                    Op::Aggregate(Fault::None) => {
                        f.comments.aggregate_once(&consumer, Duration::from_millis(1)).await.unwrap();
                    }
                    Op::Aggregate(Fault::CrashAfterRead) => {
                        drop(consumer.next(500, Duration::from_millis(1)).await.unwrap());
                        consumer = feed(&engine).await;
                    }
                    Op::Aggregate(Fault::CrashBeforeCommit) => {
                        // The effects are computed by reading, never written.
                        if let Some(batch) = consumer.next(500, Duration::from_millis(1)).await.unwrap() {
                            prop_assert!(!batch.records().is_empty());
                        }
                        consumer = feed(&engine).await;
                    }
                    Op::Aggregate(Fault::Restart) => {
                        consumer = feed(&engine).await;
                        f.comments.aggregate_once(&consumer, Duration::from_millis(1)).await.unwrap();
                    }
                    Op::Aggregate(Fault::StaleDuplicate) => {
                        // Two consumers at the same position: one commits,
                        // the other's identical batch must be refused.
                        let stale = feed(&engine).await;
                        f.comments.aggregate_once(&consumer, Duration::from_millis(1)).await.unwrap();
                        f.comments.aggregate_once(&stale, Duration::from_millis(1)).await.unwrap();
                    }
                }
            }
            catch_up(&f.comments, &consumer).await;

            let mut all = Vec::new();
            let mut start = None;
            loop {
                let (page, next) = f.comments.export_page(0, 1, start).await.unwrap();
                all.extend(page);
                match next { Some(n) => start = Some(n), None => break }
            }
            let (expected, authors) = recount(&all);
            for product in PRODUCTS {
                for language in [None, Some("en"), Some("de"), Some("fr")] {
                    let stats = f.comments.product_stats(product, language).await.unwrap();
                    let want = expected.get(&(product.to_owned(), language.map(str::to_owned))).copied().unwrap_or_default();
                    prop_assert_eq!(stats.counts.0, want, "{} {:?}", product, language);
                    prop_assert_eq!(stats.total, want.iter().sum::<u64>());
                }
            }
            for language in [None, Some("en"), Some("de"), Some("fr")] {
                let board = f.comments.leaderboard(100, language).await.unwrap();
                let mut want: Vec<(String, u64)> = expected
                    .iter()
                    .filter(|((_, l), c)| l.as_deref() == language && c[4] > 0)
                    .map(|((p, _), c)| (p.clone(), c[4]))
                    .collect();
                want.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                let mut got: Vec<(String, u64)> = board.into_iter().map(|l| (l.product_id, l.five_star)).collect();
                prop_assert!(got.windows(2).all(|w| w[0].1 >= w[1].1), "most 5-star first");
                got.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                prop_assert_eq!(got, want);
            }
            let global = f.comments.global_stats().await.unwrap();
            let visible = all.iter().filter(|c| c.status.is_visible()).count() as u64;
            prop_assert_eq!(global.comments_total, visible);
            prop_assert_eq!(global.products_total, expected.keys().filter(|(_, l)| l.is_none()).count() as u64);
            prop_assert_eq!(global.authors_total, authors.len() as u64);
            let mut buckets = [0u64; 10];
            for count in authors.values() {
                buckets[(*count).min(10) as usize - 1] += 1;
            }
            prop_assert_eq!(global.authors_by_comment_count, buckets);
            let report = f.comments.reconcile(3, false, &|_| {}).await.unwrap();
            prop_assert!(report.drift.is_empty(), "drift: {:?}", report.drift);
            prop_assert_eq!(report.comments_counted, visible);
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn reconcile_finds_and_repairs_drift() {
    let f = fixture(Moderation::Off).await;
    let engine = f.comments.store().clone();
    let consumer = feed(&engine).await;
    for (product, rating) in [("x", 5), ("x", 5), ("y", 1)] {
        f.comments
            .create(product, new_comment("en", rating, "t"), None)
            .await
            .unwrap();
    }
    catch_up(&f.comments, &consumer).await;
    assert_eq!(
        f.comments.leaderboard(10, None).await.unwrap()[0].product_id,
        "x"
    );
    // Damage the statistics behind the aggregator's back.
    use rave_store::{PutItemInput, ReturnValues, Store, item};
    engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: item! {"PK" => "PRODUCT#x", "SK" => "S", "product_id" => "x", "count_5" => 99i64, "count_total" => 99i64},
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert_eq!(report.drift.len(), 1);
    assert_eq!(report.drift[0].key, "PRODUCT#x/S");
    let report = f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    assert!(report.fixed);
    let stats = f.comments.product_stats("x", None).await.unwrap();
    assert_eq!(stats.counts.0, [0, 0, 0, 0, 2]);
    assert!(
        f.comments
            .reconcile(2, false, &|_| {})
            .await
            .unwrap()
            .drift
            .is_empty()
    );
    // The product is back on the leaderboard with its true count.
    assert_eq!(
        f.comments.leaderboard(10, None).await.unwrap()[0].five_star,
        2
    );
}

#[tokio::test]
async fn fresh_statistics_let_the_planner_skip_empty_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let consumer = std::sync::Arc::new(feed_on(&engine).await);
    let fresh = {
        let engine = engine.clone();
        move || {
            engine.consumer_position("rave", "stats").ok().flatten()
                == Some(engine.latest_sequence())
        }
    };
    let comments = Comments::new(
        engine.clone(),
        rave_comments::Config {
            table: "rave".into(),
            cursor_key: rave_comments::CursorKey::new([1; 32]),
            moderation: Moderation::Off,
        },
    )
    .with_stats_freshness(fresh);
    comments.ensure_table().await.unwrap();
    comments
        .create("p", new_comment("en", 5, "t"), None)
        .await
        .unwrap();
    let request = rave_comments::ListRequest {
        product: "p",
        filter: rave_comments::Filter {
            language: None,
            ratings: rave_comments::RatingSet::from_ratings(
                [1, 5].map(|r| rave_comments::Rating::new(r).unwrap()),
            ),
        },
        limit: 20,
        cursor: None,
    };
    // Before the aggregator runs, the comment must still show (no skipping).
    let page = comments.list(&request).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert!(page.plan.skipped.is_empty());
    catch_up(&comments, &consumer).await;
    let page = comments.list(&request).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(
        page.plan.skipped.len(),
        1,
        "rating 1 has no comments: {:?}",
        page.plan
    );
}

async fn feed_on(engine: &Engine) -> EngineFeed {
    // The table must exist before a consumer registers on its stream.
    let _ = rave_store::Store::create_table(engine, rave_comments::keys::table_definition("rave"))
        .await;
    feed(engine).await
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The shared statistics oracle (the one the DynamoDB backend runs too).
    #[test]
    fn shared_statistics_oracle_on_the_engine(ops in rave_conformance::statistics::ops()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Pre).await;
            let engine = f.comments.store().clone();
            rave_conformance::statistics::check_statistics(&f.comments, || feed(&engine), ops).await
        })?;
    }
}

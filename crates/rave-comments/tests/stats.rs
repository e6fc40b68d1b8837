//! Statistics on the embedded engine: the shared statistics oracle (random
//! operations with consumer crashes, restarts and a racing consumer, then a
//! recount; rave-conformance), reconcile repairing drift, and the planner
//! trusting zero counts only when the statistics are current.

mod common;

use std::time::Duration;

use common::{fixture, new_comment};
use proptest::prelude::*;
use rave_comments::{Comments, Moderation};
use rave_conformance::shards::ShardFeed;
use rave_engine::{Engine, EngineFeed};
use rave_store::ChangeFeed;

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

#[tokio::test]
async fn reconcile_finds_and_repairs_drift() {
    let f = fixture(Moderation::Off).await;
    let engine = f.engine.clone();
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
    let _ = rave_store::Store::create_table(engine, rave_comments::table_definition("rave")).await;
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
            let engine = f.engine.clone();
            rave_conformance::statistics::check_statistics(&f.comments, || feed(&engine), ops).await
        })?;
    }

    /// The sharded oracle: three aggregators applying four shards at once,
    /// with crashes and lost races, and the counts still exact.
    #[test]
    fn concurrent_aggregators_over_shards_keep_counts_exact(ops in rave_conformance::statistics::sharded_ops()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Pre).await;
            let engine = f.engine.clone();
            let open = |shard| {
                let engine = engine.clone();
                async move {
                    let consumer = EngineFeed::open(engine, "rave", &format!("stats-{shard}"))
                        .await
                        .unwrap();
                    ShardFeed::new(consumer, shard, rave_conformance::statistics::SHARDS)
                }
            };
            rave_conformance::statistics::check_statistics_sharded(&f.comments, open, ops).await
        })?;
    }
}

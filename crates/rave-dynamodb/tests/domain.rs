//! The domain's pagination oracle on DynamoDB Local: the same property the
//! engine passes (rave-conformance), fewer cases since each costs a table
//! and many HTTP round trips.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
use proptest::prelude::*;
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_conformance::groups::{check_group_walk, group_walk};
use rave_conformance::pagination::{check_walk, walk};
use rave_conformance::shards::ShardFeed;
use rave_conformance::statistics::drain;
use rave_dynamodb::DynamoStore;

static TABLES: AtomicUsize = AtomicUsize::new(0);

fn endpoint() -> String {
    std::env::var("RAVE_DYNAMODB_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn walking_cursors_on_dynamodb_returns_each_match_once_in_order(walk in walk()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let table = format!("walk-{}-{}", std::process::id(), TABLES.fetch_add(1, Ordering::Relaxed));
            let comments = Comments::new(
                DynamoStore::local(&endpoint()),
                Config { table, cursor_key: CursorKey::new([4; 32]), moderation: Moderation::Off },
            );
            comments.ensure_table().await.unwrap();
            check_walk(&comments, walk).await
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The product families' oracle: a group's walk with moves between
    /// groups, then its statistics from DynamoDB Streams and a reconcile.
    #[test]
    fn walking_a_group_on_dynamodb_returns_each_match_once_and_counts_it(walk in group_walk()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let table = format!("group-{}-{}", std::process::id(), TABLES.fetch_add(1, Ordering::Relaxed));
            let store = DynamoStore::local(&endpoint());
            let comments = Comments::new(
                store.clone(),
                Config { table: table.clone(), cursor_key: CursorKey::new([4; 32]), moderation: Moderation::Off },
            );
            comments.ensure_table().await.unwrap();
            let feed = store.feed(&table, "statistics", rave_comments::aggregator_positions()).await.unwrap();
            let aggregate = || drain(&comments, &feed).boxed();
            check_group_walk(&comments, walk, &aggregate).await
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Statistics from DynamoDB Streams equal a recount, despite consumer
    /// restarts and a second consumer racing the first.
    #[test]
    fn statistics_on_dynamodb_streams_equal_a_recount(ops in rave_conformance::statistics::ops()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let table = format!("stats-{}-{}", std::process::id(), TABLES.fetch_add(1, Ordering::Relaxed));
            let store = DynamoStore::local(&endpoint());
            let comments = Comments::new(
                store.clone(),
                Config { table: table.clone(), cursor_key: CursorKey::new([4; 32]), moderation: Moderation::Pre },
            );
            comments.ensure_table().await.unwrap();
            let open = || {
                let (store, table) = (store.clone(), table.clone());
                async move { store.feed(&table, "statistics", rave_comments::aggregator_positions()).await.unwrap() }
            };
            rave_conformance::statistics::check_statistics(&comments, open, ops).await
        })?;
    }

    /// The sharded oracle on DynamoDB Streams: three aggregators applying
    /// four shards at once (each a consumer of the stream with positions of
    /// its own) keep the counts exact.
    #[test]
    fn concurrent_aggregators_on_dynamodb_keep_counts_exact(ops in rave_conformance::statistics::sharded_ops()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let table = format!("sharded-{}-{}", std::process::id(), TABLES.fetch_add(1, Ordering::Relaxed));
            let store = DynamoStore::local(&endpoint());
            let comments = Comments::new(
                store.clone(),
                Config { table: table.clone(), cursor_key: CursorKey::new([4; 32]), moderation: Moderation::Pre },
            );
            comments.ensure_table().await.unwrap();
            let open = |shard| {
                let (store, table) = (store.clone(), table.clone());
                async move {
                    let consumer = store
                        .feed(&table, &format!("statistics-{shard}"), rave_comments::aggregator_positions())
                        .await
                        .unwrap();
                    ShardFeed::new(consumer, shard, rave_conformance::statistics::SHARDS)
                }
            };
            rave_conformance::statistics::check_statistics_sharded(&comments, open, ops).await
        })?;
    }
}

/// Erasing an author on DynamoDB Local: nothing of them remains, and the
/// statistics from DynamoDB Streams agree with a recount.
#[tokio::test]
async fn erasing_an_author_on_dynamodb_leaves_nothing_of_them() {
    let table = format!(
        "erase-{}-{}",
        std::process::id(),
        TABLES.fetch_add(1, Ordering::Relaxed)
    );
    let store = DynamoStore::local(&endpoint());
    let comments = Comments::new(
        store.clone(),
        Config {
            table: table.clone(),
            cursor_key: CursorKey::new([4; 32]),
            moderation: Moderation::Off,
        },
    );
    comments.ensure_table().await.unwrap();
    let feed = store
        .feed(&table, "statistics", rave_comments::aggregator_positions())
        .await
        .unwrap();
    rave_conformance::erasure::check_erasure(&comments, &feed).await;
}

//! Statistics on the embedded engine: the shared statistics oracle (random
//! operations with consumer crashes, restarts and a racing consumer, then a
//! recount; rave-conformance), a catch-up in batches each worked out while
//! the last commits, reconcile repairing drift, and the planner trusting
//! zero counts only when the statistics are current.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{catch_up, fixture, new_comment, stats_feed as feed, walk};
use proptest::prelude::*;
use rave_comments::{Comments, Moderation};
use rave_conformance::shards::ShardFeed;
use rave_engine::{Engine, EngineFeed};
use rave_store::StoreError;

#[tokio::test]
async fn a_reply_changes_no_count() {
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let comment = f
        .comments
        .create("x", new_comment("en", 4, "t"), None)
        .await
        .unwrap()
        .comment;
    catch_up(&f.comments, &consumer).await;
    async fn counts(comments: &Comments<Engine>) -> impl PartialEq + std::fmt::Debug {
        (
            comments.product_stats("x", None).await.unwrap(),
            comments.product_stats("x", Some("en")).await.unwrap(),
            comments.global_stats().await.unwrap(),
        )
    }
    let before = counts(&f.comments).await;
    f.comments.set_reply(&comment.id, "Thanks").await.unwrap();
    catch_up(&f.comments, &consumer).await;
    assert_eq!(counts(&f.comments).await, before);
    f.comments.delete_reply(&comment.id).await.unwrap();
    catch_up(&f.comments, &consumer).await;
    assert_eq!(counts(&f.comments).await, before);
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
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
async fn votes_are_counted_replaced_withdrawn_and_reconciled() {
    use rave_comments::{CommentsError, VoteCounts};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let comment = f
        .comments
        .create("x", new_comment("en", 4, "t"), None)
        .await
        .unwrap()
        .comment;
    let votes = |helpful, unhelpful| VoteCounts { helpful, unhelpful };
    let counted = || async { f.comments.get(&comment.id).await.unwrap().votes };
    f.comments.vote(&comment.id, "v1", true).await.unwrap();
    f.comments.vote(&comment.id, "v2", false).await.unwrap();
    f.comments.vote(&comment.id, "v3", true).await.unwrap();
    assert_eq!(counted().await, votes(0, 0), "counted by the aggregator");
    catch_up(&f.comments, &consumer).await;
    assert_eq!(counted().await, votes(2, 1));
    // A later vote replaces the voter's earlier one; a repeat changes nothing.
    f.comments.vote(&comment.id, "v1", false).await.unwrap();
    f.comments.vote(&comment.id, "v3", true).await.unwrap();
    f.comments.withdraw_vote(&comment.id, "v2").await.unwrap();
    f.comments
        .withdraw_vote(&comment.id, "never-voted")
        .await
        .unwrap();
    catch_up(&f.comments, &consumer).await;
    assert_eq!(counted().await, votes(1, 1));
    // Listings show the counts; an edit keeps them.
    let listed = f
        .comments
        .list(&rave_comments::ListRequest {
            product: "x",
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.items[0].votes, votes(1, 1));
    let patch = rave_comments::CommentPatch {
        rating: Some(2),
        ..Default::default()
    };
    assert_eq!(
        f.comments.edit(&comment.id, &patch).await.unwrap().votes,
        votes(1, 1)
    );
    // Bad voters are refused; a pending, missing or malformed comment takes no vote.
    assert!(matches!(
        f.comments.vote(&comment.id, "a b", true).await,
        Err(CommentsError::Invalid { field: "voter", .. })
    ));
    assert!(matches!(
        f.comments
            .vote("01JD3X0000000000000000000A", "v1", true)
            .await,
        Err(CommentsError::NotFound)
    ));
    assert!(matches!(
        f.comments.withdraw_vote("not-an-id", "v1").await,
        Err(CommentsError::NotFound)
    ));
    catch_up(&f.comments, &consumer).await;
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
    // Counts damaged behind the aggregator's back are found and repaired.
    use rave_store::{PutItemInput, ReturnValues, Store};
    let mut damaged = f
        .engine
        .get_item(rave_store::GetItemInput {
            table: "rave".into(),
            key: rave_store::item! {"PK" => format!("COMMENT#{}", comment.id), "SK" => format!("COMMENT#{}", comment.id)},
            consistent_read: true,
        })
        .await
        .unwrap()
        .item
        .unwrap();
    damaged.insert("helpful_votes".into(), rave_store::AttributeValue::n(7i64));
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: damaged,
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert_eq!(report.drift.len(), 1, "{report:?}");
    assert!(report.drift[0].key.starts_with("COMMENT#"));
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    assert_eq!(counted().await, votes(1, 1));
    catch_up(&f.comments, &consumer).await;
    assert!(
        f.comments
            .reconcile(2, false, &|_| {})
            .await
            .unwrap()
            .drift
            .is_empty()
    );
    // Deleting the comment deletes its votes: a recount finds none left.
    f.comments.delete(&comment.id).await.unwrap();
    catch_up(&f.comments, &consumer).await;
    let report = f.comments.reconcile(1, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
    let left = f
        .engine
        .query(rave_store::QueryInput::new(
            "rave",
            None,
            rave_store::KeyCondition::partition("PK", format!("COMMENT#{}", comment.id)),
        ))
        .await
        .unwrap();
    assert!(left.items.is_empty(), "{:?}", left.items);
    // A vote left behind by a delete that stopped half-way counts for no
    // comment: a recount reports it, and a repair deletes it.
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: rave_store::item! {
                "PK" => format!("COMMENT#{}", comment.id),
                "SK" => "VOTE#stray",
                "comment_id" => comment.id.clone(),
                "voter" => "stray",
                "helpful" => true,
            },
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert_eq!(report.drift.len(), 1, "{report:?}");
    assert_eq!(
        report.drift[0].key,
        format!("COMMENT#{}/VOTE#stray", comment.id)
    );
    assert_eq!(report.drift[0].expected, None);
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
}

/// The layout before leaderboard shards and partial totals: one `LEADERS`
/// partition and one `AGGREGATES/TOTALS` item, as an older rave wrote them.
async fn rewrite_in_the_old_layout(engine: &Engine) {
    use rave_store::{DeleteItemInput, PutItemInput, ReturnValues, Store, item};
    for slot in 0..64 {
        engine
            .delete_item(DeleteItemInput {
                table: "rave".into(),
                key: item! {"PK" => format!("AGGREGATES#{slot}"), "SK" => "TOTALS"},
                condition: None,
                return_values: ReturnValues::None,
            })
            .await
            .unwrap();
    }
    let old = [
        item! {"PK" => "PRODUCT#x", "SK" => "S", "product_id" => "x", "count_1" => 0i64, "count_2" => 0i64, "count_3" => 0i64, "count_4" => 0i64, "count_5" => 2i64, "count_total" => 2i64, "GSIPK" => "LEADERS", "GSISK" => "000000000002"},
        item! {"PK" => "PRODUCT#x", "SK" => "S#en", "product_id" => "x", "language" => "en", "count_1" => 0i64, "count_2" => 0i64, "count_3" => 0i64, "count_4" => 0i64, "count_5" => 2i64, "count_total" => 2i64, "GSIPK" => "LEADERS#en", "GSISK" => "000000000002"},
        item! {"PK" => "AGGREGATES", "SK" => "TOTALS", "comments_total" => 3i64, "products_total" => 2i64, "authors_total" => 1i64,
        "authors_1" => 0i64, "authors_2" => 0i64, "authors_3" => 1i64, "authors_4" => 0i64, "authors_5" => 0i64,
        "authors_6" => 0i64, "authors_7" => 0i64, "authors_8" => 0i64, "authors_9" => 0i64, "authors_10" => 0i64},
    ];
    for item in old {
        engine
            .put_item(PutItemInput {
                table: "rave".into(),
                item,
                condition: None,
                return_values: ReturnValues::None,
            })
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn reconcile_fix_moves_the_old_layout_to_shards_and_partial_totals() {
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    for (product, rating) in [("x", 5), ("x", 5), ("y", 1)] {
        f.comments
            .create(product, new_comment("en", rating, "t"), None)
            .await
            .unwrap();
    }
    catch_up(&f.comments, &consumer).await;
    rewrite_in_the_old_layout(&f.engine).await;
    // Readers see the old layout, and the aggregator builds on it.
    let leaders = |language| {
        let comments = &f.comments;
        async move {
            comments
                .leaderboard(10, language)
                .await
                .unwrap()
                .into_iter()
                .map(|l| (l.product_id, l.five_star))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(leaders(None).await, [("x".to_owned(), 2)]);
    assert_eq!(f.comments.global_stats().await.unwrap().comments_total, 3);
    f.comments
        .create("z", new_comment("en", 5, "t"), None)
        .await
        .unwrap();
    catch_up(&f.comments, &consumer).await;
    let want = [("x".to_owned(), 2), ("z".to_owned(), 1)];
    assert_eq!(leaders(None).await, want);
    assert_eq!(leaders(Some("en")).await, want);
    let before = f.comments.global_stats().await.unwrap();
    assert_eq!(
        (
            before.comments_total,
            before.products_total,
            before.authors_total
        ),
        (4, 3, 1)
    );
    assert_eq!(before.authors_by_comment_count[3], 1);

    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(
        report
            .drift
            .iter()
            .all(|d| d.key.starts_with("AGGREGATES") || d.key.starts_with("PRODUCT#x/"))
    );
    // The partials the last commit wrote are folded into partial 0 too.
    let drifted: Vec<&str> = report
        .drift
        .iter()
        .map(|d| d.key.as_str())
        .filter(|k| !k.starts_with("AGGREGATES#") || *k == "AGGREGATES#0/TOTALS")
        .collect();
    assert_eq!(
        drifted,
        [
            "AGGREGATES#0/TOTALS",
            "AGGREGATES/TOTALS",
            "PRODUCT#x/S",
            "PRODUCT#x/S#en"
        ]
    );
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    let after = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(after.drift.is_empty(), "{:?}", after.drift);
    assert_eq!(f.comments.global_stats().await.unwrap(), before);
    assert_eq!(leaders(None).await, want);
    assert_eq!(leaders(Some("en")).await, want);
}

#[tokio::test]
async fn reconcile_repairs_drifted_partial_totals() {
    use rave_store::{PutItemInput, ReturnValues, Store, item};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    f.comments
        .create("x", new_comment("en", 4, "t"), None)
        .await
        .unwrap();
    catch_up(&f.comments, &consumer).await;
    let stats = f.comments.global_stats().await.unwrap();
    // A partial that no commit wrote: the sum is off by 5 comments.
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: item! {"PK" => "AGGREGATES#63", "SK" => "TOTALS", "comments_total" => 5i64, "products_total" => 0i64, "authors_total" => 0i64,
                "authors_1" => 0i64, "authors_2" => 0i64, "authors_3" => 0i64, "authors_4" => 0i64, "authors_5" => 0i64,
                "authors_6" => 0i64, "authors_7" => 0i64, "authors_8" => 0i64, "authors_9" => 0i64, "authors_10" => 0i64},
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    assert_eq!(f.comments.global_stats().await.unwrap().comments_total, 6);
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.iter().any(|d| d.key == "AGGREGATES#63/TOTALS"));
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    assert_eq!(f.comments.global_stats().await.unwrap(), stats);
    assert!(
        f.comments
            .reconcile(2, false, &|_| {})
            .await
            .unwrap()
            .drift
            .is_empty()
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
        sort: Default::default(),
        product: "p",
        filter: rave_comments::Filter {
            language: None,
            ratings: rave_comments::RatingSet::from_ratings(
                [1, 5].map(|r| rave_comments::Rating::new(r).unwrap()),
            ),
            verified: false,
            incentivized: None,
            has_media: false,
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

/// A language's statistics item goes with its last comment and comes back
/// with the next: the batch that brings it back is worked out while the
/// removal commits, from the removal, not from the item read before it.
#[tokio::test]
async fn a_catch_up_works_out_a_statistics_item_back_from_its_removal() {
    use rave_conformance::statistics::Op;
    let create = || Op::Create {
        product: 0,
        language: 0,
        rating: 4,
        author: 0,
        verified: false,
        quality: None,
        fit: None,
        photos: 0,
    };
    // The second comment waits for moderation while the first goes, so
    // the stream holds the removal and then the approval that counts again.
    let ops = vec![
        create(),
        Op::Approve { nth: 0 },
        create(),
        Op::Delete { nth: 0 },
        Op::Approve { nth: 0 },
        Op::CatchUp,
    ];
    let f = fixture(Moderation::Pre).await;
    let refused = Arc::new(AtomicUsize::new(0));
    let open = || async {
        WatchedFeed {
            refused: refused.clone(),
            ..WatchedFeed::new(feed(&f.engine).await, ONE_CHANGE_A_BATCH)
        }
    };
    rave_conformance::statistics::check_statistics(&f.comments, open, ops)
        .await
        .unwrap();
    assert_eq!(refused.load(Ordering::Relaxed), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A catch-up works out each batch while the one before commits, from
    /// the statistics as that commit leaves them: the counts come out exact
    /// and, with no other consumer, no commit is refused.
    #[test]
    fn a_catch_up_in_small_batches_is_exact_and_never_refused(ops in rave_conformance::statistics::catch_up_ops()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let refused = Arc::new(AtomicUsize::new(0));
        runtime.block_on(async {
            let f = fixture(Moderation::Pre).await;
            let engine = f.engine.clone();
            let open = || async {
                WatchedFeed {
                    refused: refused.clone(),
                    ..WatchedFeed::new(feed(&engine).await, ONE_CHANGE_A_BATCH)
                }
            };
            rave_conformance::statistics::check_statistics(&f.comments, open, ops).await
        })?;
        prop_assert_eq!(refused.load(Ordering::Relaxed), 0);
    }

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

/// Idempotency records expire through the store's Time to Live; their
/// removals reach the aggregator as stream records and change no count.
#[tokio::test]
async fn expired_idempotency_records_are_swept_and_the_statistics_stay_exact() {
    use rave_engine::{Clock, EngineOptions, ManualClock};
    let dir = tempfile::tempdir().unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let clock = ManualClock::starting_at(now_ms);
    let engine = Engine::open_with(
        dir.path(),
        EngineOptions {
            clock: Clock::Manual(clock.clone()),
            // Only the test sweeps.
            ttl_sweep_interval: Duration::from_secs(24 * 60 * 60),
            ..EngineOptions::default()
        },
    )
    .unwrap();
    let comments = Comments::new(
        engine.clone(),
        rave_comments::Config {
            table: "rave".into(),
            cursor_key: rave_comments::CursorKey::new([2; 32]),
            moderation: Moderation::Off,
        },
    )
    .with_idempotency_ttl(Duration::from_secs(3600));
    comments.ensure_table().await.unwrap();
    let consumer = feed(&engine).await;
    let mut ids = Vec::new();
    for (key, rating) in [("a", 5), ("b", 4), ("c", 5)] {
        let created = comments
            .create("p", new_comment("en", rating, key), Some(key))
            .await
            .unwrap();
        ids.push(created.comment.id);
    }
    catch_up(&comments, &consumer).await;
    let before = (
        comments.product_stats("p", None).await.unwrap(),
        comments.global_stats().await.unwrap(),
    );

    assert_eq!(
        engine.sweep_expired().await.unwrap(),
        0,
        "nothing expired yet"
    );
    clock.advance(Duration::from_secs(2 * 3600));
    assert_eq!(
        engine.sweep_expired().await.unwrap(),
        3,
        "the three records"
    );
    catch_up(&comments, &consumer).await;
    let after = (
        comments.product_stats("p", None).await.unwrap(),
        comments.global_stats().await.unwrap(),
    );
    assert_eq!(after, before);
    assert_eq!(before.0.total, 3);
    let report = comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{:?}", report.drift);

    // The key is forgotten: the same request now makes a new comment.
    let again = comments
        .create("p", new_comment("en", 5, "a"), Some("a"))
        .await
        .unwrap();
    assert!(!again.replayed);
    assert!(!ids.contains(&again.comment.id));
}

#[tokio::test]
async fn a_products_revision_follows_every_visible_change_and_never_repeats() {
    use rave_comments::{CommentPatch, ProductRecord};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let overview = f.comments.product_overview("p").await.unwrap();
    assert_eq!(overview.overall.total, 0);
    assert_eq!(overview.name(), "p");
    let mut seen = vec![overview.revision.clone()];
    let created = f
        .comments
        .create("p", new_comment("en", 4, "first"), None)
        .await
        .unwrap();
    let id = created.comment.id.clone();
    catch_up(&f.comments, &consumer).await;
    let overview = f.comments.product_overview("p").await.unwrap();
    assert_eq!(overview.overall.total, 1);
    assert_eq!(overview.overall.average(), Some(4.0));
    assert_eq!(overview.languages.len(), 1);
    assert!(!seen.contains(&overview.revision));
    seen.push(overview.revision.clone());

    // A title edit changes no count, yet the page shows it.
    f.comments
        .edit(
            &id,
            &CommentPatch {
                title: Some("edited".into()),
                ..CommentPatch::default()
            },
        )
        .await
        .unwrap();
    catch_up(&f.comments, &consumer).await;
    let overview = f.comments.product_overview("p").await.unwrap();
    assert!(!seen.contains(&overview.revision), "a title edit");
    seen.push(overview.revision.clone());

    // The record the page shows.
    f.comments
        .put_product(
            "p",
            ProductRecord {
                name: "Kettle".into(),
                ..ProductRecord::default()
            },
        )
        .await
        .unwrap();
    let overview = f.comments.product_overview("p").await.unwrap();
    assert_eq!(overview.name(), "Kettle");
    assert!(!seen.contains(&overview.revision), "a new record");
    assert_eq!(
        f.comments.product_revision("p").await.unwrap(),
        overview.revision,
        "the cheap read agrees"
    );
    seen.push(overview.revision.clone());

    // The last comment goes: the counts are zero, the revision still moves
    // on, and a recount sees nothing wrong with the item kept for it.
    f.comments.delete(&id).await.unwrap();
    catch_up(&f.comments, &consumer).await;
    let overview = f.comments.product_overview("p").await.unwrap();
    assert_eq!(overview.overall.total, 0);
    assert!(overview.languages.is_empty());
    assert!(!seen.contains(&overview.revision), "the last delete");
    assert_eq!(
        f.comments.product_revision("p").await.unwrap(),
        overview.revision
    );
    seen.push(overview.revision.clone());
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{:?}", report.drift);

    f.comments
        .create("p", new_comment("en", 2, "again"), None)
        .await
        .unwrap();
    catch_up(&f.comments, &consumer).await;
    let overview = f.comments.product_overview("p").await.unwrap();
    assert!(!seen.contains(&overview.revision), "a comment after none");
}

/// The `helpful` order follows the counts the aggregator writes: most
/// helpful first, newest first among equal scores (no votes score 0).
#[tokio::test]
async fn helpful_lists_by_the_counted_votes() {
    use rave_comments::{ListRequest, Sort};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let mut ids = Vec::new();
    for rating in [5, 1, 3, 5] {
        let created = f
            .comments
            .create("h", new_comment("en", rating, "t"), None)
            .await
            .unwrap();
        ids.push(created.comment.id);
    }
    // ids[1]: 2 of 2 helpful; ids[2]: 1 of 1; ids[3]: 1 of 2; ids[0]: none.
    for (id, voter, helpful) in [
        (1, "a", true),
        (1, "b", true),
        (2, "a", true),
        (3, "a", true),
        (3, "b", false),
    ] {
        f.comments.vote(&ids[id], voter, helpful).await.unwrap();
    }
    catch_up(&f.comments, &consumer).await;
    let f = &f;
    let walk = |limit| async move {
        let mut order = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = f
                .comments
                .list(&ListRequest {
                    product: "h",
                    sort: Sort::Helpful,
                    limit,
                    cursor: cursor.as_deref(),
                    ..Default::default()
                })
                .await
                .unwrap();
            order.extend(page.items.into_iter().map(|c| c.id));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return order,
            }
        }
    };
    let expected = vec![
        ids[1].clone(),
        ids[2].clone(),
        ids[3].clone(),
        ids[0].clone(),
    ];
    assert_eq!(walk(10).await, expected);
    assert_eq!(
        walk(1).await,
        expected,
        "page by page, through ranked cursors"
    );
}

/// Comments stored before the `helpful` sort key existed are in no
/// `helpful` index; reconcile reports them and a repair adds the key.
#[tokio::test]
async fn reconcile_backfills_a_missing_helpful_key() {
    use rave_comments::{ListRequest, Sort};
    use rave_store::{GetItemInput, PutItemInput, ReturnValues, Store};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let comment = f
        .comments
        .create("b", new_comment("en", 2, "old"), None)
        .await
        .unwrap()
        .comment;
    catch_up(&f.comments, &consumer).await;
    let key = format!("COMMENT#{}", comment.id);
    let mut old = f
        .engine
        .get_item(GetItemInput {
            table: "rave".into(),
            key: rave_store::item! {"PK" => key.clone(), "SK" => key.clone()},
            consistent_read: true,
        })
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(old.remove("HELPSK").is_some());
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: old,
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    let helpful = || async {
        f.comments
            .list(&ListRequest {
                product: "b",
                sort: Sort::Helpful,
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
            .items
            .len()
    };
    assert_eq!(helpful().await, 0, "not in the helpful indexes");
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert_eq!(report.drift.len(), 1, "{report:?}");
    assert_eq!(report.drift[0].key, format!("{key}/{key}"));
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    assert_eq!(helpful().await, 1);
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
}

/// Most helpful first, every filter (and verified): a walk of pages of 20
/// reads at most 1.3 items per item returned (1.04–1.24 here), sized by the
/// statistics, with scores spread independently of the rating.
#[tokio::test]
async fn helpful_listings_read_close_to_what_they_return() {
    use rave_comments::{Filter, Language, OrderId, Rating, RatingSet, Sort};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    for i in 0..250usize {
        let language = ["en", "de"][i % 2];
        let rating = (i % 5 + 1) as i64;
        let new = new_comment(language, rating, &format!("comment {i}"));
        let id = if i % 3 == 0 {
            let order = OrderId::parse(&format!("o-{i}")).unwrap();
            f.comments.create_verified("p", new, None, &order).await
        } else {
            f.comments.create("p", new, None).await
        }
        .unwrap()
        .comment
        .id;
        // Votes spread independently of the rating (a multiplicative hash).
        let spread = (i * 2_654_435_761) % 1_000;
        for v in 0..spread % 5 {
            let helpful = (spread / 5 + v) % 3 != 0;
            f.comments
                .vote(&id, &format!("v{v}"), helpful)
                .await
                .unwrap();
        }
    }
    catch_up(&f.comments, &consumer).await;
    let en = || Some(Language::parse("en").unwrap());
    let ratings = |r: &[i64]| RatingSet::from_ratings(r.iter().map(|r| Rating::new(*r).unwrap()));
    for verified in [false, true] {
        for (language, ratings) in [
            (None, RatingSet::default()),
            (en(), RatingSet::default()),
            (None, ratings(&[5])),
            (en(), ratings(&[1, 5])),
            (None, ratings(&[1, 2, 4])),
        ] {
            let filter = Filter {
                language,
                ratings,
                verified,
                incentivized: None,
                has_media: false,
            };
            let (read, returned) = walk(
                &f.comments,
                &filter,
                Sort::Helpful,
                20,
                usize::MAX,
                |_, _| {},
            )
            .await;
            assert!(returned > 0, "{filter:?}");
            let ratio = read as f64 / returned as f64;
            assert!(
                ratio <= 1.3,
                "{filter:?}: {read} read for {returned} returned"
            );
        }
    }
}

/// Most helpful first with votes that follow the rating (5-star comments
/// found helpful, 1-star ones not, so the top pages come from one or two
/// rating partitions) and with votes independent of it: the first 50 pages
/// of 20 read at most 1.3 items per item returned under the language and
/// rating filters, on the first page and over the walk (the executor's
/// count of items read); without a rating filter every page is one query
/// of the page and one more, at any depth.
#[tokio::test]
async fn helpful_listings_read_close_to_what_they_return_when_votes_follow_ratings() {
    use rave_comments::dataset::{Generator, Votes};
    use rave_comments::{Filter, Language, Rating, RatingSet, Sort};
    let ratings = |r: &[i64]| RatingSet::from_ratings(r.iter().map(|r| Rating::new(*r).unwrap()));
    for votes in [Votes::ByRating, Votes::Independent] {
        let f = fixture(Moderation::Off).await;
        let consumer = feed(&f.engine).await;
        let mut generator = Generator::new(1, 3_000, 11).with_votes(votes);
        for _ in 0..6 {
            let batch = (0..500)
                .map(|_| {
                    let mut comment = generator.next_comment();
                    comment.product = "p".into();
                    comment
                })
                .collect();
            f.comments.import(batch).await.unwrap();
        }
        catch_up(&f.comments, &consumer).await;
        let en = || Some(Language::parse("en").unwrap());
        for (language, ratings) in [
            (None, RatingSet::default()),
            (en(), RatingSet::default()),
            (None, ratings(&[4, 5])),
            (en(), ratings(&[1, 5])),
            (None, ratings(&[1, 2, 3])),
            (en(), ratings(&[2, 3, 4, 5])),
        ] {
            let filter = Filter {
                language,
                ratings,
                verified: false,
                incentivized: None,
                has_media: false,
            };
            let (read, returned) = walk(
                &f.comments,
                &filter,
                Sort::Helpful,
                20,
                50,
                |page_number, page| {
                    if filter.ratings.is_unfiltered() {
                        // One partition at any depth: the page and one more.
                        assert_eq!(page.plan.queries.len(), 1, "{votes:?} {filter:?}");
                        assert!(
                            page.plan.items_read <= page.items.len() + 1,
                            "{votes:?} {filter:?} page {page_number}: {} read for {}",
                            page.plan.items_read,
                            page.items.len()
                        );
                    }
                    if page_number == 1 {
                        assert!(
                            page.plan.items_read as f64 <= 1.3 * page.items.len() as f64,
                            "{votes:?} {filter:?} page 1: {} read for {}",
                            page.plan.items_read,
                            page.items.len()
                        );
                    }
                },
            )
            .await;
            let ratio = read as f64 / returned as f64;
            assert!(
                ratio <= 1.3,
                "{votes:?} {filter:?}: {read} read for {returned} returned"
            );
        }
    }
}

/// The engine's feed with commits of at most `max_effects` effects, which
/// counts how its consumer reads it and the commits it refuses, and can
/// let a rival aggregator apply the first batch before the consumer's
/// first commit.
struct WatchedFeed {
    inner: EngineFeed,
    max_effects: usize,
    /// Reads from the stored position (`next_wanted`).
    reads: AtomicUsize,
    /// Commits refused: the batch was worked out from items another commit
    /// had changed.
    refused: Arc<AtomicUsize>,
    /// The rival and its own consumer of the same position, taken by the
    /// first commit.
    rival: std::sync::Mutex<Option<(Comments<Engine>, EngineFeed)>>,
}

/// Commits of at most two effects: a batch takes one record beyond what
/// fits, so a catch-up commits each change that counts on its own, and
/// works each out while the one before commits.
const ONE_CHANGE_A_BATCH: usize = 2;

impl WatchedFeed {
    fn new(inner: EngineFeed, max_effects: usize) -> WatchedFeed {
        WatchedFeed {
            inner,
            max_effects,
            reads: AtomicUsize::new(0),
            refused: Arc::default(),
            rival: std::sync::Mutex::new(None),
        }
    }
}

impl rave_store::ChangeFeed for WatchedFeed {
    type Batch = rave_engine::EngineBatch;

    async fn next(
        &self,
        max_records: usize,
        wait: Duration,
    ) -> rave_store::Result<Option<Self::Batch>> {
        self.inner.next(max_records, wait).await
    }

    async fn next_wanted(
        &self,
        max_records: usize,
        wait: Duration,
        wanted: rave_store::KeyFilter,
    ) -> rave_store::Result<Option<Self::Batch>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.next_wanted(max_records, wait, wanted).await
    }

    fn next_wanted_after<'a>(
        &'a self,
        batch: &Self::Batch,
        max_records: usize,
        wanted: rave_store::KeyFilter,
    ) -> impl Future<Output = rave_store::Result<Option<Self::Batch>>> + Send + use<'a> {
        self.inner.next_wanted_after(batch, max_records, wanted)
    }

    async fn commit(
        &self,
        batch: Self::Batch,
        effects: Vec<rave_store::TransactWriteAction>,
    ) -> rave_store::Result<()> {
        let rival = self.rival.lock().unwrap().take();
        if let Some((comments, feed)) = rival {
            let applied = comments
                .aggregate_once(&feed, Duration::from_millis(1))
                .await
                .unwrap();
            assert!(applied > 0, "the rival applied a batch first");
        }
        let outcome = self.inner.commit(batch, effects).await;
        if matches!(
            outcome,
            Err(StoreError::ConditionalCheckFailed | StoreError::TransactionCanceled(_))
        ) {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    async fn lag(&self) -> rave_store::Result<rave_store::FeedLag> {
        self.inner.lag().await
    }

    fn max_effects(&self) -> usize {
        self.max_effects
    }
}

/// Catching up reads each next batch while the last one commits. Over a
/// backlog of several batches, with a rival aggregator winning the first
/// commit, every comment is counted exactly once, and the stored position
/// is read only to start, after the lost race, and to find the end.
#[tokio::test]
async fn catching_up_reads_ahead_and_counts_a_backlog_of_many_batches_once() {
    use rave_comments::{ImportComment, VoteCounts};
    let f = fixture(Moderation::Off).await;
    let consumer = feed(&f.engine).await;
    let rival = common::comments_on(&f.engine, Moderation::Off);
    const COMMENTS: usize = 12_000;
    for chunk in 0..COMMENTS / 1_000 {
        let batch = (0..1_000)
            .map(|i| {
                let n = chunk * 1_000 + i;
                let mut comment = new_comment(["en", "de", "fr"][n % 3], 1 + (n % 5) as i64, "b");
                comment.author = format!("author-{}", n % 211);
                comment.created_at = Some(
                    rave_comments::Timestamp::from_millis(1_700_000_000_000 + n as i64).unwrap(),
                );
                ImportComment {
                    product: format!("p{}", n % 37),
                    id: None,
                    status: None,
                    comment,
                    reply: None,
                    verified_purchase: n % 4 == 0,
                    votes: VoteCounts::default(),
                    source: None,
                    incentivized: false,
                    image_urls: Vec::new(),
                    email: None,
                }
            })
            .collect();
        f.comments.import(batch).await.unwrap();
    }
    // Short batches, so the backlog takes many.
    let watched = WatchedFeed {
        rival: std::sync::Mutex::new(Some((rival, feed(&f.engine).await))),
        ..WatchedFeed::new(consumer, 2_000)
    };
    let mut commits = Vec::new();
    let applied = f
        .comments
        .catch_up(&watched, |passed| commits.push(passed))
        .await
        .unwrap();
    assert_eq!(applied, commits.iter().sum::<usize>());
    // The start, after the lost race, and the end, where one more read
    // finds the last commit's own statistics writes (passed over) if the
    // last read ahead ran before that commit landed. Every other batch was
    // read ahead.
    let reads = watched.reads.load(Ordering::Relaxed);
    assert!(
        (3..=4).contains(&reads) && commits.len() > reads,
        "{reads} reads from the stored position for commits of {commits:?}"
    );
    assert_eq!(
        rave_store::ChangeFeed::lag(&watched).await.unwrap().events,
        0
    );
    assert_eq!(
        f.comments.global_stats().await.unwrap().comments_total,
        COMMENTS as u64
    );
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
}

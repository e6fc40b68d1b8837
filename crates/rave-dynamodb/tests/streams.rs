//! The statistics aggregator on DynamoDB Streams (DynamoDB Local): exact
//! counts, also when a second consumer with no memory of the first reads
//! the same records.

use std::time::{Duration, Instant};

use rave_comments::{CommentPatch, Comments, Config, CursorKey, Moderation, NewComment};
use rave_dynamodb::DynamoStore;

fn endpoint() -> String {
    std::env::var("RAVE_DYNAMODB_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

/// A store on DynamoDB Local and a fresh comments table named after `prefix`.
async fn fresh(prefix: &str) -> (DynamoStore, String, Comments<DynamoStore>) {
    let store = DynamoStore::local(&endpoint());
    let table = format!("{prefix}-{}", std::process::id());
    let comments = Comments::new(
        store.clone(),
        Config {
            table: table.clone(),
            cursor_key: CursorKey::new([2; 32]),
            moderation: Moderation::Off,
        },
    );
    comments.ensure_table().await.unwrap();
    (store, table, comments)
}

fn comment(language: &str, rating: i64, author: &str) -> NewComment {
    NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: author.into(),
        language: language.into(),
        rating,
        title: None,
        body: "b".into(),
        created_at: None,
    }
}

#[tokio::test]
async fn statistics_from_dynamodb_streams_are_exact_despite_a_duplicate_consumer() {
    let (store, table, comments) = fresh("streams").await;
    let mut ids = Vec::new();
    for (product, language, rating, author) in [
        ("a", "en", 5, "ann"),
        ("a", "de", 5, "bob"),
        ("a", "en", 1, "ann"),
        ("b", "en", 5, "cy"),
        ("b", "fr", 3, "ann"),
    ] {
        ids.push(
            comments
                .create(product, comment(language, rating, author), None)
                .await
                .unwrap()
                .comment
                .id,
        );
    }
    comments
        .edit(
            &ids[2],
            &CommentPatch {
                rating: Some(4),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    comments.delete(&ids[4]).await.unwrap();

    let first = store
        .feed(&table, "statistics", rave_comments::aggregator_positions())
        .await
        .unwrap();
    let second = store
        .feed(&table, "statistics", rave_comments::aggregator_positions())
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        // Both consumers race over the same shards; each batch applies once.
        comments
            .aggregate_once(&first, Duration::from_millis(100))
            .await
            .unwrap();
        comments
            .aggregate_once(&second, Duration::from_millis(100))
            .await
            .unwrap();
        let global = comments.global_stats().await.unwrap();
        if global.comments_total == 4
            && comments.product_stats("a", None).await.unwrap().counts.0 == [0, 0, 0, 1, 2]
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "statistics did not converge: {global:?}"
        );
    }
    // Let both drain whatever is left (their own writes), then check exactness.
    for _ in 0..20 {
        comments
            .aggregate_once(&first, Duration::from_millis(20))
            .await
            .unwrap();
        comments
            .aggregate_once(&second, Duration::from_millis(20))
            .await
            .unwrap();
    }
    assert_eq!(
        comments.product_stats("a", None).await.unwrap().counts.0,
        [0, 0, 0, 1, 2]
    );
    assert_eq!(
        comments
            .product_stats("a", Some("en"))
            .await
            .unwrap()
            .counts
            .0,
        [0, 0, 0, 1, 1]
    );
    assert_eq!(
        comments.product_stats("b", None).await.unwrap().counts.0,
        [0, 0, 0, 0, 1]
    );
    let board = comments.leaderboard(10, None).await.unwrap();
    assert_eq!(
        board
            .iter()
            .map(|l| (l.product_id.as_str(), l.five_star))
            .collect::<Vec<_>>(),
        [("a", 2), ("b", 1)]
    );
    let global = comments.global_stats().await.unwrap();
    assert_eq!(
        (
            global.comments_total,
            global.products_total,
            global.authors_total
        ),
        (4, 2, 3)
    );
    assert_eq!(
        global.authors_by_comment_count[0], 2,
        "bob and cy have one comment each"
    );
    assert_eq!(global.authors_by_comment_count[1], 1, "ann has two");
    let report = comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{:?}", report.drift);
}

#[tokio::test]
async fn a_batch_read_twice_is_applied_once() {
    use rave_store::{
        ChangeBatch, ChangeFeed, GetItemInput, Store, StoreError, TransactWriteAction, item,
    };
    let (store, table, comments) = fresh("twice").await;
    comments
        .create("p", comment("en", 5, "ann"), None)
        .await
        .unwrap();
    let (first, second) = (
        store
            .feed(&table, "c", rave_comments::aggregator_positions())
            .await
            .unwrap(),
        store
            .feed(&table, "c", rave_comments::aggregator_positions())
            .await
            .unwrap(),
    );
    let (a, b) = (read_batch(&first).await, read_batch(&second).await);
    assert_eq!(
        a.records().len(),
        b.records().len(),
        "both hold the same records"
    );
    let marker = |name: &str| TransactWriteAction::Put {
        table: table.clone(),
        item: item! {"PK" => "MARKER", "SK" => name},
        condition: None,
    };
    first.commit(a, vec![marker("first")]).await.unwrap();
    assert_eq!(
        second.commit(b, vec![marker("second")]).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    let exists = |name: &'static str| {
        let (store, table) = (store.clone(), table.clone());
        async move {
            store
                .get_item(GetItemInput {
                    table,
                    key: item! {"PK" => "MARKER", "SK" => name},
                    consistent_read: true,
                })
                .await
                .unwrap()
                .item
                .is_some()
        }
    };
    assert!(exists("first").await);
    assert!(
        !exists("second").await,
        "the duplicate batch applied nothing"
    );
}

/// The next batch of a feed, waiting for one.
async fn read_batch(feed: &rave_dynamodb::StreamsFeed) -> rave_dynamodb::StreamsBatch {
    use rave_store::ChangeFeed;
    loop {
        if let Some(batch) = feed.next(100, Duration::from_millis(100)).await.unwrap() {
            return batch;
        }
    }
}

#[tokio::test]
async fn a_shard_is_read_by_one_reader_at_a_time() {
    use rave_store::{ChangeBatch, ChangeFeed};
    let (store, table, comments) = fresh("lease").await;
    comments
        .create("p", comment("en", 5, "ann"), None)
        .await
        .unwrap();
    let feed = store
        .feed(&table, "c", rave_comments::aggregator_positions())
        .await
        .unwrap()
        .with_concurrent_shards(4);
    assert_eq!(feed.concurrent_readers(), 4);
    let held = read_batch(&feed).await;
    assert!(
        feed.next(100, Duration::from_millis(50))
            .await
            .unwrap()
            .is_none(),
        "the shard with the records is leased to the first reader"
    );
    let records = held.records().len();
    drop(held);
    let again = read_batch(&feed).await;
    assert_eq!(
        again.records().len(),
        records,
        "a batch dropped uncommitted ends its lease and is read again"
    );
}

#[tokio::test]
async fn concurrent_readers_of_one_feed_keep_the_statistics_exact() {
    use std::sync::Arc;
    let (store, table, comments) = fresh("readers").await;
    let comments = Arc::new(comments);
    for i in 0..24 {
        let product = format!("p{}", i % 4);
        comments
            .create(
                &product,
                comment("en", 1 + i % 5, &format!("a{}", i % 3)),
                None,
            )
            .await
            .unwrap();
    }
    let feed = Arc::new(
        store
            .feed(&table, "statistics", rave_comments::aggregator_positions())
            .await
            .unwrap()
            .with_concurrent_shards(4),
    );
    let started = Instant::now();
    while comments.global_stats().await.unwrap().comments_total < 24 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "did not converge"
        );
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (comments, feed) = (Arc::clone(&comments), Arc::clone(&feed));
                tokio::spawn(async move {
                    comments
                        .aggregate_once(feed.as_ref(), Duration::from_millis(50))
                        .await
                })
            })
            .collect();
        for reader in readers {
            reader.await.unwrap().unwrap();
        }
    }
    for product in 0..4 {
        let counts = comments
            .product_stats(&format!("p{product}"), None)
            .await
            .unwrap()
            .counts
            .0;
        assert_eq!(counts.iter().sum::<u64>(), 6, "p{product}: {counts:?}");
    }
    let global = comments.global_stats().await.unwrap();
    assert_eq!((global.comments_total, global.authors_total), (24, 3));
}

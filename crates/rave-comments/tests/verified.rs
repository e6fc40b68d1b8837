//! Verified purchases in the domain: one order verifies one comment per
//! product, a refused create stores nothing, and a verified listing reads
//! only what it returns (the sparse verified indexes).

mod common;

use common::{fixture, new_comment};
use rave_comments::{
    CommentsError, Filter, Language, ListRequest, Moderation, OrderId, Rating, RatingSet, Sort,
};

fn order(id: &str) -> OrderId {
    OrderId::parse(id).unwrap()
}

#[tokio::test]
async fn an_order_verifies_one_comment_per_product() {
    let f = fixture(Moderation::Off).await;
    let first = f
        .comments
        .create_verified("p", new_comment("en", 5, "a"), None, &order("o-1"))
        .await
        .unwrap();
    assert!(first.comment.verified_purchase);
    assert!(
        f.comments
            .get(&first.comment.id)
            .await
            .unwrap()
            .verified_purchase
    );
    let again = f
        .comments
        .create_verified("p", new_comment("en", 4, "b"), None, &order("o-1"))
        .await;
    assert!(
        matches!(again, Err(CommentsError::Conflict(_))),
        "{again:?}"
    );
    let keyed = f
        .comments
        .create_verified("p", new_comment("en", 4, "b"), Some("k"), &order("o-1"))
        .await;
    assert!(
        matches!(keyed, Err(CommentsError::Conflict(_))),
        "{keyed:?}"
    );
    // The same order on another product verifies that one.
    f.comments
        .create_verified("q", new_comment("en", 4, "c"), None, &order("o-1"))
        .await
        .unwrap();
    let (p, _) = f.comments.export_page(0, 1, None).await.unwrap();
    assert_eq!(p.len(), 2, "the refused creates stored nothing");
    // The idempotency key the refused create named is free for a new request.
    let created = f
        .comments
        .create_verified("p", new_comment("de", 3, "d"), Some("k"), &order("o-2"))
        .await
        .unwrap();
    assert!(!created.replayed);
    let replayed = f
        .comments
        .create_verified("p", new_comment("de", 3, "d"), Some("k"), &order("o-2"))
        .await
        .unwrap();
    assert!(
        replayed.replayed,
        "a retry of the same verified create replays it"
    );
    assert_eq!(replayed.comment.id, created.comment.id);
}

#[tokio::test]
async fn order_ids_are_validated() {
    assert!(OrderId::parse("").is_err());
    assert!(OrderId::parse(&"x".repeat(129)).is_err());
    assert!(OrderId::parse("a\nb").is_err());
    assert!(OrderId::parse("#/ any text").is_ok());
}

/// Newest first, every filter: a verified listing reads at most 1.3 items
/// per item returned, page after page, with one verified comment in five.
#[tokio::test]
async fn verified_listings_read_only_what_they_return() {
    let f = fixture(Moderation::Off).await;
    for i in 0..300 {
        let language = ["en", "de"][i % 2];
        let rating = (i % 5 + 1) as i64;
        let new = new_comment(language, rating, &format!("comment {i}"));
        if i % 5 == 0 || i % 7 == 0 {
            f.comments
                .create_verified("p", new, None, &order(&format!("o-{i}")))
                .await
                .unwrap();
        } else {
            f.comments.create("p", new, None).await.unwrap();
        }
    }
    let en = || Some(Language::parse("en").unwrap());
    let five = || RatingSet::from_ratings([Rating::new(5).unwrap()]);
    for (language, ratings) in [
        (None, RatingSet::default()),
        (en(), RatingSet::default()),
        (None, five()),
        (en(), five()),
    ] {
        let filter = Filter {
            language,
            ratings,
            verified: true,
        };
        let (mut read, mut returned, mut cursor) = (0, 0, None::<String>);
        loop {
            let page = f
                .comments
                .list(&ListRequest {
                    sort: Sort::Newest,
                    product: "p",
                    filter: filter.clone(),
                    limit: 5,
                    cursor: cursor.as_deref(),
                })
                .await
                .unwrap();
            assert!(page.items.iter().all(|c| c.verified_purchase));
            assert!(
                page.plan
                    .queries
                    .iter()
                    .all(|q| q.index.starts_with("verified"))
            );
            read += page.plan.items_read;
            returned += page.items.len();
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert!(returned > 0, "{filter:?}");
        let ratio = read as f64 / returned as f64;
        assert!(
            ratio <= 1.3,
            "{filter:?}: {read} read for {returned} returned"
        );
    }
}

#[tokio::test]
async fn a_cursor_is_bound_to_the_verified_filter() {
    let f = fixture(Moderation::Off).await;
    for i in 0..4 {
        f.comments
            .create_verified(
                "p",
                new_comment("en", 5, "v"),
                None,
                &order(&format!("o-{i}")),
            )
            .await
            .unwrap();
    }
    let request = |verified, cursor| ListRequest {
        sort: Sort::Newest,
        product: "p",
        filter: Filter {
            verified,
            ..Filter::default()
        },
        limit: 2,
        cursor,
    };
    let page = f.comments.list(&request(true, None)).await.unwrap();
    let cursor = page.next_cursor.unwrap();
    let other = f.comments.list(&request(false, Some(&cursor))).await;
    assert!(
        matches!(other, Err(CommentsError::BadCursor(_))),
        "{other:?}"
    );
}

/// What a create costs in write units (BENCHMARKS.md, B10): the comment and
/// its index entries (four listings and the author index); a verified one
/// adds its four verified entries and the order item, in a transaction,
/// which doubles the table's units.
#[tokio::test]
async fn write_units_of_a_create_and_of_a_verified_create() {
    let f = fixture(Moderation::Off).await;
    let usage = f.comments.usage();
    let before = usage.write_units();
    f.comments
        .create("p", new_comment("en", 5, "plain"), None)
        .await
        .unwrap();
    let plain = usage.write_units() - before;
    let before = usage.write_units();
    f.comments
        .create_verified("p", new_comment("en", 5, "verified"), None, &order("o"))
        .await
        .unwrap();
    let verified = usage.write_units() - before;
    assert_eq!((plain, verified), (6.0, 13.0));
}

//! Verified purchases in the domain: one order verifies one comment per
//! product, a refused create stores nothing, and a verified listing reads
//! only what it returns (the sparse verified indexes, fan-outs sized by the
//! verified comments per rating): at most 1.3 items read per item
//! returned, also with verified comments skewed across ratings, in every
//! order. Also statistics items without per-rating verified counts, which
//! reconcile repairs, and the write units of a verified create.

mod common;

use common::{catch_up, fixture, new_comment, stats_feed, walk};
use rave_comments::{
    CommentsError, Filter, Language, ListRequest, Moderation, OrderId, Rating, RatingSet, SizedBy,
    Sort,
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
            incentivized: None,
            has_media: false,
        };
        let (read, returned) = walk(
            &f.comments,
            &filter,
            Sort::Newest,
            5,
            usize::MAX,
            |_, page| {
                assert!(page.items.iter().all(|c| c.verified_purchase));
                assert!(
                    page.plan
                        .queries
                        .iter()
                        .all(|q| q.index.starts_with("verified"))
                );
            },
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

/// Verified comments spread unevenly over ratings (every 1-star comment
/// verified, one 5-star comment in ten, one 3-star in four, no 2- or
/// 4-star one): a verified fan-out over several ratings, sized by the
/// verified counts per rating (and per language and rating), reads at most
/// 1.3 items per item returned on the first page, on every page after it
/// and over the whole walk, in every sort. Sized by the counts of all
/// comments, {1, 5} would read about 1.4 per item returned.
#[tokio::test]
async fn verified_fan_outs_read_at_most_1_3_items_per_item_returned_when_skewed() {
    let f = fixture(Moderation::Off).await;
    for i in 0..1000 {
        let language = ["en", "de"][i % 2];
        let rating = (i / 2 % 5 + 1) as i64;
        // The how-manieth comment of its language and rating.
        let nth = i / 10;
        let new = new_comment(language, rating, &format!("comment {i}"));
        let verified = match rating {
            1 => true,
            3 => nth % 4 == 0,
            5 => nth % 10 == 0,
            _ => false,
        };
        if verified {
            f.comments
                .create_verified("p", new, None, &order(&format!("o-{i}")))
                .await
                .unwrap();
        } else {
            f.comments.create("p", new, None).await.unwrap();
        }
    }
    catch_up(&f.comments, &stats_feed(&f.engine).await).await;
    let stats = f.comments.product_stats("p", Some("en")).await.unwrap();
    assert_eq!(stats.verified_counts.0, [100, 0, 25, 0, 10]);
    assert_eq!(stats.verified_total, 135);
    let ratings =
        |list: &[i64]| RatingSet::from_ratings(list.iter().map(|r| Rating::new(*r).unwrap()));
    for sort in [Sort::Newest, Sort::Oldest, Sort::Highest, Sort::Lowest] {
        for language in [None, Some(Language::parse("en").unwrap())] {
            for list in [&[1, 5][..], &[1, 3, 5], &[3, 5], &[1, 2, 4, 5], &[]] {
                let filter = Filter {
                    language: language.clone(),
                    ratings: ratings(list),
                    verified: true,
                    incentivized: None,
                    has_media: false,
                };
                let (read, returned) = walk(
                    &f.comments,
                    &filter,
                    sort,
                    20,
                    usize::MAX,
                    |page_number, page| {
                        assert!(page.items.iter().all(|c| c.verified_purchase));
                        let page_ratio = page.plan.items_read as f64 / page.items.len() as f64;
                        if page.next_cursor.is_some() {
                            assert!(
                                page_ratio <= 1.3,
                                "{sort:?} {filter:?} page {page_number}: {} read for {}",
                                page.plan.items_read,
                                page.items.len()
                            );
                        }
                    },
                )
                .await;
                let per_rating = stats.verified_counts.0;
                let expected: u64 = match list {
                    [] => per_rating.iter().sum(),
                    list => list.iter().map(|r| per_rating[*r as usize - 1]).sum(),
                };
                let expected = if filter.language.is_some() {
                    expected
                } else {
                    2 * expected
                };
                assert_eq!(returned as u64, expected, "{sort:?} {filter:?}");
                let ratio = read as f64 / returned as f64;
                assert!(
                    ratio <= 1.3,
                    "{sort:?} {filter:?}: {read} read for {returned} returned"
                );
            }
        }
    }
}

/// A statistics item written before the verified comments were counted by
/// rating carries only their total: a verified fan-out is sized by the
/// counts of all comments until `reconcile` reports the item and `--fix`
/// recounts it, and then by the verified counts.
#[tokio::test]
async fn verified_counts_by_rating_missing_from_older_items_are_reconciled() {
    use rave_store::{GetItemInput, PutItemInput, ReturnValues, Store, item};
    let f = fixture(Moderation::Off).await;
    for i in 0..8 {
        let rating = if i < 4 { 1 } else { 5 };
        let new = new_comment("en", rating, &format!("comment {i}"));
        if i < 2 {
            f.comments
                .create_verified("p", new, None, &order(&format!("o-{i}")))
                .await
                .unwrap();
        } else {
            f.comments.create("p", new, None).await.unwrap();
        }
    }
    catch_up(&f.comments, &stats_feed(&f.engine).await).await;
    let request = ListRequest {
        sort: Sort::Newest,
        product: "p",
        filter: Filter {
            language: None,
            ratings: RatingSet::from_ratings([Rating::new(1).unwrap(), Rating::new(5).unwrap()]),
            verified: true,
            incentivized: None,
            has_media: false,
        },
        limit: 10,
        cursor: None,
    };
    let limits = |page: &rave_comments::ListPage| -> Vec<usize> {
        page.plan.queries.iter().map(|q| q.limit).collect()
    };
    let page = f.comments.list(&request).await.unwrap();
    assert_eq!(page.items.len(), 2);
    assert_eq!(limits(&page), vec![10, 1], "2 : 0 verified");
    assert_eq!(page.plan.sized_by, SizedBy::VerifiedComments);
    let key = item! {"PK" => "PRODUCT#p", "SK" => "S"};
    let mut older = f
        .engine
        .get_item(GetItemInput {
            table: "rave".into(),
            key,
            consistent_read: true,
        })
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(older.remove("verified_1").is_some());
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: older,
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    let page = f.comments.list(&request).await.unwrap();
    assert_eq!(page.items.len(), 2, "nothing is skipped by a missing count");
    assert_eq!(limits(&page), vec![5, 5], "4 : 4 comments");
    assert_eq!(page.plan.sized_by, SizedBy::Comments);
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    let drifted: Vec<&str> = report.drift.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(drifted, vec!["PRODUCT#p/S"]);
    f.comments.reconcile(2, true, &|_| {}).await.unwrap();
    let page = f.comments.list(&request).await.unwrap();
    assert_eq!(limits(&page), vec![10, 1]);
    assert_eq!(page.plan.sized_by, SizedBy::VerifiedComments);
    let stats = f.comments.product_stats("p", None).await.unwrap();
    assert_eq!(
        (stats.verified_total, stats.verified_counts.0),
        (2, [2, 0, 0, 0, 0])
    );
    let report = f.comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{report:?}");
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
/// its index entries (four listings, four `helpful` and the author index),
/// in a transaction with the check that its product's record still names
/// the family it was given (`families`), which doubles the table's units
/// and charges the check 2; a verified one adds its six verified entries
/// and the order item.
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
    assert_eq!((plain, verified), (13.0, 21.0));
}

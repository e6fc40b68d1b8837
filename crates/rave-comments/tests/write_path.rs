//! Create, read, edit, delete, moderation and idempotency through the
//! domain, on the embedded engine.

mod common;

use common::{at, fixture, new_comment};
use rave_comments::*;

/// A report that gives no reason.
fn other() -> Report {
    Report::new(ReportReason::Other, None).unwrap()
}

fn list(
    product: &str,
    language: Option<&str>,
    ratings: &[i64],
    limit: usize,
) -> (String, Filter, usize) {
    let filter = Filter {
        language: language.map(|l| Language::parse(l).unwrap()),
        ratings: RatingSet::from_ratings(ratings.iter().map(|r| Rating::new(*r).unwrap())),
        verified: false,
        incentivized: None,
        has_media: false,
    };
    (product.to_owned(), filter, limit)
}

async fn ids(
    comments: &Comments<rave_engine::Engine>,
    query: (String, Filter, usize),
) -> Vec<String> {
    let request = ListRequest {
        sort: Default::default(),
        product: &query.0,
        filter: query.1,
        limit: query.2,
        cursor: None,
    };
    comments
        .list(&request)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.id)
        .collect()
}

#[tokio::test]
async fn created_comments_are_listed_newest_first_and_readable_by_id() {
    let f = fixture(Moderation::Off).await;
    let first = f
        .comments
        .create("42", new_comment("en", 5, "first"), None)
        .await
        .unwrap()
        .comment;
    let second = f
        .comments
        .create("42", new_comment("de", 1, "second"), None)
        .await
        .unwrap()
        .comment;
    assert_eq!(first.status, Status::Published);
    assert!(second.id > first.id, "ids sort by creation");
    assert_eq!(f.comments.get(&first.id).await.unwrap(), first);
    assert_eq!(
        ids(&f.comments, list("42", None, &[], 20)).await,
        vec![second.id.clone(), first.id.clone()]
    );
    assert_eq!(
        ids(&f.comments, list("42", Some("en"), &[], 20)).await,
        vec![first.id.clone()]
    );
    assert_eq!(
        ids(&f.comments, list("42", None, &[1], 20)).await,
        vec![second.id.clone()]
    );
    assert_eq!(
        ids(&f.comments, list("42", None, &[1, 5], 20)).await,
        vec![second.id.clone(), first.id.clone()]
    );
    assert!(
        ids(&f.comments, list("43", None, &[], 20)).await.is_empty(),
        "another product is empty"
    );
    assert!(matches!(
        f.comments.get("01JD3X0000000000000000000Z").await,
        Err(CommentsError::NotFound)
    ));
    assert!(matches!(
        f.comments.get("not-an-id").await,
        Err(CommentsError::NotFound)
    ));
}

#[tokio::test]
async fn edits_move_the_comment_between_listings() {
    let f = fixture(Moderation::Off).await;
    let c = f
        .comments
        .create("p", new_comment("en", 2, "text"), None)
        .await
        .unwrap()
        .comment;
    let patch = CommentPatch {
        language: Some("fr".into()),
        rating: Some(4),
        body: Some("better".into()),
        ..Default::default()
    };
    let edited = f.comments.edit(&c.id, &patch).await.unwrap();
    assert_eq!(
        (
            edited.language.as_str(),
            edited.rating.get(),
            edited.body.as_str()
        ),
        ("fr", 4, "better")
    );
    assert_eq!(
        edited.created_at, c.created_at,
        "editing keeps the position in time"
    );
    assert!(
        ids(&f.comments, list("p", Some("en"), &[], 20))
            .await
            .is_empty()
    );
    assert!(ids(&f.comments, list("p", None, &[2], 20)).await.is_empty());
    assert_eq!(
        ids(&f.comments, list("p", Some("fr"), &[4], 20)).await,
        vec![c.id.clone()]
    );
    let bad = CommentPatch {
        rating: Some(6),
        ..Default::default()
    };
    assert!(matches!(
        f.comments.edit(&c.id, &bad).await,
        Err(CommentsError::Invalid {
            field: "rating",
            ..
        })
    ));
    assert_eq!(
        f.comments.get(&c.id).await.unwrap(),
        edited,
        "a rejected edit changes nothing"
    );
}

#[tokio::test]
async fn deletes_remove_from_every_listing() {
    let f = fixture(Moderation::Off).await;
    let c = f
        .comments
        .create("p", new_comment("en", 3, "text"), None)
        .await
        .unwrap()
        .comment;
    f.comments.delete(&c.id).await.unwrap();
    assert!(matches!(
        f.comments.get(&c.id).await,
        Err(CommentsError::NotFound)
    ));
    for query in [
        list("p", None, &[], 20),
        list("p", Some("en"), &[3], 20),
        list("p", None, &[3, 4], 20),
    ] {
        assert!(ids(&f.comments, query).await.is_empty());
    }
    assert!(matches!(
        f.comments.delete(&c.id).await,
        Err(CommentsError::NotFound)
    ));
}

#[tokio::test]
async fn replies_show_in_every_listing_and_change_no_order() {
    let f = fixture(Moderation::Off).await;
    let mut created = Vec::new();
    for (rating, body) in [(5, "older"), (3, "newer")] {
        let comment = f
            .comments
            .create("p", new_comment("en", rating, body), None)
            .await
            .unwrap()
            .comment;
        created.push(comment.id);
    }
    let order = ids(&f.comments, list("p", None, &[], 20)).await;
    let replied = f
        .comments
        .set_reply(&created[0], "Thanks for the review!")
        .await
        .unwrap();
    let reply = replied.reply.clone().unwrap();
    assert_eq!(reply.body, "Thanks for the review!");
    assert_eq!(reply.created_at, reply.updated_at);
    assert_eq!(f.comments.get(&created[0]).await.unwrap(), replied);
    for query in [
        list("p", None, &[], 20),
        list("p", Some("en"), &[], 20),
        list("p", None, &[5], 20),
        list("p", Some("en"), &[5], 20),
        list("p", None, &[3, 5], 20),
    ] {
        let request = ListRequest {
            sort: Default::default(),
            product: &query.0,
            filter: query.1,
            limit: query.2,
            cursor: None,
        };
        let page = f.comments.list(&request).await.unwrap();
        let shown = page.items.iter().find(|c| c.id == created[0]).unwrap();
        assert_eq!(shown.reply.as_ref(), Some(&reply));
    }
    assert_eq!(ids(&f.comments, list("p", None, &[], 20)).await, order);

    let edited = f
        .comments
        .set_reply(&created[0], "Thank you!")
        .await
        .unwrap();
    let edited_reply = edited.reply.unwrap();
    assert_eq!(edited_reply.created_at, reply.created_at);
    assert!(edited_reply.updated_at >= reply.updated_at);
    assert!(matches!(
        f.comments.set_reply(&created[0], "").await,
        Err(CommentsError::Invalid { field: "body", .. })
    ));
    assert_eq!(
        f.comments
            .get(&created[0])
            .await
            .unwrap()
            .reply
            .unwrap()
            .body,
        "Thank you!",
        "a refused reply changes nothing"
    );

    let removed = f.comments.delete_reply(&created[0]).await.unwrap();
    assert_eq!(removed.reply, None);
    assert_eq!(f.comments.delete_reply(&created[0]).await.unwrap(), removed);
    assert_eq!(f.comments.get(&created[0]).await.unwrap().reply, None);
    for missing in ["01JD3X0000000000000000000A", "not-an-id"] {
        assert!(matches!(
            f.comments.set_reply(missing, "hi").await,
            Err(CommentsError::NotFound)
        ));
        assert!(matches!(
            f.comments.delete_reply(missing).await,
            Err(CommentsError::NotFound)
        ));
    }
}

#[tokio::test]
async fn pre_moderation_hides_until_approved() {
    let f = fixture(Moderation::Pre).await;
    let c = f
        .comments
        .create("p", new_comment("en", 5, "text"), None)
        .await
        .unwrap()
        .comment;
    assert_eq!(c.status, Status::Pending);
    assert!(
        ids(&f.comments, list("p", None, &[], 20)).await.is_empty(),
        "pending is invisible"
    );
    let queue = f
        .comments
        .moderation_queue(Status::Pending, None, None, 20, None)
        .await
        .unwrap();
    assert_eq!(
        queue.items.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        vec![c.id.clone()]
    );
    // Reporting a pending comment keeps it pending.
    assert_eq!(
        f.comments.flag(&c.id, &other()).await.unwrap().status,
        Status::Pending
    );
    let approved = f.comments.approve(&c.id).await.unwrap();
    assert_eq!(approved.status, Status::Published);
    assert_eq!(
        ids(&f.comments, list("p", None, &[], 20)).await,
        vec![c.id.clone()]
    );
    assert!(
        f.comments
            .moderation_queue(Status::Pending, None, None, 20, None)
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn flagged_comments_stay_visible_and_queue_by_time_prefix() {
    let f = fixture(Moderation::Off).await;
    let old = f
        .comments
        .create(
            "p",
            at(new_comment("en", 5, "old"), "2025-03-01T10:00:00.000Z"),
            None,
        )
        .await
        .unwrap()
        .comment;
    let new = f
        .comments
        .create(
            "p",
            at(new_comment("en", 5, "new"), "2026-11-21T08:30:00.000Z"),
            None,
        )
        .await
        .unwrap()
        .comment;
    for c in [&old, &new] {
        assert_eq!(
            f.comments.flag(&c.id, &other()).await.unwrap().status,
            Status::Flagged
        );
    }
    assert_eq!(
        ids(&f.comments, list("p", None, &[], 20)).await.len(),
        2,
        "flagged stay listed"
    );
    let all = f
        .comments
        .moderation_queue(Status::Flagged, None, None, 20, None)
        .await
        .unwrap();
    assert_eq!(
        all.items.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        vec![old.id.clone(), new.id.clone()],
        "oldest first"
    );
    for (prefix, expected) in [
        ("2026", 1),
        ("2026-11", 1),
        ("2026-11-21", 1),
        ("2026-11-21T08", 1),
        ("2026-11-21T09", 0),
        ("2025", 1),
    ] {
        let page = f
            .comments
            .moderation_queue(Status::Flagged, Some(prefix), None, 20, None)
            .await
            .unwrap();
        assert_eq!(page.items.len(), expected, "prefix {prefix}");
    }
    for bad in ["26", "2026-1", "2026/11", "2026-11-21 08", "x"] {
        assert!(matches!(
            f.comments
                .moderation_queue(Status::Flagged, Some(bad), None, 20, None)
                .await,
            Err(CommentsError::Invalid { field: "since", .. })
        ));
    }
    f.comments.approve(&old.id).await.unwrap();
    let rest = f
        .comments
        .moderation_queue(Status::Flagged, None, None, 20, None)
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
}

#[tokio::test]
async fn moderation_queue_pages_with_cursors() {
    let f = fixture(Moderation::Pre).await;
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(
            f.comments
                .create("p", new_comment("en", 1 + i % 5, "x"), None)
                .await
                .unwrap()
                .comment
                .id,
        );
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = f
            .comments
            .moderation_queue(Status::Pending, None, None, 3, cursor.as_deref())
            .await
            .unwrap();
        seen.extend(page.items.into_iter().map(|c| c.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, created);
}

#[tokio::test]
async fn idempotent_creates_replay_and_conflict() {
    let f = fixture(Moderation::Off).await;
    let first = f
        .comments
        .create("p", new_comment("en", 5, "once"), Some("key-1"))
        .await
        .unwrap();
    assert!(!first.replayed);
    let again = f
        .comments
        .create("p", new_comment("en", 5, "once"), Some("key-1"))
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.comment.id, first.comment.id);
    assert_eq!(
        ids(&f.comments, list("p", None, &[], 20)).await.len(),
        1,
        "the retry created nothing"
    );
    let other = f
        .comments
        .create("p", new_comment("en", 4, "different"), Some("key-1"))
        .await;
    assert!(matches!(other, Err(CommentsError::Conflict(_))));
    assert!(matches!(
        f.comments
            .create("p", new_comment("en", 5, "x"), Some(""))
            .await,
        Err(CommentsError::Invalid {
            field: "Idempotency-Key",
            ..
        })
    ));
    assert!(matches!(
        f.comments
            .create("p", new_comment("en", 5, "x"), Some(&"k".repeat(129)))
            .await,
        Err(CommentsError::Invalid {
            field: "Idempotency-Key",
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_retries_with_one_key_create_one_comment() {
    let f = std::sync::Arc::new(fixture(Moderation::Off).await);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            f.comments
                .create("p", new_comment("en", 5, "same"), Some("race"))
                .await
                .unwrap()
                .comment
                .id
        }));
    }
    let mut ids_seen = Vec::new();
    for task in tasks {
        ids_seen.push(task.await.unwrap());
    }
    ids_seen.dedup();
    assert_eq!(ids_seen.len(), 1, "every retry returned the same comment");
    assert_eq!(ids(&f.comments, list("p", None, &[], 20)).await.len(), 1);
}

#[tokio::test]
async fn invalid_input_never_reaches_the_store() {
    let f = fixture(Moderation::Off).await;
    let before = f.engine.latest_sequence();
    for product in ["a#b", "a/b", "a~b", "", "a b", "PRODUCT#42/en"] {
        assert!(matches!(
            f.comments
                .create(product, new_comment("en", 5, "x"), None)
                .await,
            Err(CommentsError::Invalid {
                field: "product_id",
                ..
            })
        ));
        let request = ListRequest {
            sort: Default::default(),
            product,
            filter: Filter::default(),
            limit: 20,
            cursor: None,
        };
        assert!(matches!(
            f.comments.list(&request).await,
            Err(CommentsError::Invalid {
                field: "product_id",
                ..
            })
        ));
    }
    for language in ["e#", "en/5", "~", "EN"] {
        assert!(matches!(
            f.comments
                .create("p", new_comment(language, 5, "x"), None)
                .await,
            Err(CommentsError::Invalid {
                field: "language",
                ..
            })
        ));
    }
    assert!(matches!(
        f.comments
            .create("p", new_comment("en", 0, "x"), None)
            .await,
        Err(CommentsError::Invalid {
            field: "rating",
            ..
        })
    ));
    assert_eq!(f.engine.latest_sequence(), before, "nothing was written");
    let request = ListRequest {
        sort: Default::default(),
        product: "p",
        filter: Filter::default(),
        limit: 0,
        cursor: None,
    };
    assert!(matches!(
        f.comments.list(&request).await,
        Err(CommentsError::Invalid { field: "limit", .. })
    ));
    let request = ListRequest {
        sort: Default::default(),
        product: "p",
        filter: Filter::default(),
        limit: 101,
        cursor: None,
    };
    assert!(matches!(
        f.comments.list(&request).await,
        Err(CommentsError::Invalid { field: "limit", .. })
    ));
}

#[tokio::test]
async fn cursors_are_bound_to_their_query() {
    let f = fixture(Moderation::Off).await;
    for i in 0..5 {
        f.comments
            .create("p", new_comment("en", 1 + i % 2, "x"), None)
            .await
            .unwrap();
    }
    let request = ListRequest {
        sort: Default::default(),
        product: "p",
        filter: Filter::default(),
        limit: 2,
        cursor: None,
    };
    let cursor = f
        .comments
        .list(&request)
        .await
        .unwrap()
        .next_cursor
        .unwrap();
    let en = Filter {
        language: Some(Language::parse("en").unwrap()),
        ..Filter::default()
    };
    let one = Filter {
        ratings: RatingSet::from_ratings([Rating::new(1).unwrap()]),
        ..Filter::default()
    };
    for (product, filter) in [("q", Filter::default()), ("p", en), ("p", one)] {
        let request = ListRequest {
            sort: Default::default(),
            product,
            filter,
            limit: 2,
            cursor: Some(&cursor),
        };
        assert!(matches!(
            f.comments.list(&request).await,
            Err(CommentsError::BadCursor(_))
        ));
    }
    let mut tampered = cursor.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for bad in [tampered.as_str(), &cursor[..cursor.len() - 2], ""] {
        let request = ListRequest {
            sort: Default::default(),
            product: "p",
            filter: Filter::default(),
            limit: 2,
            cursor: Some(bad),
        };
        assert!(
            matches!(
                f.comments.list(&request).await,
                Err(CommentsError::BadCursor(_))
            ),
            "{bad:?}"
        );
    }
    let queue_cursor = Some(cursor.as_str());
    assert!(matches!(
        f.comments
            .moderation_queue(Status::Flagged, None, None, 2, queue_cursor)
            .await,
        Err(CommentsError::BadCursor(_))
    ));
}

#[tokio::test]
async fn explain_shows_the_plan_and_its_cost() {
    let f = fixture(Moderation::Off).await;
    for i in 0..30 {
        f.comments
            .create("p", new_comment("en", 1 + i % 5, "x"), None)
            .await
            .unwrap();
    }
    let filter = Filter {
        language: Some(Language::parse("en").unwrap()),
        ratings: RatingSet::from_ratings([1, 2].map(|r| Rating::new(r).unwrap())),
        verified: false,
        incentivized: None,
        has_media: false,
    };
    let request = ListRequest {
        sort: Default::default(),
        product: "p",
        filter,
        limit: 5,
        cursor: None,
    };
    let page = f.comments.list(&request).await.unwrap();
    assert_eq!(page.items.len(), 5);
    assert_eq!(page.plan.strategy, Strategy::LanguageRatingsFanOut);
    let partitions: Vec<_> = page
        .plan
        .queries
        .iter()
        .map(|q| q.partition_key.as_str())
        .collect();
    assert_eq!(partitions, ["PRODUCT#p/en/1", "PRODUCT#p/en/2"]);
    // Two sub-queries of five small comments (0.5 units each) and the
    // product's counts, read first to size them (0.5).
    assert_eq!(page.plan.read_units, 1.5);
    // Without counts each sub-query reads a whole page, as in part 2.
    assert_eq!(page.plan.items_read, 10);
    let counts = RatingCounts([6, 6, 6, 6, 6]);
    let page = f
        .comments
        .list_with_counts(&request, Some(&counts))
        .await
        .unwrap();
    assert!(
        page.plan.items_read <= 8,
        "shares of 6 read {}",
        page.plan.items_read
    );
}

fn imported(id: &str, body: &str, email: Option<&str>) -> ImportComment {
    ImportComment {
        product: "p1".into(),
        id: Some(id.into()),
        status: None,
        comment: NewComment {
            attributes: Default::default(),
            created_at: Some(
                Timestamp::from_millis(ulid::Ulid::from_string(id).unwrap().timestamp_ms() as i64)
                    .unwrap(),
            ),
            ..new_comment("en", 4, body)
        },
        reply: None,
        verified_purchase: false,
        votes: VoteCounts::default(),
        source: Some(Source::parse("okendo").unwrap()),
        incentivized: false,
        image_urls: vec!["https://cdn.example.com/1.jpg".into()],
        email: email.map(|e| Email::parse(e).unwrap()),
    }
}

#[tokio::test]
async fn an_import_of_an_existing_id_changes_nothing_and_creates_only_what_is_missing() {
    let f = fixture(Moderation::Off).await;
    let first = "01JD3X0000000000000000000A";
    let second = "01JD3X0000000000000000000B";
    let outcome = f
        .comments
        .import(vec![imported(first, "first", Some("ann@example.com"))])
        .await
        .unwrap();
    assert_eq!(outcome.created, 1);
    f.comments.approve(first).await.unwrap();
    f.comments.set_reply(first, "Thanks").await.unwrap();
    let before = f.comments.get(first).await.unwrap();
    assert_eq!(before.source.as_ref().map(Source::as_str), Some("okendo"));
    assert_eq!(before.image_urls, ["https://cdn.example.com/1.jpg"]);
    // Again, with a changed text, a new comment and the same one twice.
    let outcome = f
        .comments
        .import(vec![
            imported(first, "changed", Some("other@example.com")),
            imported(second, "second", None),
            imported(second, "second", None),
        ])
        .await
        .unwrap();
    assert_eq!(outcome.ids, [first, second, second]);
    assert_eq!(outcome.created, 1);
    assert_eq!(f.comments.get(first).await.unwrap(), before);
    assert_eq!(
        f.comments
            .author_email(first)
            .await
            .unwrap()
            .map(|e| e.as_str().to_owned()),
        Some("ann@example.com".to_owned())
    );
    assert_eq!(f.comments.author_email(second).await.unwrap(), None);
    let bad = ImportComment {
        image_urls: vec!["javascript:alert(1)".into()],
        ..imported("01JD3X0000000000000000000C", "x", None)
    };
    assert!(matches!(
        f.comments.import(vec![bad]).await,
        Err(CommentsError::Invalid {
            field: "image_urls",
            ..
        })
    ));
}

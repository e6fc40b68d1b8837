//! Readers' reports with their reasons, the moderation queue by reason, and
//! the incentive disclosure set by staff and by imports, through the
//! domain on the embedded engine.

mod common;

use common::{at, fixture, new_comment};
use rave_comments::*;

fn report(reason: ReportReason, note: Option<&str>) -> Report {
    Report::new(reason, note).unwrap()
}

async fn queue_ids(
    comments: &Comments<rave_engine::Engine>,
    reason: Option<ReportReason>,
) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = comments
            .moderation_queue(Status::Flagged, None, reason, 1, cursor.as_deref())
            .await
            .unwrap();
        ids.extend(page.items.iter().map(|c| c.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return ids,
        }
    }
}

#[tokio::test]
async fn reports_are_counted_by_reason_shown_in_the_queue_and_cleared_by_an_approval() {
    let f = fixture(Moderation::Off).await;
    let mut ids = Vec::new();
    for minute in 0..4 {
        let time = format!("2026-11-21T08:0{minute}:00.000Z");
        let c = f
            .comments
            .create("p", at(new_comment("en", 3, "text"), &time), None)
            .await
            .unwrap()
            .comment;
        ids.push(c.id);
    }
    let spam = report(ReportReason::Spam, Some("buy now links"));
    let flagged = f.comments.flag(&ids[0], &spam).await.unwrap();
    assert_eq!(flagged.status, Status::Flagged);
    f.comments.flag(&ids[0], &spam).await.unwrap();
    f.comments
        .flag(&ids[0], &report(ReportReason::Fake, None))
        .await
        .unwrap();
    f.comments
        .flag(&ids[1], &report(ReportReason::OffTopic, None))
        .await
        .unwrap();
    f.comments
        .flag(&ids[2], &report(ReportReason::Spam, None))
        .await
        .unwrap();
    let queue = f
        .comments
        .moderation_queue(Status::Flagged, None, None, 20, None)
        .await
        .unwrap();
    let first = &queue.items[0];
    assert_eq!(first.id, ids[0]);
    assert_eq!(first.reports.count(ReportReason::Spam), 2);
    assert_eq!(first.reports.count(ReportReason::Fake), 1);
    assert_eq!(first.reports.count(ReportReason::Other), 0);
    assert_eq!(first.reports.notes.len(), 2, "the notes given, latest kept");
    assert_eq!(
        first.reports.notes[0].note.as_deref(),
        Some("buy now links")
    );
    // Filtered by reason, the queue walks (a page of one at a time) only
    // the comments reported for it, each once, oldest first.
    assert_eq!(
        queue_ids(&f.comments, Some(ReportReason::Spam)).await,
        [ids[0].clone(), ids[2].clone()]
    );
    assert_eq!(
        queue_ids(&f.comments, Some(ReportReason::OffTopic)).await,
        [ids[1].clone()]
    );
    assert!(
        queue_ids(&f.comments, Some(ReportReason::Offensive))
            .await
            .is_empty()
    );
    assert_eq!(queue_ids(&f.comments, None).await.len(), 3);
    // A cursor of one reason's walk is refused by another's.
    let page = f
        .comments
        .moderation_queue(Status::Flagged, None, Some(ReportReason::Spam), 1, None)
        .await
        .unwrap();
    let cursor = page.next_cursor.expect("a second page");
    assert!(matches!(
        f.comments
            .moderation_queue(
                Status::Flagged,
                None,
                Some(ReportReason::Fake),
                1,
                Some(&cursor)
            )
            .await,
        Err(CommentsError::BadCursor(_))
    ));
    let approved = f.comments.approve(&ids[0]).await.unwrap();
    assert!(approved.reports.is_empty(), "judged reports go");
    assert_eq!(
        f.comments.get(&ids[0]).await.unwrap().reports,
        Reports::default()
    );
    assert_eq!(
        queue_ids(&f.comments, Some(ReportReason::Spam)).await,
        [ids[2].clone()]
    );
}

#[tokio::test]
async fn a_report_of_an_unknown_comment_is_not_found() {
    let f = fixture(Moderation::Off).await;
    assert!(matches!(
        f.comments
            .flag(
                "01JD3X0000000000000000000A",
                &report(ReportReason::Spam, None)
            )
            .await,
        Err(CommentsError::NotFound)
    ));
}

#[tokio::test]
async fn staff_and_imports_mark_incentivized_reviews_and_listings_filter_them() {
    let f = fixture(Moderation::Off).await;
    let mut ids = Vec::new();
    for n in 0..6 {
        let c = f
            .comments
            .create("p", new_comment("en", 5, &format!("text {n}")), None)
            .await
            .unwrap()
            .comment;
        assert!(!c.incentivized);
        ids.push(c.id);
    }
    for id in [&ids[1], &ids[4]] {
        assert!(
            f.comments
                .set_incentivized(id, true)
                .await
                .unwrap()
                .incentivized
        );
    }
    // Set and cleared again: staff can undo a mistake.
    f.comments.set_incentivized(&ids[2], true).await.unwrap();
    assert!(
        !f.comments
            .set_incentivized(&ids[2], false)
            .await
            .unwrap()
            .incentivized
    );
    let imported = ImportComment {
        product: "p".into(),
        id: None,
        status: None,
        comment: at(new_comment("en", 4, "imported"), "2026-01-01T00:00:00.000Z"),
        reply: None,
        verified_purchase: false,
        votes: VoteCounts::default(),
        source: None,
        incentivized: true,
        image_urls: Vec::new(),
        email: None,
    };
    let outcome = f.comments.import(vec![imported]).await.unwrap();
    let imported_id = outcome.ids[0].clone();
    assert!(f.comments.get(&imported_id).await.unwrap().incentivized);
    for sort in Sort::ALL {
        for (wanted, expected) in [
            (true, vec![&ids[1], &ids[4], &imported_id]),
            (false, vec![&ids[0], &ids[2], &ids[3], &ids[5]]),
        ] {
            let filter = Filter {
                incentivized: Some(wanted),
                ..Filter::default()
            };
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let page = f
                    .comments
                    .list(&ListRequest {
                        product: "p",
                        filter: filter.clone(),
                        sort,
                        limit: 2,
                        cursor: cursor.as_deref(),
                    })
                    .await
                    .unwrap();
                assert!(page.items.iter().all(|c| c.incentivized == wanted));
                if page.next_cursor.is_some() {
                    assert_eq!(
                        page.items.len(),
                        2,
                        "{sort:?}: a page with a cursor is full"
                    );
                }
                seen.extend(page.items.into_iter().map(|c| c.id));
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            let mut seen_sorted = seen.clone();
            seen_sorted.sort();
            seen_sorted.dedup();
            assert_eq!(seen_sorted.len(), seen.len(), "{sort:?}: each once");
            let mut expected: Vec<String> = expected.into_iter().cloned().collect();
            expected.sort();
            assert_eq!(seen_sorted, expected, "{sort:?}, incentivized={wanted}");
        }
    }
}

#[tokio::test]
async fn the_figures_count_holds_by_rule_waiting_comments_and_decisions() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let engine = rave_engine::Engine::open(dir.path()).unwrap();
    let mut rules = rules::Rules::new();
    rules.max_links = Some((0, rules::Outcome::Hold));
    let comments = common::comments_on(&engine, Moderation::Off).with_rules(Arc::new(rules));
    comments.ensure_table().await.unwrap();
    let feed = common::stats_feed(&engine).await;
    let held = |body: &str| {
        let comments = &comments;
        let body = body.to_owned();
        async move {
            comments
                .create("p", new_comment("en", 2, &body), None)
                .await
                .unwrap()
                .comment
        }
    };
    let a = held("see http://a.example").await;
    let b = held("see http://b.example").await;
    let plain = held("no links").await;
    assert_eq!(a.held_by.as_deref(), Some("too_many_links"));
    assert!(
        a.queued_at.is_some(),
        "a held comment knows when it was queued"
    );
    assert!(plain.queued_at.is_none());
    comments
        .flag(&plain.id, &report(ReportReason::Offensive, None))
        .await
        .unwrap();
    common::catch_up(&comments, &feed).await;
    let figures = comments.moderation_figures().await.unwrap();
    assert_eq!(figures.holds_by_rule["too_many_links"], 2);
    assert_eq!((figures.pending, figures.flagged), (2, 1));
    assert_eq!(figures.reports_by_reason[&ReportReason::Offensive], 1);
    assert_eq!(
        (figures.decisions, figures.median_decision_seconds),
        (0, None)
    );
    comments.approve(&a.id).await.unwrap();
    comments.delete(&b.id).await.unwrap();
    comments.approve(&plain.id).await.unwrap();
    common::catch_up(&comments, &feed).await;
    let figures = comments.moderation_figures().await.unwrap();
    assert_eq!((figures.pending, figures.flagged), (0, 0));
    assert_eq!(figures.decisions, 3);
    assert_eq!(
        figures.holds_by_rule["too_many_links"], 2,
        "holds stay counted"
    );
    let median = figures.median_decision_seconds.unwrap();
    assert!((0.0..600.0).contains(&median), "{median}");
}

/// What an incentive filter costs: a walk reads every entry of the plan's
/// partitions about once, whatever share matches (the executor's doc
/// quotes these figures).
#[tokio::test]
async fn a_filtered_walk_reads_each_entry_about_once() {
    let f = fixture(Moderation::Off).await;
    let total: usize = 200;
    let mut marked = Vec::new();
    for n in 0..total {
        let c = f
            .comments
            .create("p", new_comment("en", 1 + (n % 5) as i64, "text"), None)
            .await
            .unwrap()
            .comment;
        marked.push(c.id);
    }
    for (every, label) in [(2, "1 in 2"), (10, "1 in 10")] {
        for id in marked.iter().step_by(every) {
            f.comments.set_incentivized(id, true).await.unwrap();
        }
        for sort in [Sort::Newest, Sort::Highest] {
            let filter = Filter {
                incentivized: Some(true),
                ..Filter::default()
            };
            let (read, returned) =
                common::walk(&f.comments, &filter, sort, 10, 1_000, |_, _| {}).await;
            assert_eq!(returned, total.div_ceil(every));
            eprintln!("{label} incentivized, {sort:?}: {returned} returned, {read} read");
            assert!(read <= total * 3 / 2, "{label} {sort:?}: {read} read");
        }
        for id in &marked {
            f.comments.set_incentivized(id, false).await.unwrap();
        }
    }
}

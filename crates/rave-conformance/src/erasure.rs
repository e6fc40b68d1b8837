//! Erasing an author's data, for every backend: after the erasure and the
//! aggregator's catch-up, nothing of the author remains — no comment item,
//! no index entry (the author, product and verified listings, newest and
//! most helpful first, show none),
//! no author statistics, no personal data kept apart (an imported email) —
//! the other authors' comments and counts are as a
//! recount says, `reconcile` finds no drift, and erasing again erases
//! nothing. The author's photos lose their references with the comments
//! (a verified create's transaction and an import's batch wrote them), and
//! the erasure names those no other comment carries.

use std::collections::BTreeSet;

use rave_comments::{
    Comments, CommentsError, Email, Filter, ImportComment, ListRequest, NewComment, NewPhoto,
    OrderId, PhotoId, Sort, Status, Timestamp, VoteCounts,
};
use rave_store::{ChangeFeed, Store};

use crate::statistics::drain;

/// An author value with the characters a key could trip over.
pub const ERASED: &str = "Ann #1/de AUTHOR#x";
/// The email an import kept apart for [`ERASED`]'s imported comment.
const ERASED_EMAIL: &str = "ann@example.com";
/// A prefix of [`ERASED`]: exact matching must keep it.
pub const KEPT: &str = "Ann #1";

fn new_comment(author: &str, language: &str, rating: i64) -> NewComment {
    NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: author.into(),
        language: language.into(),
        rating,
        title: Some("title".into()),
        body: format!("{author} says {rating}"),
        created_at: None,
    }
}

/// A photo reference, its id all `fill`.
fn photo(fill: char) -> NewPhoto {
    NewPhoto {
        id: PhotoId::parse(&fill.to_string().repeat(64)).unwrap(),
        width: 640,
        height: 480,
    }
}

/// Every comment of the table (any status), by a parallel scan.
async fn all_comments<S: Store>(comments: &Comments<S>) -> Vec<rave_comments::Comment> {
    let mut all = Vec::new();
    for segment in 0..2 {
        let mut start = None;
        loop {
            let (page, next) = comments.export_page(segment, 2, start).await.unwrap();
            all.extend(page);
            match next {
                Some(position) => start = Some(position),
                None => break,
            }
        }
    }
    all
}

/// Ids of every comment `author` has, walking the author listing `limit`
/// at a time; checks the walk is newest first with no repeats.
async fn author_ids<S: Store>(comments: &Comments<S>, author: &str, limit: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = None;
    loop {
        let page = comments
            .author_comments(author, limit, cursor.as_deref())
            .await
            .unwrap();
        assert!(page.items.iter().all(|c| c.author == author));
        ids.extend(page.items.into_iter().map(|c| c.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let mut newest_first = ids.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, newest_first, "newest first, each once");
    ids
}

/// Runs the erasure scenario on `comments` (an empty table, moderation
/// off) with the aggregator reading `feed`.
pub async fn check_erasure<S: Store, F: ChangeFeed>(comments: &Comments<S>, feed: &F) {
    let mut erased_ids = BTreeSet::new();
    for (product, language, rating) in [("p1", "en", 5), ("p1", "de", 3), ("p2", "en", 1)] {
        let c = comments
            .create(product, new_comment(ERASED, language, rating), None)
            .await
            .unwrap()
            .comment;
        erased_ids.insert(c.id);
    }
    let order = OrderId::parse("order-1").unwrap();
    // Photos `a` and `b`; `b` is also on one of bob's comments, below.
    let with_photos = NewComment {
        media: vec![photo('a'), photo('b')],
        ..new_comment(ERASED, "en", 4)
    };
    let verified = comments
        .create_verified("p1", with_photos, None, &order)
        .await
        .unwrap()
        .comment;
    comments.set_reply(&verified.id, "Thank you").await.unwrap();
    comments.vote(&verified.id, "v1", true).await.unwrap();
    comments.vote(&verified.id, "v2", false).await.unwrap();
    erased_ids.insert(verified.id.clone());
    let flagged = comments
        .create("p2", new_comment(ERASED, "fr", 2), None)
        .await
        .unwrap()
        .comment;
    comments
        .flag(
            &flagged.id,
            &rave_comments::Report::new(rave_comments::ReportReason::Spam, None).unwrap(),
        )
        .await
        .unwrap();
    erased_ids.insert(flagged.id);
    let pending = comments
        .import(vec![ImportComment {
            product: "p2".into(),
            id: None,
            status: Some(Status::Pending),
            comment: NewComment {
                attributes: Default::default(),
                media: vec![photo('c')],
                created_at: Some(Timestamp::parse("2025-01-02T03:04:05.006Z").unwrap()),
                ..new_comment(ERASED, "en", 5)
            },
            reply: None,
            verified_purchase: false,
            votes: Default::default(),
            source: None,
            incentivized: false,
            image_urls: Vec::new(),
            email: Some(Email::parse(ERASED_EMAIL).unwrap()),
        }])
        .await
        .unwrap();
    let imported_id = pending.ids[0].clone();
    assert_eq!(
        comments.author_email(&imported_id).await.unwrap(),
        Some(Email::parse(ERASED_EMAIL).unwrap())
    );
    erased_ids.extend(pending.ids);
    let mut kept_ids = BTreeSet::new();
    for (author, product, rating) in [(KEPT, "p1", 5), ("bob", "p1", 4), ("bob", "p2", 5)] {
        let media = match product {
            "p2" => vec![photo('b')],
            _ => Vec::new(),
        };
        let new = NewComment {
            media,
            ..new_comment(author, "en", rating)
        };
        let c = comments.create(product, new, None).await.unwrap().comment;
        kept_ids.insert(c.id);
    }
    let voted_kept = kept_ids.first().cloned().expect("kept comments");
    comments.vote(&voted_kept, "v1", true).await.unwrap();
    drain(comments, feed).await;
    let kept_votes = VoteCounts {
        helpful: 1,
        unhelpful: 0,
    };
    assert_eq!(comments.get(&voted_kept).await.unwrap().votes, kept_votes);
    assert_eq!(
        comments.get(&verified.id).await.unwrap().votes,
        VoteCounts {
            helpful: 1,
            unhelpful: 1
        }
    );
    let p1 = comments.product_stats("p1", None).await.unwrap();
    assert_eq!((p1.total, p1.verified_total), (5, 1));
    let p1_en = comments.product_stats("p1", Some("en")).await.unwrap();
    assert_eq!((p1_en.total, p1_en.verified_total), (4, 1));

    // The author's data, from the index: every status, paged.
    let listed: BTreeSet<String> = author_ids(comments, ERASED, 2).await.into_iter().collect();
    assert_eq!(listed, erased_ids);
    assert_eq!(author_ids(comments, KEPT, 100).await.len(), 1);

    for fill in ['a', 'b', 'c'] {
        let id = photo(fill).id;
        assert!(comments.photo_referenced(&id).await.unwrap(), "{fill}");
    }
    let erased = comments.erase_author(ERASED).await.unwrap();
    assert_eq!(erased.comments, erased_ids.len() as u64);
    // `b` is bob's too: only `a` and `c` lost their last reference.
    assert_eq!(
        erased.unreferenced_photos,
        vec![photo('a').id, photo('c').id]
    );
    assert!(!comments.photo_referenced(&photo('a').id).await.unwrap());
    assert!(comments.photo_referenced(&photo('b').id).await.unwrap());
    drain(comments, feed).await;

    assert!(author_ids(comments, ERASED, 100).await.is_empty());
    assert_eq!(
        comments.author_email(&imported_id).await.unwrap(),
        None,
        "the personal data kept apart goes with the comment"
    );
    for id in &erased_ids {
        assert!(matches!(
            comments.get(id).await,
            Err(CommentsError::NotFound)
        ));
    }
    let remaining = all_comments(comments).await;
    assert!(remaining.iter().all(|c| c.author != ERASED));
    let remaining_ids: BTreeSet<String> = remaining.iter().map(|c| c.id.clone()).collect();
    assert_eq!(remaining_ids, kept_ids, "the other authors' comments stay");
    for (verified, sort, product) in [false, true]
        .into_iter()
        .flat_map(|verified| [Sort::Newest, Sort::Helpful].map(|sort| (verified, sort)))
        .flat_map(|(verified, sort)| ["p1", "p2"].map(|product| (verified, sort, product)))
    {
        let page = comments
            .list(&ListRequest {
                sort,
                product,
                filter: Filter {
                    verified,
                    ..Filter::default()
                },
                limit: 100,
                cursor: None,
            })
            .await
            .unwrap();
        assert!(
            page.items.iter().all(|c| c.author != ERASED),
            "{sort:?} verified={verified} {product}"
        );
    }
    let p1 = comments.product_stats("p1", None).await.unwrap();
    assert_eq!((p1.total, p1.verified_total), (2, 0));
    let p1_de = comments.product_stats("p1", Some("de")).await.unwrap();
    assert_eq!(p1_de.total, 0);
    let global = comments.global_stats().await.unwrap();
    assert_eq!(global.comments_total, 3);
    assert_eq!(global.authors_total, 2, "{KEPT} and bob");
    // No vote of an erased comment is left: reconcile reports any vote
    // whose comment is gone.
    let report = comments.reconcile(2, false, &|_| {}).await.unwrap();
    assert!(report.drift.is_empty(), "{:?}", report.drift);
    assert_eq!(comments.get(&voted_kept).await.unwrap().votes, kept_votes);

    assert_eq!(
        comments.erase_author(ERASED).await.unwrap().comments,
        0,
        "idempotent"
    );
    // The order stays used: erasing the comment does not free it.
    assert!(matches!(
        comments
            .create_verified("p1", new_comment("carol", "en", 5), None, &order)
            .await,
        Err(CommentsError::Conflict(_))
    ));
}

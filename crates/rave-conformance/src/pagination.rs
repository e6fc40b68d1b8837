//! The pagination oracle, for every backend.
//!
//! Random comments (timestamps drawn from a few values, so many tie; skewed
//! languages and ratings) on two products; random filters and page sizes;
//! between pages, random inserts (some dated in the past, behind the walk's
//! position) and deletes. Half of the walks give the planner exact
//! per-rating counts, as the statistics will, so zero-count skipping,
//! share-sized limits and refills are exercised too.
//!
//! A quarter of the comments are verified purchases, and a third of the
//! walks list only those (the sparse verified indexes, sized by the counts
//! of all comments, as the statistics give them). Every walk reads in one
//! of the sorts: newest or oldest first, highest or lowest rating first
//! (newest first within a rating), most helpful first (newest first among
//! equal scores).
//!
//! A third of the comments are marked incentivized after they are created
//! (as an admin does), and half of the walks list only those, or only the
//! others: a FilterExpression on the same plan, which the executor reads
//! on past until each page is full.
//!
//! Two comments in five carry photos (published with the comment), and a
//! third of the walks list only those (`has_media`: the same plan on the
//! listing copies' `MEDIA#` partitions, sized by the counts of comments
//! with photos): every such walk sees exactly the comments with photos,
//! each once, in every sort and under every filter.
//!
//! Walks that count votes ([`check_walk_counting`]) also cast, replace and
//! withdraw votes between pages and run the aggregator after each. A
//! comment whose helpfulness changed during a `helpful` walk may show once
//! more or not at all; every property below holds for all the others (and
//! for every comment in the other sorts, which votes do not reorder).
//!
//! What must hold: no comment twice; strictly in the sort's order (time,
//! then id; rating first for highest and lowest; score first for helpful);
//! every page with a next cursor is full; the last page is not empty unless
//! the walk is empty or lost items to deletes; every comment that matched
//! when the walk began and was not deleted during it is returned; nothing
//! returned fails the filter.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::BoxFuture;

use proptest::prelude::*;
use rave_comments::{
    Comments, Filter, Language, ListRequest, NewComment, NewPhoto, PhotoId, Rating, RatingCounts,
    RatingSet, Sort, Timestamp, VoteCounts,
};
use rave_store::Store;

pub(crate) const LANGUAGES: [&str; 4] = ["en", "de", "fr", "fil"];

#[derive(Debug, Clone)]
pub struct Spec {
    pub(crate) product: usize,
    pub(crate) language: usize,
    pub(crate) rating: i64,
    /// Index into a handful of timestamps, or `None` for "now".
    pub(crate) time: Option<usize>,
    pub(crate) verified: bool,
    pub(crate) incentivized: bool,
    /// How many photos the comment is posted with.
    pub(crate) photos: usize,
}

pub(crate) fn time(index: usize) -> String {
    format!("2025-06-01T00:00:0{index}.000Z")
}

pub fn spec() -> impl Strategy<Value = Spec> {
    (
        0usize..2,
        prop_oneof![6 => Just(0usize), 2 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize)],
        prop_oneof![5 => Just(5i64), 3 => Just(1i64), 1 => Just(2i64), 1 => Just(3i64), 1 => Just(4i64)],
        proptest::option::weighted(0.9, 0usize..4),
        proptest::bool::weighted(0.25),
        proptest::bool::weighted(0.3),
        photo_count(),
    )
        .prop_map(
            |(product, language, rating, time, verified, incentivized, photos)| Spec {
                product,
                language,
                rating,
                time,
                verified,
                incentivized,
                photos,
            },
        )
}

/// How many photos a random comment has: none for three in five.
pub(crate) fn photo_count() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(0usize), 1 => Just(1usize), 1 => Just(2usize)]
}

/// `count` photos, as the upload stores them (distinct ids).
pub(crate) fn photos(count: usize) -> Vec<NewPhoto> {
    (0..count)
        .map(|i| NewPhoto {
            id: PhotoId::parse(&format!("{:064x}", i + 1)).expect("a photo id"),
            width: 640,
            height: 480,
        })
        .collect()
}

#[derive(Debug, Clone)]
pub enum Between {
    Nothing,
    Insert(Spec),
    DeleteNth(usize),
    /// One of a few voters votes on the nth comment (`None`: withdraws).
    VoteNth(usize, usize, Option<bool>),
}

pub fn between() -> impl Strategy<Value = Between> {
    prop_oneof![
        4 => Just(Between::Nothing),
        2 => spec().prop_map(Between::Insert),
        2 => any::<usize>().prop_map(Between::DeleteNth),
        3 => (any::<usize>(), 0usize..4, proptest::option::weighted(0.85, any::<bool>()))
            .prop_map(|(nth, voter, vote)| Between::VoteNth(nth, voter, vote)),
    ]
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) key: (String, String), // (created_at, id): the listing order
    pub(crate) product: usize,
    pub(crate) language: usize,
    pub(crate) rating: i64,
    pub(crate) verified: bool,
    pub(crate) incentivized: bool,
    /// Shows at least one published photo.
    pub(crate) with_media: bool,
    /// Each voter's vote (`true`: helpful).
    pub(crate) votes: BTreeMap<usize, bool>,
}

impl Row {
    fn counts(&self) -> VoteCounts {
        let helpful = self.votes.values().filter(|h| **h).count() as u64;
        VoteCounts {
            helpful,
            unhelpful: self.votes.len() as u64 - helpful,
        }
    }
}

/// Whether `a` comes before `b` in `sort`'s order (a total order: no two
/// comments share an id).
pub(crate) fn listed_before(sort: Sort, a: &Row, b: &Row) -> bool {
    match sort {
        Sort::Helpful => {
            let (a_score, b_score) = (a.counts().helpfulness(), b.counts().helpfulness());
            a_score > b_score || (a_score == b_score && a.key > b.key)
        }
        Sort::Newest => a.key > b.key,
        Sort::Oldest => a.key < b.key,
        Sort::Highest => (a.rating, &a.key) > (b.rating, &b.key),
        Sort::Lowest => a.rating < b.rating || (a.rating == b.rating && a.key > b.key),
    }
}

fn matches(row: &Row, product: usize, language: Option<usize>, ratings: &BTreeSet<i64>) -> bool {
    row.product == product
        && language.is_none_or(|l| row.language == l)
        && (ratings.is_empty() || ratings.contains(&row.rating))
}

/// A listing's filter in the model: product, language, ratings, verified
/// only, incentivized or not, with photos only.
type Listing<'a> = (
    usize,
    Option<usize>,
    &'a BTreeSet<i64>,
    bool,
    Option<bool>,
    bool,
);

fn listed(row: &Row, walk: Listing<'_>) -> bool {
    let (product, language, ratings, verified, incentivized, has_media) = walk;
    matches(row, product, language, ratings)
        && (!verified || row.verified)
        && incentivized.is_none_or(|wanted| row.incentivized == wanted)
        && (!has_media || row.with_media)
}

/// The per-rating counts the statistics give a listing: of all comments,
/// or of those with photos for a `has_media` one.
fn counts(rows: &[Row], product: usize, language: Option<usize>, has_media: bool) -> RatingCounts {
    let mut counts = [0u64; 5];
    for row in rows
        .iter()
        .filter(|r| matches(r, product, language, &BTreeSet::new()))
        .filter(|r| !has_media || r.with_media)
    {
        counts[(row.rating - 1) as usize] += 1;
    }
    RatingCounts(counts)
}

/// One random walk: the comments there are at the start, the filter and
/// page size, whether the planner gets counts, and what changes between pages.
#[derive(Debug, Clone)]
pub struct Walk {
    pub initial: Vec<Spec>,
    pub product: usize,
    pub language: Option<usize>,
    pub ratings: BTreeSet<i64>,
    /// Only verified purchases.
    pub verified: bool,
    /// Only incentivized reviews (`Some(true)`), or only the others.
    pub incentivized: Option<bool>,
    /// Only comments with photos.
    pub has_media: bool,
    pub sort: Sort,
    pub limit: usize,
    pub with_counts: bool,
    pub changes: Vec<Between>,
}

pub fn walk() -> impl Strategy<Value = Walk> {
    (
        proptest::collection::vec(spec(), 0..45),
        0usize..2,
        proptest::option::of(0usize..4),
        proptest::collection::btree_set(1i64..=5, 0..5),
        (
            proptest::bool::weighted(0.35),
            proptest::option::of(any::<bool>()),
            proptest::bool::weighted(0.35),
        ),
        proptest::sample::select(Sort::ALL.to_vec()),
        1usize..7,
        any::<bool>(),
        proptest::collection::vec(between(), 0..12),
    )
        .prop_map(
            |(
                initial,
                product,
                language,
                ratings,
                (verified, incentivized, has_media),
                sort,
                limit,
                with_counts,
                changes,
            )| {
                Walk {
                    initial,
                    product,
                    language,
                    ratings,
                    verified,
                    incentivized,
                    has_media,
                    sort,
                    limit,
                    with_counts,
                    changes,
                }
            },
        )
}

pub(crate) fn new_comment(language: &str, rating: i64) -> NewComment {
    NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: "alice".into(),
        language: language.into(),
        rating,
        title: Some("title".into()),
        body: "text".into(),
        created_at: None,
    }
}

pub(crate) fn at(mut comment: NewComment, created_at: &str) -> NewComment {
    comment.created_at = Some(Timestamp::parse(created_at).expect("time"));
    comment
}

/// Walks the cursors of one listing over `comments` (an empty table) and
/// checks every property the listing promises; votes are not cast.
pub async fn check_walk<S: Store>(comments: &Comments<S>, walk: Walk) -> Result<(), TestCaseError> {
    walk_listing(comments, walk, None).await
}

/// [`check_walk`] with votes between pages, counted by `aggregate` (which
/// runs the aggregator until it has applied every change) after each.
pub async fn check_walk_counting<'a, S: Store>(
    comments: &Comments<S>,
    walk: Walk,
    aggregate: &(dyn Fn() -> BoxFuture<'a, ()> + 'a),
) -> Result<(), TestCaseError> {
    walk_listing(comments, walk, Some(aggregate)).await
}

async fn walk_listing<'a, S: Store>(
    comments: &Comments<S>,
    walk: Walk,
    aggregate: Option<&(dyn Fn() -> BoxFuture<'a, ()> + 'a)>,
) -> Result<(), TestCaseError> {
    let Walk {
        initial,
        product,
        language,
        ratings,
        verified,
        incentivized,
        has_media,
        sort,
        limit,
        with_counts,
        changes,
    } = walk;
    let mut rows: Vec<Row> = Vec::new();
    let create = |spec: Spec| async move {
        let mut new = new_comment(LANGUAGES[spec.language], spec.rating);
        new.media = photos(spec.photos);
        if let Some(t) = spec.time {
            new = at(new, &time(t));
        }
        let product = format!("p{}", spec.product);
        let created = if spec.verified {
            comments
                .create_verified(&product, new, None, &crate::orders::fresh_order())
                .await
        } else {
            comments.create(&product, new, None).await
        };
        let mut c = created.unwrap().comment;
        assert_eq!(c.verified_purchase, spec.verified);
        if spec.incentivized {
            c = comments.set_incentivized(&c.id, true).await.unwrap();
        }
        Row {
            key: (c.created_at.to_string(), c.id),
            product: spec.product,
            language: spec.language,
            rating: spec.rating,
            verified: spec.verified,
            incentivized: c.incentivized,
            with_media: c.media.iter().any(|photo| photo.is_published()),
            votes: BTreeMap::new(),
        }
    };
    for s in initial {
        rows.push(create(s).await);
    }
    let filter = Filter {
        language: language.map(|l| Language::parse(LANGUAGES[l]).unwrap()),
        ratings: RatingSet::from_ratings(ratings.iter().map(|r| Rating::new(*r).unwrap())),
        verified,
        incentivized,
        has_media,
    };
    let listing = (
        product,
        language,
        &ratings,
        verified,
        incentivized,
        has_media,
    );
    let at_start: Vec<Row> = rows
        .iter()
        .filter(|r| listed(r, listing))
        .cloned()
        .collect();
    let product_id = format!("p{product}");
    let mut deleted = BTreeSet::new();
    let mut added = BTreeSet::new();
    let mut seen: Vec<Row> = Vec::new();
    // Comments whose helpfulness changed during the walk.
    let mut rescored: BTreeSet<String> = BTreeSet::new();
    let mut cursor: Option<String> = None;
    let mut changes = changes.into_iter();
    let mut pages = 0;
    loop {
        let request = ListRequest {
            sort,
            product: &product_id,
            filter: filter.clone(),
            limit,
            cursor: cursor.as_deref(),
        };
        let page = if with_counts {
            comments
                .list_with_counts(&request, Some(&counts(&rows, product, language, has_media)))
                .await
                .unwrap()
        } else {
            comments.list(&request).await.unwrap()
        };
        pages += 1;
        prop_assert!(page.items.len() <= limit);
        if page.next_cursor.is_some() {
            prop_assert_eq!(page.items.len(), limit, "a page with a next cursor is full");
        } else if deleted.is_empty() && pages > 1 && (sort != Sort::Helpful || rescored.is_empty())
        {
            // In the helpful order a vote between pages can move the only
            // comment left after the cursor ahead of it: the page it was
            // promised to is then legitimately empty.
            prop_assert!(!page.items.is_empty(), "no trailing empty page");
        }
        for c in &page.items {
            let row = rows.iter().find(|r| r.key.1 == c.id);
            let row = row.expect("returned comments exist");
            prop_assert!(listed(row, listing), "{:?} fails the filter", c);
            prop_assert_eq!(c.verified_purchase, row.verified);
            prop_assert_eq!(c.incentivized, row.incentivized);
            prop_assert_eq!(c.media.iter().any(|p| p.is_published()), row.with_media);
            seen.push(row.clone());
        }
        let Some(next) = page.next_cursor else { break };
        cursor = Some(next);
        match changes.next() {
            Some(Between::Insert(s)) => {
                let row = create(s).await;
                added.insert(row.key.1.clone());
                rows.push(row);
            }
            Some(Between::DeleteNth(n)) if !rows.is_empty() => {
                let row = rows.remove(n % rows.len());
                comments.delete(&row.key.1).await.unwrap();
                deleted.insert(row.key.1);
            }
            Some(Between::VoteNth(n, voter, vote)) if !rows.is_empty() => {
                if let Some(aggregate) = aggregate {
                    let count = rows.len();
                    let row = &mut rows[n % count];
                    let before = row.counts().helpfulness();
                    let id = row.key.1.clone();
                    let voter_id = format!("voter-{voter}");
                    match vote {
                        Some(helpful) => {
                            comments.vote(&id, &voter_id, helpful).await.unwrap();
                            row.votes.insert(voter, helpful);
                        }
                        None => {
                            comments.withdraw_vote(&id, &voter_id).await.unwrap();
                            row.votes.remove(&voter);
                        }
                    }
                    if row.counts().helpfulness() != before {
                        rescored.insert(id);
                    }
                    aggregate().await;
                }
            }
            _ => {}
        }
        prop_assert!(pages < 500, "the walk does not end");
    }
    // A listing of comments with photos holds exactly those there are now,
    // and again once one of them is deleted: each deleted comment took its
    // listing copy with it.
    if has_media {
        let mut rows = rows.clone();
        for round in 0..2 {
            if round == 1 {
                let Some(at) = rows.iter().position(|r| listed(r, listing)) else {
                    break;
                };
                comments.delete(&rows.remove(at).key.1).await.unwrap();
            }
            let page = comments
                .list(&ListRequest {
                    sort: Sort::Newest,
                    product: &product_id,
                    filter: filter.clone(),
                    limit: 100,
                    cursor: None,
                })
                .await
                .unwrap();
            let listed_now: BTreeSet<String> = page.items.into_iter().map(|c| c.id).collect();
            let expected: BTreeSet<String> = rows
                .iter()
                .filter(|r| listed(r, listing))
                .map(|r| r.key.1.clone())
                .collect();
            prop_assert_eq!(listed_now, expected, "the comments with photos now");
        }
    }
    // The properties hold for every comment, except, in the helpful order,
    // those whose score changed during the walk (their rows hold the final
    // score; they may show twice, or not at all).
    let exempt = |id: &String| sort == Sort::Helpful && rescored.contains(id);
    let row_of = |id: &String| rows.iter().find(|r| &r.key.1 == id);
    let seen: Vec<Row> = seen
        .into_iter()
        .filter(|r| !exempt(&r.key.1))
        // The model's votes as they are now (a row shown before a vote on
        // another comment holds the same score it has now).
        .map(|r| row_of(&r.key.1).cloned().unwrap_or(r))
        .collect();
    let at_start: Vec<Row> = at_start.into_iter().filter(|r| !exempt(&r.key.1)).collect();
    let unique: BTreeSet<_> = seen.iter().map(|r| &r.key).collect();
    prop_assert_eq!(unique.len(), seen.len(), "no comment twice");
    prop_assert!(
        seen.windows(2).all(|w| listed_before(sort, &w[0], &w[1])),
        "strictly in {:?} order: {:?}",
        sort,
        seen
    );
    let seen_ids: BTreeSet<&String> = seen.iter().map(|r| &r.key.1).collect();
    for row in &at_start {
        if !deleted.contains(&row.key.1) {
            prop_assert!(seen_ids.contains(&row.key.1), "skipped {:?}", row);
        }
    }
    for id in seen.iter().map(|r| &r.key.1) {
        let existed = at_start.iter().any(|r| &r.key.1 == id);
        prop_assert!(existed || added.contains(id), "{} came from nowhere", id);
    }
    Ok(())
}

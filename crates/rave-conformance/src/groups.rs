//! The product families' oracle, for every backend.
//!
//! Six products, each a variant of one of two groups or of none; random
//! comments on them (the pagination oracle's: tied times, skewed languages
//! and ratings, a quarter verified); a walk of one group's listing in a
//! random order, filter and page size, with comments added and deleted
//! and products moved between the groups (or out of them) between pages.
//!
//! A move's job (which puts the product's comments in its new family) runs
//! only after the next page has been read, so pages are read during moves.
//!
//! What must hold for the walk: no comment twice; strictly in the order;
//! every page with a next cursor is full; every comment shown belongs to a
//! variant of the group when its page was read (or, its product's move
//! not done yet, did before the move) and passes the filter; every comment
//! that matched at the start, was not deleted and whose product stayed in
//! the group throughout is shown, each with its variant. Once every move's
//! job is done, a second walk with nothing changing shows exactly the
//! comments of the group's members that pass the filter, each once, in
//! order. And afterwards, once the aggregator has applied every change:
//! each group's statistics (overall and per language) are exactly those
//! of its members' comments now, each variant's are its own, and
//! `reconcile` finds no drift.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::BoxFuture;
use proptest::prelude::*;
use rave_comments::{
    Comments, Filter, Language, ListRequest, ProductRecord, Rating, RatingSet, Sort,
};
use rave_store::Store;

use crate::pagination::{
    LANGUAGES, Row, Spec, at, listed_before, new_comment, photo_count, photos, time,
};

const PRODUCTS: usize = 6;
const GROUPS: usize = 2;

fn product_id(product: usize) -> String {
    format!("v{product}")
}

fn group_id(group: usize) -> String {
    format!("g{group}")
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..PRODUCTS,
        prop_oneof![6 => Just(0usize), 2 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize)],
        prop_oneof![5 => Just(5i64), 3 => Just(1i64), 1 => Just(2i64), 1 => Just(3i64), 1 => Just(4i64)],
        proptest::option::weighted(0.9, 0usize..4),
        proptest::bool::weighted(0.25),
        photo_count(),
    )
        .prop_map(|(product, language, rating, time, verified, photos)| Spec {
            product,
            language,
            rating,
            time,
            verified,
            incentivized: false,
            photos,
        })
}

#[derive(Debug, Clone)]
pub enum GroupChange {
    Nothing,
    Insert(Spec),
    DeleteNth(usize),
    /// The product becomes a variant of the group (`None`: of none).
    Move(usize, Option<usize>),
}

fn change() -> impl Strategy<Value = GroupChange> {
    prop_oneof![
        2 => Just(GroupChange::Nothing),
        2 => spec().prop_map(GroupChange::Insert),
        2 => any::<usize>().prop_map(GroupChange::DeleteNth),
        3 => (0..PRODUCTS, proptest::option::of(0..GROUPS))
            .prop_map(|(product, group)| GroupChange::Move(product, group)),
    ]
}

/// One walk of a group's listing.
#[derive(Debug, Clone)]
pub struct GroupWalk {
    pub initial: Vec<Spec>,
    /// Each product's group at the start.
    pub membership: Vec<Option<usize>>,
    pub group: usize,
    pub language: Option<usize>,
    pub ratings: BTreeSet<i64>,
    pub verified: bool,
    /// Only comments with photos.
    pub has_media: bool,
    pub sort: Sort,
    pub limit: usize,
    pub changes: Vec<GroupChange>,
}

pub fn group_walk() -> impl Strategy<Value = GroupWalk> {
    (
        proptest::collection::vec(spec(), 0..50),
        proptest::collection::vec(proptest::option::weighted(0.8, 0..GROUPS), PRODUCTS),
        0..GROUPS,
        proptest::option::of(0usize..4),
        proptest::collection::btree_set(1i64..=5, 0..5),
        (proptest::bool::weighted(0.3), proptest::bool::weighted(0.3)),
        proptest::sample::select(Sort::ALL.to_vec()),
        1usize..7,
        proptest::collection::vec(change(), 0..14),
    )
        .prop_map(
            |(
                initial,
                membership,
                group,
                language,
                ratings,
                (verified, has_media),
                sort,
                limit,
                changes,
            )| {
                GroupWalk {
                    initial,
                    membership,
                    group,
                    language,
                    ratings,
                    verified,
                    has_media,
                    sort,
                    limit,
                    changes,
                }
            },
        )
}

async fn set_group<S: Store>(comments: &Comments<S>, product: usize, group: Option<usize>) {
    let record = ProductRecord {
        name: format!("Variant {product}"),
        group: group.map(group_id),
        ..ProductRecord::default()
    };
    comments
        .put_product(&product_id(product), record)
        .await
        .expect("a move between groups");
}

/// A page of the group's listing from `cursor`.
async fn group_page<S: Store>(
    comments: &Comments<S>,
    group: &str,
    filter: &Filter,
    sort: Sort,
    limit: usize,
    cursor: Option<&str>,
) -> rave_comments::ListPage {
    let request = ListRequest {
        sort,
        product: group,
        filter: filter.clone(),
        limit,
        cursor,
    };
    comments.list_group(&request).await.unwrap()
}

/// Walks a group's listing over `comments` (an empty table) and checks its
/// properties, then, after `aggregate` (which runs the aggregator until it
/// has applied every change), the groups' statistics and a reconcile.
pub async fn check_group_walk<'a, S: Store>(
    comments: &Comments<S>,
    walk: GroupWalk,
    aggregate: &(dyn Fn() -> BoxFuture<'a, ()> + 'a),
) -> Result<(), TestCaseError> {
    let GroupWalk {
        initial,
        mut membership,
        group,
        language,
        ratings,
        verified,
        has_media,
        sort,
        limit,
        changes,
    } = walk;
    for (product, group) in membership.iter().enumerate() {
        set_group(comments, product, *group).await;
    }
    let create = |spec: Spec| async move {
        let mut new = new_comment(LANGUAGES[spec.language], spec.rating);
        new.media = photos(spec.photos);
        if let Some(t) = spec.time {
            new = at(new, &time(t));
        }
        let product = product_id(spec.product);
        let created = if spec.verified {
            comments
                .create_verified(&product, new, None, &crate::orders::fresh_order())
                .await
        } else {
            comments.create(&product, new, None).await
        };
        let c = created.unwrap().comment;
        Row {
            key: (c.created_at.to_string(), c.id),
            product: spec.product,
            language: spec.language,
            rating: spec.rating,
            verified: spec.verified,
            incentivized: false,
            with_media: c.media.iter().any(|photo| photo.is_published()),
            votes: BTreeMap::new(),
        }
    };
    let mut rows: Vec<Row> = Vec::new();
    for spec in initial {
        rows.push(create(spec).await);
    }
    let passes = |row: &Row| {
        language.is_none_or(|l| row.language == l)
            && (ratings.is_empty() || ratings.contains(&row.rating))
            && (!verified || row.verified)
            && (!has_media || row.with_media)
    };
    let filter = Filter {
        language: language.map(|l| Language::parse(LANGUAGES[l]).unwrap()),
        ratings: RatingSet::from_ratings(ratings.iter().map(|r| Rating::new(*r).unwrap())),
        verified,
        incentivized: None,
        has_media,
    };
    let at_start: Vec<Row> = rows
        .iter()
        .filter(|r| membership[r.product] == Some(group) && passes(r))
        .cloned()
        .collect();
    let group_name = group_id(group);
    let mut moved: BTreeSet<usize> = BTreeSet::new();
    // Products whose move's job has not run yet, with their group before.
    let mut moving: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    let mut deleted = BTreeSet::new();
    let mut seen: Vec<Row> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut changes = changes.into_iter();
    let mut pages = 0;
    loop {
        let page = group_page(
            comments,
            &group_name,
            &filter,
            sort,
            limit,
            cursor.as_deref(),
        )
        .await;
        pages += 1;
        prop_assert!(page.items.len() <= limit);
        if page.next_cursor.is_some() {
            prop_assert_eq!(page.items.len(), limit, "a page with a next cursor is full");
        }
        for c in &page.items {
            let row = rows.iter().find(|r| r.key.1 == c.id);
            let row = row.expect("returned comments exist");
            prop_assert_eq!(
                c.product_id.as_str(),
                product_id(row.product),
                "shown with its variant"
            );
            prop_assert!(
                membership[row.product] == Some(group)
                    || moving.get(&row.product) == Some(&Some(group)),
                "{:?} is not of a variant of the group",
                c
            );
            prop_assert!(passes(row), "{:?} fails the filter", c);
            seen.push(row.clone());
        }
        // The jobs of the moves made before this page run now.
        if !std::mem::take(&mut moving).is_empty() {
            comments.run_pending_moves().await.unwrap();
            prop_assert!(comments.pending_moves().await.unwrap().is_empty());
        }
        let Some(next) = page.next_cursor else { break };
        cursor = Some(next);
        match changes.next() {
            Some(GroupChange::Insert(spec)) => rows.push(create(spec).await),
            Some(GroupChange::DeleteNth(n)) if !rows.is_empty() => {
                let row = rows.remove(n % rows.len());
                comments.delete(&row.key.1).await.unwrap();
                deleted.insert(row.key.1);
            }
            Some(GroupChange::Move(product, to)) => {
                set_group(comments, product, to).await;
                if membership[product] != to {
                    moved.insert(product);
                    moving.entry(product).or_insert(membership[product]);
                }
                membership[product] = to;
            }
            _ => {}
        }
        prop_assert!(pages < 500, "the walk does not end");
    }
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
        if !deleted.contains(&row.key.1) && !moved.contains(&row.product) {
            prop_assert!(seen_ids.contains(&row.key.1), "skipped {:?}", row);
        }
    }

    // Every move's job done: a walk shows the members' comments, each once.
    let mut expected: Vec<&Row> = rows
        .iter()
        .filter(|r| membership[r.product] == Some(group) && passes(r))
        .collect();
    expected.sort_by(
        |a, b| match (listed_before(sort, a, b), listed_before(sort, b, a)) {
            (true, _) => std::cmp::Ordering::Less,
            (_, true) => std::cmp::Ordering::Greater,
            _ => std::cmp::Ordering::Equal,
        },
    );
    let mut walked: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = group_page(
            comments,
            &group_name,
            &filter,
            sort,
            limit,
            cursor.as_deref(),
        )
        .await;
        walked.extend(page.items.iter().map(|c| c.id.clone()));
        prop_assert!(walked.len() <= rows.len(), "the walk does not end");
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    prop_assert_eq!(
        walked,
        expected.iter().map(|r| r.key.1.clone()).collect::<Vec<_>>(),
        "after the moves, every comment of the members once, in order"
    );

    // The statistics, once the aggregator has caught up, and a recount.
    aggregate().await;
    for group in 0..GROUPS {
        for language in std::iter::once(None).chain((0..LANGUAGES.len()).map(Some)) {
            let code = language.map(|l| LANGUAGES[l]);
            let stats = comments.group_stats(&group_id(group), code).await.unwrap();
            let members: Vec<usize> = (0..PRODUCTS)
                .filter(|p| membership[*p] == Some(group))
                .collect();
            let variants: Vec<String> = stats
                .variants
                .iter()
                .map(|v| v.product_id.to_string())
                .collect();
            prop_assert_eq!(
                variants,
                members.iter().map(|p| product_id(*p)).collect::<Vec<_>>()
            );
            let mut expected = [0u64; 5];
            let (mut expected_verified, mut expected_media) = (0, 0);
            for row in rows.iter().filter(|r| {
                membership[r.product] == Some(group) && language.is_none_or(|l| r.language == l)
            }) {
                expected[(row.rating - 1) as usize] += 1;
                expected_verified += u64::from(row.verified);
                expected_media += u64::from(row.with_media);
            }
            prop_assert_eq!(
                stats.stats.counts.0,
                expected,
                "group {} in {:?}",
                group,
                code
            );
            prop_assert_eq!(stats.stats.verified_total, expected_verified);
            prop_assert_eq!(stats.stats.media_total, expected_media);
            prop_assert_eq!(stats.stats.total, expected.iter().sum::<u64>());
        }
    }
    let report = comments.reconcile(2, false, &|_| {}).await.unwrap();
    prop_assert!(report.drift.is_empty(), "drift: {:?}", report.drift);
    Ok(())
}

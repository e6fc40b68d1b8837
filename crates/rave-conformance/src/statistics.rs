//! The statistics oracle, for every backend and its change feed.
//!
//! Random creates (some verified purchases, some answering the products'
//! attributes: a `quality` rating and a `fit` choice), edits, deletes, flags,
//! approvals (pre-moderation, so pending comments come and go), helpful
//! votes cast, replaced and withdrawn, interleaved with aggregator steps, consumer
//! restarts (a new feed from the durable position), crashes between reading
//! a batch and committing it, and a second consumer racing the first. Once the aggregator has drained the feed, every
//! product's counts (overall and per language, of all comments and of the
//! verified ones by rating, and each attribute's distribution), the
//! leaderboards and the
//! global aggregates must equal a recount of the comments (and of those
//! showing a published photo: comments are posted with photos, which wait
//! with their comment and are published by its approval), every product's
//! listing of comments with photos must hold exactly those, every comment's
//! vote counts must equal the votes the model kept, and `reconcile` must
//! find no drift.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use proptest::prelude::*;
use rave_comments::{
    AttributeDeclaration, AttributeInput, AttributeKind, AttributeName, Comment, CommentPatch,
    Comments, CommentsError, DeclaredAttributes, Filter, ListRequest, NewComment, ProductRecord,
    VoteCounts,
};
use rave_store::{ChangeFeed, Store};

const PRODUCTS: [&str; 3] = ["a", "b", "c"];
const LANGUAGES: [&str; 3] = ["en", "de", "fr"];
const AUTHORS: [&str; 4] = ["ann", "bob", "cy", "dee"];
const VOTERS: [&str; 3] = ["v1", "v2", "v3"];
/// The choices of the `fit` attribute every product declares.
const FIT: [&str; 3] = ["runs_small", "true_to_size", "runs_large"];

/// Gives every product a record asking for `quality` (a rating) and `fit`.
async fn declare_attributes<S: Store>(comments: &Comments<S>) {
    let declared = DeclaredAttributes::new(vec![
        AttributeDeclaration {
            name: AttributeName::parse("quality").expect("a name"),
            kind: AttributeKind::Rating,
        },
        AttributeDeclaration {
            name: AttributeName::parse("fit").expect("a name"),
            kind: AttributeKind::Choice(FIT.map(str::to_owned).to_vec()),
        },
    ])
    .expect("a declaration");
    for product in PRODUCTS {
        let record = ProductRecord {
            name: format!("Product {product}"),
            attributes: declared.clone(),
            ..ProductRecord::default()
        };
        comments
            .put_product(product, record)
            .await
            .expect("a product record");
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    Create {
        product: usize,
        language: usize,
        rating: i64,
        author: usize,
        verified: bool,
        /// A `quality` answer (1–5), if any.
        quality: Option<i64>,
        /// A `fit` answer (an index into [`FIT`]), if any.
        fit: Option<usize>,
        /// How many photos it is posted with.
        photos: usize,
    },
    Edit {
        nth: usize,
        language: Option<usize>,
        rating: Option<i64>,
    },
    Delete {
        nth: usize,
    },
    Flag {
        nth: usize,
    },
    Approve {
        nth: usize,
    },
    /// A voter votes on a comment (replacing an earlier vote).
    Vote {
        nth: usize,
        voter: usize,
        helpful: bool,
    },
    /// A voter withdraws a vote (cast or not).
    Withdraw {
        nth: usize,
        voter: usize,
    },
    /// One aggregator step.
    Aggregate,
    /// The consumer restarts from its durable position.
    Restart,
    /// The consumer reads a batch and crashes before committing anything
    /// (before or after working out its effects: nothing is written either way).
    CrashAfterRead,
    /// A second consumer, started now, takes a step too.
    Race,
    /// The consumer catches up with everything written so far, reading
    /// ahead where the feed can.
    CatchUp,
}

/// The operations that write comments.
fn write_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..3usize, 1..=5i64, 0..4usize, proptest::bool::weighted(0.3),
              proptest::option::of(1..=5i64), proptest::option::of(0..FIT.len()),
              crate::pagination::photo_count())
            .prop_map(|(product, language, rating, author, verified, quality, fit, photos)| {
                Op::Create { product, language, rating, author, verified, quality, fit, photos }
            }),
        2 => (any::<usize>(), proptest::option::of(0..3usize), proptest::option::of(1..=5i64))
            .prop_map(|(nth, language, rating)| Op::Edit { nth, language, rating }),
        1 => any::<usize>().prop_map(|nth| Op::Delete { nth }),
        1 => any::<usize>().prop_map(|nth| Op::Flag { nth }),
        3 => any::<usize>().prop_map(|nth| Op::Approve { nth }),
        4 => (any::<usize>(), 0..3usize, any::<bool>())
            .prop_map(|(nth, voter, helpful)| Op::Vote { nth, voter, helpful }),
        1 => (any::<usize>(), 0..3usize).prop_map(|(nth, voter)| Op::Withdraw { nth, voter }),
    ]
}

pub fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        13 => write_op(),
        2 => Just(Op::Aggregate),
        1 => Just(Op::Restart),
        1 => Just(Op::CrashAfterRead),
        1 => Just(Op::Race),
        1 => Just(Op::CatchUp),
    ];
    proptest::collection::vec(op, 1..40)
}

/// Writes, then a catch-up of all of them: for a feed whose commits carry
/// a few effects, so that the catch-up runs batch after batch, each worked
/// out while the one before commits.
pub fn catch_up_ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(write_op(), 1..40).prop_map(|mut ops| {
        ops.push(Op::CatchUp);
        ops
    })
}

/// How many aggregators the sharded oracle runs at the same time.
pub const AGGREGATORS: usize = 3;
/// How many shards the sharded oracle's feed has.
pub const SHARDS: u64 = 4;

/// What one aggregator does in a round of the sharded oracle.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Applies the next batch of the shard (retrying later if it loses a race).
    Apply,
    /// Reads a batch of the shard and crashes before committing it; the
    /// aggregator starts again from the shard's durable position.
    CrashAfterRead,
}

#[derive(Debug, Clone)]
pub enum ShardedOp {
    Write(Op),
    /// Every aggregator takes a step on a shard of its choice, all at once.
    Round([(u64, Step); AGGREGATORS]),
}

pub fn sharded_ops() -> impl Strategy<Value = Vec<ShardedOp>> {
    let step = (
        0..SHARDS,
        prop_oneof![4 => Just(Step::Apply), 1 => Just(Step::CrashAfterRead)],
    );
    let op = prop_oneof![
        2 => write_op().prop_map(ShardedOp::Write),
        1 => proptest::array::uniform3(step).prop_map(ShardedOp::Round),
    ];
    proptest::collection::vec(op, 1..60)
}

/// Steps until the feed has nothing left: three idle steps in a row.
pub async fn drain<S: Store, F: ChangeFeed>(comments: &Comments<S>, feed: &F) {
    let mut idle = 0;
    while idle < 3 {
        let applied = comments
            .aggregate_once(feed, Duration::from_millis(30))
            .await
            .expect("aggregator step");
        idle = if applied == 0 { idle + 1 } else { 0 };
    }
}

/// (product, language or `None` for all) → comments per rating.
type Recount = BTreeMap<(String, Option<String>), [u64; 5]>;

fn recount(all: &[Comment]) -> (Recount, BTreeMap<String, u64>) {
    let mut stats = Recount::new();
    let mut authors: BTreeMap<String, u64> = BTreeMap::new();
    for c in all.iter().filter(|c| c.status.is_visible()) {
        let rating = usize::from(c.rating.get()) - 1;
        stats.entry((c.product_id.to_string(), None)).or_default()[rating] += 1;
        stats
            .entry((c.product_id.to_string(), Some(c.language.to_string())))
            .or_default()[rating] += 1;
        *authors.entry(c.author.clone()).or_default() += 1;
    }
    (stats, authors)
}

/// (product, language or `None` for all) → attribute → answer → comments.
type AttributeRecount = BTreeMap<(String, Option<String>), BTreeMap<String, BTreeMap<String, u64>>>;

fn recount_attributes(all: &[Comment]) -> AttributeRecount {
    let mut counts = AttributeRecount::new();
    for c in all.iter().filter(|c| c.status.is_visible()) {
        for language in [None, Some(c.language.to_string())] {
            let product = counts
                .entry((c.product_id.to_string(), language))
                .or_default();
            for (name, answer) in c.attributes.iter() {
                *product
                    .entry(name.to_string())
                    .or_default()
                    .entry(answer.key())
                    .or_default() += 1;
            }
        }
    }
    counts
}

/// Runs `ops` on `comments` (an empty table with pre-moderation) with
/// consumers made by `open_feed`, then checks the statistics against a recount.
pub async fn check_statistics<S, F, Open, Opening>(
    comments: &Comments<S>,
    open_feed: Open,
    ops: Vec<Op>,
) -> Result<(), TestCaseError>
where
    S: Store,
    F: ChangeFeed,
    Open: Fn() -> Opening,
    Opening: Future<Output = F>,
{
    declare_attributes(comments).await;
    let mut consumer = open_feed().await;
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Aggregate => {
                comments
                    .aggregate_once(&consumer, Duration::from_millis(1))
                    .await
                    .expect("aggregator step");
            }
            Op::CatchUp => {
                comments
                    .catch_up(&consumer, |_| {})
                    .await
                    .expect("catch up");
            }
            Op::Restart => consumer = open_feed().await,
            Op::CrashAfterRead => {
                drop(
                    consumer
                        .next(500, Duration::from_millis(1))
                        .await
                        .expect("read a batch"),
                );
                consumer = open_feed().await;
            }
            Op::Race => {
                let second = open_feed().await;
                comments
                    .aggregate_once(&second, Duration::from_millis(1))
                    .await
                    .expect("second consumer");
                comments
                    .aggregate_once(&consumer, Duration::from_millis(1))
                    .await
                    .expect("aggregator step");
            }
            write => apply_write(comments, &mut model, &write).await,
        }
    }
    drain(comments, &consumer).await;
    check_recount(comments, &model).await
}

/// Runs `ops` on `comments` (an empty table with pre-moderation) with
/// [`AGGREGATORS`] aggregators applying a feed of [`SHARDS`] shards
/// concurrently (`open_shard(s)` opens a consumer of shard `s`; every
/// aggregator reads every shard, so they race on shards as well as on the
/// statistics items that records of different shards share), then checks
/// the statistics against a recount.
pub async fn check_statistics_sharded<S, F, Open, Opening>(
    comments: &Comments<S>,
    open_shard: Open,
    ops: Vec<ShardedOp>,
) -> Result<(), TestCaseError>
where
    S: Store,
    F: ChangeFeed,
    Open: Fn(u64) -> Opening,
    Opening: Future<Output = F>,
{
    declare_attributes(comments).await;
    let mut aggregators: Vec<Vec<F>> = Vec::new();
    for _ in 0..AGGREGATORS {
        let mut feeds = Vec::new();
        for shard in 0..SHARDS {
            feeds.push(open_shard(shard).await);
        }
        aggregators.push(feeds);
    }
    let mut model = Model::default();
    for op in ops {
        match op {
            ShardedOp::Write(op) => apply_write(comments, &mut model, &op).await,
            ShardedOp::Round(steps) => {
                let steps = aggregators.iter().zip(steps).map(|(feeds, (shard, step))| {
                    let feed = &feeds[shard as usize];
                    async move {
                        match step {
                            Step::Apply => {
                                comments
                                    .aggregate_once(feed, Duration::from_millis(1))
                                    .await
                                    .expect("aggregator step");
                                None
                            }
                            Step::CrashAfterRead => {
                                drop(
                                    feed.next(500, Duration::from_millis(1))
                                        .await
                                        .expect("read a batch"),
                                );
                                Some(shard)
                            }
                        }
                    }
                });
                let crashed = futures::future::join_all(steps).await;
                for (feeds, crashed) in aggregators.iter_mut().zip(crashed) {
                    if let Some(shard) = crashed {
                        feeds[shard as usize] = open_shard(shard).await;
                    }
                }
            }
        }
    }
    for feed in &aggregators[0] {
        drain(comments, feed).await;
    }
    check_recount(comments, &model).await
}

/// What the writes left: the comments' ids, and each voter's vote.
#[derive(Debug, Default)]
struct Model {
    ids: Vec<String>,
    /// (comment id, voter) → helpful
    votes: BTreeMap<(String, &'static str), bool>,
}

impl Model {
    fn counts(&self, id: &str) -> VoteCounts {
        let mut counts = VoteCounts::default();
        for ((comment, _), helpful) in &self.votes {
            if comment == id {
                match helpful {
                    true => counts.helpful += 1,
                    false => counts.unhelpful += 1,
                }
            }
        }
        counts
    }
}

/// Applies one of the writing operations (the others change nothing).
async fn apply_write<S: Store>(comments: &Comments<S>, model: &mut Model, op: &Op) {
    let ids = &mut model.ids;
    let pick =
        |ids: &Vec<String>, nth: usize| (!ids.is_empty()).then(|| ids[nth % ids.len()].clone());
    match *op {
        Op::Create {
            product,
            language,
            rating,
            author,
            verified,
            quality,
            fit,
            photos,
        } => {
            let answers = quality
                .map(|q| ("quality".to_owned(), AttributeInput::Integer(q)))
                .into_iter()
                .chain(fit.map(|f| ("fit".to_owned(), AttributeInput::Text(FIT[f].to_owned()))))
                .collect();
            let new = NewComment {
                media: crate::pagination::photos(photos),
                attributes: answers,
                author: AUTHORS[author].into(),
                language: LANGUAGES[language].into(),
                rating,
                title: None,
                body: "text".into(),
                created_at: None,
            };
            let created = if verified {
                comments
                    .create_verified(PRODUCTS[product], new, None, &crate::orders::fresh_order())
                    .await
            } else {
                comments.create(PRODUCTS[product], new, None).await
            };
            ids.push(created.expect("create").comment.id);
        }
        Op::Edit {
            nth,
            language,
            rating,
        } => {
            if let Some(id) = pick(ids, nth) {
                let patch = CommentPatch {
                    language: language.map(|l| LANGUAGES[l].to_owned()),
                    rating,
                    ..CommentPatch::default()
                };
                comments.edit(&id, &patch).await.expect("edit");
            }
        }
        Op::Delete { nth } => {
            if let Some(id) = pick(ids, nth) {
                comments.delete(&id).await.expect("delete");
                ids.retain(|i| *i != id);
                model.votes.retain(|(comment, _), _| *comment != id);
            }
        }
        Op::Flag { nth } => {
            if let Some(id) = pick(ids, nth) {
                comments
                    .flag(
                        &id,
                        &rave_comments::Report::new(rave_comments::ReportReason::Other, None)
                            .unwrap(),
                    )
                    .await
                    .expect("flag");
            }
        }
        Op::Approve { nth } => {
            if let Some(id) = pick(ids, nth) {
                comments.approve(&id).await.expect("approve");
            }
        }
        Op::Vote {
            nth,
            voter,
            helpful,
        } => {
            if let Some(id) = pick(ids, nth) {
                // A pending comment takes no votes.
                match comments.vote(&id, VOTERS[voter], helpful).await {
                    Ok(()) => {
                        model.votes.insert((id, VOTERS[voter]), helpful);
                    }
                    Err(CommentsError::NotFound) => {}
                    Err(e) => panic!("vote: {e}"),
                }
            }
        }
        Op::Withdraw { nth, voter } => {
            if let Some(id) = pick(ids, nth) {
                match comments.withdraw_vote(&id, VOTERS[voter]).await {
                    Ok(()) => {
                        model.votes.remove(&(id, VOTERS[voter]));
                    }
                    Err(CommentsError::NotFound) => {}
                    Err(e) => panic!("withdraw a vote: {e}"),
                }
            }
        }
        Op::Aggregate | Op::Restart | Op::CrashAfterRead | Op::Race | Op::CatchUp => {}
    }
}

/// Every statistic, leaderboard and aggregate against a recount of the
/// comments, every comment's vote counts against the model's votes, and
/// `reconcile` finding no drift.
async fn check_recount<S: Store>(
    comments: &Comments<S>,
    model: &Model,
) -> Result<(), TestCaseError> {
    let mut all = Vec::new();
    let mut start = None;
    loop {
        let (page, next) = comments.export_page(0, 1, start).await.expect("export");
        all.extend(page);
        match next {
            Some(n) => start = Some(n),
            None => break,
        }
    }
    for comment in &all {
        prop_assert_eq!(comment.votes, model.counts(&comment.id), "{}", &comment.id);
    }
    let (expected, authors) = recount(&all);
    let verified_comments: Vec<Comment> = all
        .iter()
        .filter(|c| c.verified_purchase)
        .cloned()
        .collect();
    let (verified, _) = recount(&verified_comments);
    let attributes = recount_attributes(&all);
    let with_media: Vec<Comment> = all
        .iter()
        .filter(|c| c.media.iter().any(|p| p.is_published()))
        .cloned()
        .collect();
    let (media, _) = recount(&with_media);
    for product in PRODUCTS {
        for language in [None, Some("en"), Some("de"), Some("fr")] {
            let stats = comments
                .product_stats(product, language)
                .await
                .expect("stats");
            let want = expected
                .get(&(product.to_owned(), language.map(str::to_owned)))
                .copied()
                .unwrap_or_default();
            prop_assert_eq!(stats.counts.0, want, "{} {:?}", product, language);
            let key = (product.to_owned(), language.map(str::to_owned));
            let want_verified = verified.get(&key).copied().unwrap_or_default();
            prop_assert_eq!(
                (stats.verified_total, stats.verified_counts.0),
                (want_verified.iter().sum::<u64>(), want_verified),
                "verified {} {:?}",
                product,
                language
            );
            let want_media = media.get(&key).copied().unwrap_or_default();
            prop_assert_eq!(
                (stats.media_total, stats.media_counts.0),
                (want_media.iter().sum::<u64>(), want_media),
                "with photos {} {:?}",
                product,
                language
            );
            let counted: BTreeMap<String, BTreeMap<String, u64>> = stats
                .attributes
                .iter()
                .map(|(name, answers)| {
                    let given = answers
                        .distribution
                        .iter()
                        .filter(|(_, count)| **count > 0)
                        .map(|(answer, count)| (answer.clone(), *count))
                        .collect();
                    (name.to_string(), given)
                })
                .collect();
            prop_assert_eq!(
                &counted,
                &attributes.get(&key).cloned().unwrap_or_default(),
                "attributes {} {:?}",
                product,
                language
            );
        }
    }
    for language in [None, Some("en"), Some("de"), Some("fr")] {
        let got: Vec<(String, u64)> = comments
            .leaderboard(100, language)
            .await
            .expect("leaderboard")
            .into_iter()
            .map(|l| (l.product_id, l.five_star))
            .collect();
        // The brute-force board: most 5-star first, ties by product id.
        let mut want: Vec<(String, u64)> = expected
            .iter()
            .filter(|((_, l), c)| l.as_deref() == language && c[4] > 0)
            .map(|((p, _), c)| (p.clone(), c[4]))
            .collect();
        want.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        prop_assert_eq!(&got, &want);
        let top = comments
            .leaderboard(1, language)
            .await
            .expect("leaderboard top 1");
        prop_assert_eq!(top.len(), want.len().min(1));
        // A cut may fall among tied products: the top row is one of those
        // with the most 5-star comments (the contract leaves ties in any order).
        if let (Some(top), Some(first)) = (top.first(), want.first()) {
            prop_assert_eq!(top.five_star, first.1);
            prop_assert!(want.contains(&(top.product_id.clone(), top.five_star)));
        }
    }
    // Every listing of comments with photos holds exactly the visible ones
    // showing a published photo: the listing copies followed every edit,
    // flag, approval, vote and delete.
    for product in PRODUCTS {
        let page = comments
            .list(&ListRequest {
                product,
                filter: Filter {
                    has_media: true,
                    ..Filter::default()
                },
                sort: Default::default(),
                limit: 100,
                cursor: None,
            })
            .await
            .expect("a listing with photos");
        let listed: Vec<&str> = page.items.iter().map(|c| c.id.as_str()).collect();
        let mut want: Vec<&Comment> = with_media
            .iter()
            .filter(|c| c.status.is_visible() && c.product_id.as_str() == product)
            .collect();
        want.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        let want: Vec<&str> = want.iter().map(|c| c.id.as_str()).collect();
        prop_assert_eq!(listed, want, "with photos on {}", product);
        prop_assert!(page.items.iter().all(|c| c.votes == model.counts(&c.id)));
    }
    let global = comments.global_stats().await.expect("global stats");
    let visible = all.iter().filter(|c| c.status.is_visible()).count() as u64;
    prop_assert_eq!(global.comments_total, visible);
    prop_assert_eq!(
        global.products_total,
        expected.keys().filter(|(_, l)| l.is_none()).count() as u64
    );
    prop_assert_eq!(global.authors_total, authors.len() as u64);
    let mut buckets = [0u64; 10];
    for count in authors.values() {
        buckets[(*count).min(10) as usize - 1] += 1;
    }
    prop_assert_eq!(global.authors_by_comment_count, buckets);
    let report = comments
        .reconcile(3, false, &|_| {})
        .await
        .expect("reconcile");
    prop_assert!(report.drift.is_empty(), "drift: {:?}", report.drift);
    Ok(())
}

//! rave's comments domain: the single-table design of the articles, as a
//! library that knows nothing of HTTP and nothing of which backend stores
//! the data — it speaks to a [`rave_store::Store`].
//!
//! [`Comments`] is a thin façade over parts with one job each:
//!
//! * `table` — the layout: one codec per item kind (the statistics items'
//!   under `table::stats`, one per kind); the only module that names an
//!   attribute or builds a key.
//! * `access` — the one door to the store: the table's name, bounded
//!   retries with backoff, capacity accounting.
//! * `write` — create (idempotent), get, edit, moderate, reply, delete,
//!   import.
//! * `votes` — helpful votes: one per voter and comment, replaced or
//!   withdrawn.
//! * `statistics` — reading counts, the leaderboard, the global aggregates;
//!   it owns the counts' types ([`RatingCounts`]).
//! * `listing` — the filter, the orders, the one planner, the executor and
//!   the cursors: pages of a product's comments, the moderation queue, an
//!   author's comments, export scans. The planner sizes its reads by the
//!   counts `statistics` reads.
//! * `catalog` — product records (with their SKUs' lookup items, which
//!   find a product by SKU), and a product's record, statistics and
//!   revision read together for its pages.
//! * `aggregator` — applying the change stream to the statistics, and
//!   reconciling them with a recount.
//! * `erasure` — deleting an author's comments with their partitions.
//!
//! `references` (below `write` and `erasure`) answers whether a comment
//! still names a photo, from the photo references `table::photo` keeps;
//! `photo_inventory` lists what the whole table names, for `rave
//! reconcile`'s comparison with the media store.
//!
//! Each part depends only on the parts listed before it (and on `model`
//! with `rating` and `attributes` (sub-ratings and fit, see its doc),
//! `error` and `rules`, below them all); none reaches back up to the façade.
//!
//! With the `dataset` feature, `dataset` generates bench and demo data
//! (`rave load`, `--demo`, the benches); it is not part of the domain. The
//! `testing` feature adds `Comments::list_with_counts`, a listing planned
//! with counts the caller vouches for, for the pagination oracle and the
//! benchmarks.

#![warn(unreachable_pub)]

mod access;
mod aggregator;
mod attributes;
mod catalog;
mod changes;
#[cfg(feature = "dataset")]
pub mod dataset;
mod erasure;
mod error;
mod families;
mod figures;
mod listing;
mod model;
mod photo_inventory;
mod photos;
mod rating;
mod references;
mod reports;
pub mod rules;
mod statistics;
mod table;
mod usage;
mod votes;
mod write;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rave_store::{ChangeFeed, PositionLayout, Store, StoreError};

pub use aggregator::reconcile::{Drift, ReconcileReport};
pub use attributes::{
    AttributeAnswer, AttributeAnswers, AttributeDeclaration, AttributeInput, AttributeKind,
    AttributeName, AttributeStats, DeclaredAttributes, MAX_ATTRIBUTES, MAX_CHOICES,
};
pub use catalog::ProductOverview;
pub use changes::{CommentChange, comment_change};
pub use erasure::Erased;
pub use error::{CommentsError, Result};
pub use families::moves::MoveProgress;
pub use families::{GroupStats, MAX_VARIANTS};
pub use figures::ModerationFigures;
pub use listing::cursor::CursorKey;
pub use listing::filter::{Filter, RatingSet};
pub use listing::planner::{Plan, PlannedQuery, SizedBy, Skipped, Strategy};
pub use listing::sort::Sort;
pub use listing::{AuthorPage, ExportPosition, ListPage, ListRequest, QueuePage};
pub use model::{
    Comment, CommentPatch, DEFAULT_PAGE_SIZE, Email, GlobalStats, Language, MAX_IMAGE_URLS,
    MAX_PAGE_SIZE, NewComment, OrderId, ProductId, ProductRecord, Purchase, Rating, Reply, Source,
    Status, Timestamp, VoteCounts, Voter, check_page_size,
};
pub use photo_inventory::{Naming, PhotoInventory};
pub use photos::{MAX_PHOTOS, NewPhoto, Photo, PhotoId, PhotoStatus};
pub use reports::{KEPT_NOTES, MAX_NOTE_CHARS, Report, ReportReason, Reports};
pub use statistics::{Leader, ProductStats, RatingCounts};
pub use table::table_definition;
pub use usage::Usage;
pub use write::{Created, DEFAULT_IDEMPOTENCY_TTL, ImportComment, ImportOutcome, Moderation};

use access::TableAccess;
use aggregator::Aggregator;
use catalog::Catalog;
use erasure::Erasure;
use families::moves::Moves;
use listing::Listings;
use statistics::Statistics;
use votes::Votes;
use write::Writes;

/// How the domain is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub table: String,
    pub cursor_key: CursorKey,
    pub moderation: Moderation,
}

/// The comments service over any [`Store`].
#[derive(Debug)]
pub struct Comments<S> {
    access: Arc<TableAccess<S>>,
    writes: Writes<S>,
    votes: Votes<S>,
    listings: Listings<S>,
    statistics: Statistics<S>,
    catalog: Catalog<S>,
    aggregator: Aggregator<S>,
    erasure: Erasure<S>,
    moves: Moves,
}

/// The size DynamoDB counts for a comment's table item (capacity is
/// computed from it).
pub fn stored_size(comment: &Comment) -> usize {
    rave_store::item_size(&table::comment::encode(comment, 1))
}

/// Where an aggregator on DynamoDB Streams keeps its position in each shard
/// of the comments table's stream.
pub fn aggregator_positions() -> Box<dyn PositionLayout> {
    Box::new(table::position::AggregatorPositions)
}

impl<S: Store> Comments<S> {
    pub fn new(store: S, config: Config) -> Comments<S> {
        let access = Arc::new(TableAccess::new(store, config.table));
        let statistics = Statistics::new(Arc::clone(&access));
        Comments {
            writes: Writes::new(Arc::clone(&access), config.moderation),
            votes: Votes::new(Arc::clone(&access)),
            listings: Listings::new(Arc::clone(&access), statistics.clone(), config.cursor_key),
            aggregator: Aggregator::new(Arc::clone(&access)),
            catalog: Catalog::new(Arc::clone(&access)),
            erasure: Erasure::new(Arc::clone(&access)),
            moves: Moves::default(),
            statistics,
            access,
        }
    }

    /// Lets the planner trust zero counts (and skip those sub-queries)
    /// whenever `fresh` says the statistics have applied every write.
    pub fn with_stats_freshness(
        mut self,
        fresh: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Comments<S> {
        self.listings.set_freshness(Box::new(fresh));
        self
    }

    /// Checks every public create against `rules` before it is stored:
    /// a comment a rule holds is stored pending (naming the rule), one a
    /// rule refuses is not stored. Imports are not judged.
    pub fn with_rules(mut self, rules: Arc<rules::Rules>) -> Comments<S> {
        self.writes.set_rules(rules);
        self
    }

    /// Asks `hook` about every public create the rules let pass: it
    /// publishes, holds or refuses the comment; when it gives no decision
    /// the comment is held (see [`rules::ModerationHook`]).
    pub fn with_moderation_hook(mut self, hook: Arc<dyn rules::ModerationHook>) -> Comments<S> {
        self.writes.set_moderation_hook(hook);
        self
    }

    /// How long a create's `Idempotency-Key` is remembered (24 hours by
    /// default); after that the store's Time to Live deletes the record and
    /// the same key makes a new comment.
    pub fn with_idempotency_ttl(mut self, ttl: Duration) -> Comments<S> {
        self.writes.set_idempotency_ttl(ttl);
        self
    }

    pub fn table(&self) -> &str {
        self.access.table()
    }

    pub fn usage(&self) -> &Usage {
        self.access.usage()
    }

    /// Creates the table if it does not exist (the embedded store's set-up).
    pub async fn ensure_table(&self) -> Result<()> {
        match self.access.describe().await {
            Ok(_) => Ok(()),
            Err(StoreError::ResourceNotFound(_)) => {
                match self.access.create(table_definition(self.table())).await {
                    Ok(()) | Err(StoreError::ResourceInUse(_)) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the store answers and holds the table.
    pub async fn health(&self) -> Result<()> {
        self.access.describe().await?;
        Ok(())
    }

    /// Creates a comment on `product`. With an idempotency key, a retry of
    /// the same request returns the first result and creates nothing; the
    /// same key with a different request is a conflict.
    pub async fn create(
        &self,
        product: &str,
        new: NewComment,
        idempotency_key: Option<&str>,
    ) -> Result<Created> {
        self.writes
            .create(product, new, idempotency_key, None, None, false)
            .await
    }

    /// [`Comments::create`] of a comment whose purchase `order` proves (the
    /// caller has checked the shop's proof): the comment is
    /// `verified_purchase`, and the order is used up for this product — a
    /// second verified create with it is a conflict and stores nothing.
    pub async fn create_verified(
        &self,
        product: &str,
        new: NewComment,
        idempotency_key: Option<&str>,
        order: &OrderId,
    ) -> Result<Created> {
        self.writes
            .create(product, new, idempotency_key, Some(order), None, false)
            .await
    }

    /// [`Comments::create_verified`] by a purchase proof that may also say
    /// the review is written for a reward: the comment is then
    /// incentivized from its first write.
    pub async fn create_purchased(
        &self,
        product: &str,
        new: NewComment,
        idempotency_key: Option<&str>,
        purchase: &Purchase,
    ) -> Result<Created> {
        self.writes
            .create(
                product,
                new,
                idempotency_key,
                Some(&purchase.order),
                None,
                purchase.incentivized,
            )
            .await
    }

    /// [`Comments::create_verified`] of a review posted through the link of
    /// a review request: its source is [`Source::review_request`] (Google's
    /// feed calls it collected `post_fulfillment`).
    pub async fn create_requested(
        &self,
        product: &str,
        new: NewComment,
        order: &OrderId,
    ) -> Result<Created> {
        self.writes
            .create(
                product,
                new,
                None,
                Some(order),
                Some(Source::review_request()),
                false,
            )
            .await
    }

    /// A comment by id, whatever its status.
    pub async fn get(&self, id: &str) -> Result<Comment> {
        self.writes.get(id).await
    }

    /// Changes language, rating, title or body; index keys move with them.
    pub async fn edit(&self, id: &str, patch: &CommentPatch) -> Result<Comment> {
        self.writes.edit(id, patch).await
    }

    /// Counts a reader's report of a comment; a published comment becomes
    /// flagged (it stays visible and enters the queue).
    pub async fn flag(&self, id: &str, report: &Report) -> Result<Comment> {
        self.writes.flag(id, report).await
    }

    /// Marks whether the review was written for a reward (a staff decision).
    pub async fn set_incentivized(&self, id: &str, incentivized: bool) -> Result<Comment> {
        self.writes.set_incentivized(id, incentivized).await
    }

    /// Publishes a pending or flagged comment; it leaves the queue.
    pub async fn approve(&self, id: &str) -> Result<Comment> {
        self.writes.approve(id).await
    }

    /// Sets the merchant's one official reply to a comment (replacing its
    /// text if there is one). Neither the comment's place in listings nor
    /// any count changes.
    pub async fn set_reply(&self, id: &str, body: &str) -> Result<Comment> {
        self.writes.set_reply(id, body).await
    }

    /// Removes the merchant's reply, if the comment has one.
    pub async fn delete_reply(&self, id: &str) -> Result<Comment> {
        self.writes.delete_reply(id).await
    }

    /// Deletes a comment; its index entries, its photo references and its
    /// votes go with it. Returns its photos that no comment names any
    /// more, whose blobs the caller deletes (checking
    /// [`Comments::photo_referenced`] again right before, under the lock
    /// that an upload naming the same photo takes).
    pub async fn delete(&self, id: &str) -> Result<Vec<PhotoId>> {
        let unreferenced = self.writes.delete(id).await?;
        self.votes.delete_all(id).await?;
        Ok(unreferenced)
    }

    /// Publishes one photo of a comment without touching its text or its
    /// other photos; a published photo stays as it is. An unknown comment,
    /// or a photo the comment does not carry, is `NotFound`.
    pub async fn approve_photo(&self, id: &str, photo: &PhotoId) -> Result<Comment> {
        self.writes.approve_photo(id, photo).await
    }

    /// Removes one photo from a comment (with its reference, in the same
    /// write) without touching its text or its other photos. Returns the
    /// comment, and the photo if no comment names it any more (see
    /// [`Comments::delete`]). An unknown comment, or a photo the comment
    /// does not carry, is `NotFound`.
    pub async fn reject_photo(&self, id: &str, photo: &PhotoId) -> Result<(Comment, Vec<PhotoId>)> {
        self.writes.reject_photo(id, photo).await
    }

    /// Whether any comment names `photo` (its references, read
    /// consistently): asked right before a blob is deleted.
    pub async fn photo_referenced(&self, photo: &PhotoId) -> Result<bool> {
        self.writes.photo_referenced(photo).await
    }

    /// Records `voter`'s vote on a published or flagged comment (`helpful`
    /// or not), replacing the voter's earlier vote on it. The comment's
    /// counts follow once the aggregator applies the change.
    pub async fn vote(&self, id: &str, voter: &str, helpful: bool) -> Result<()> {
        self.votes.vote(id, voter, helpful).await
    }

    /// Withdraws `voter`'s vote on a published or flagged comment, if any.
    pub async fn withdraw_vote(&self, id: &str, voter: &str) -> Result<()> {
        self.votes.withdraw(id, voter).await
    }

    /// Writes many comments at once (BatchWriteItem, 25 per request), for
    /// loads and imports. An imported comment keeps its id when it has one,
    /// and a comment whose id is stored already is left as it is: importing
    /// the same export twice creates nothing the second time. Returns the
    /// ids, in input order, and how many comments were created.
    pub async fn import(&self, batch: Vec<ImportComment>) -> Result<ImportOutcome> {
        self.writes.import(batch).await
    }

    /// The email address kept apart for comment `id`'s author (an import
    /// brought it), for the data subject's own export; `None` when there is
    /// none. Nothing shown to anyone else reads it.
    pub async fn author_email(&self, id: &str) -> Result<Option<Email>> {
        self.writes.email(id).await
    }

    /// A page of a product's visible comments, newest first.
    pub async fn list(&self, request: &ListRequest<'_>) -> Result<ListPage> {
        self.listings.list(request).await
    }

    /// [`Comments::list`] planned with per-rating counts the caller vouches
    /// for, as exact: for oracles and benchmarks that hold the true counts.
    #[cfg(any(test, feature = "testing"))]
    pub async fn list_with_counts(
        &self,
        request: &ListRequest<'_>,
        counts: Option<&RatingCounts>,
    ) -> Result<ListPage> {
        self.listings.list_with_counts(request, counts).await
    }

    /// The moderation queue: pending or flagged comments, oldest first,
    /// optionally only those whose creation time starts with `since` and
    /// only those reported for `reason`.
    pub async fn moderation_queue(
        &self,
        state: Status,
        since: Option<&str>,
        reason: Option<ReportReason>,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<QueuePage> {
        self.listings
            .moderation_queue(state, since, reason, limit, cursor)
            .await
    }

    /// Every comment whose author is exactly `author`, whatever its
    /// status, newest first, from the `byAuthor` index (never a scan).
    pub async fn author_comments(
        &self,
        author: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<AuthorPage> {
        self.listings.author_comments(author, limit, cursor).await
    }

    /// Erases every comment of `author` with its votes, reply, photo
    /// references and the personal data kept apart for it (an imported
    /// email), and returns how many comments there were and which of their
    /// photos no comment names any more (see [`Comments::delete`]);
    /// statistics follow through the change stream. Erasing again erases
    /// nothing.
    pub async fn erase_author(&self, author: &str) -> Result<Erased> {
        self.erasure.erase_author(author).await
    }

    /// One page of segment `segment` of `total` of a parallel scan over all
    /// comments (any status), for exports and recounts.
    pub async fn export_page(
        &self,
        segment: u32,
        total: u32,
        start: Option<ExportPosition>,
    ) -> Result<(Vec<Comment>, Option<ExportPosition>)> {
        self.listings.export_page(segment, total, start).await
    }

    /// Counts by rating of a product, overall or in one language (AP7-AP10).
    pub async fn product_stats(
        &self,
        product: &str,
        language: Option<&str>,
    ) -> Result<ProductStats> {
        self.statistics.product_stats(product, language).await
    }

    /// Sets a product's display name, page, image and identifiers. A SKU
    /// the record lists names this product from then on (see
    /// [`Comments::products_by_sku`]); a SKU another product's record lists
    /// is refused (`Conflict`, naming the product).
    ///
    /// A new group moves the product's statistics with it at once, and its
    /// comments in the group listings once the move's job has run (see
    /// [`Comments::run_pending_moves`]).
    pub async fn put_product(&self, product: &str, record: ProductRecord) -> Result<()> {
        self.catalog.put_record(product, record).await?;
        self.moves.request();
        Ok(())
    }

    /// The product whose record lists each of `skus`, for those one does.
    pub async fn products_by_sku(&self, skus: &[&str]) -> Result<HashMap<String, ProductId>> {
        self.catalog.products_by_sku(skus).await
    }

    /// A product family's variants, in product id order (none for an id
    /// no record names as its group).
    pub async fn group_variants(&self, group: &str) -> Result<Vec<ProductId>> {
        families::members(&self.access, &families::parse_group(group)?).await
    }

    /// A page of every variant's visible comments of the group
    /// `request.product` names, in the request's order.
    pub async fn list_group(&self, request: &ListRequest<'_>) -> Result<ListPage> {
        self.listings.list_group(request).await
    }

    /// Runs the job of every pending move of a product between families
    /// (each puts the product's comments in its new family), oldest first,
    /// until none is left; returns how many it completed. A job an error
    /// (or a crash) stopped is run again by the next call.
    pub async fn run_pending_moves(&self) -> Result<usize> {
        families::moves::run_pending(&self.access, &self.writes, &self.moves).await
    }

    /// The pending moves between families, with how far the jobs of this
    /// process have gone.
    pub async fn pending_moves(&self) -> Result<Vec<MoveProgress>> {
        families::moves::pending(&self.access, &self.moves).await
    }

    /// Resolves once a product record is written (at once if one was
    /// since the last wait): a move's job may be waiting.
    pub async fn move_requested(&self) {
        self.moves.requested().await
    }

    /// A product family's statistics, overall or in one language: its
    /// variants' summed, with each variant's own.
    pub async fn group_stats(&self, group: &str, language: Option<&str>) -> Result<GroupStats> {
        families::group_stats(&self.access, group, language).await
    }

    /// A product's record, statistics (overall and per language) and
    /// revision: from one query of its partition, or, while its revision
    /// holds, the overview read last.
    pub async fn product_overview(&self, product: &str) -> Result<Arc<ProductOverview>> {
        self.catalog.overview(product).await
    }

    /// The revision of [`Comments::product_overview`], read more cheaply.
    pub async fn product_revision(&self, product: &str) -> Result<String> {
        self.catalog.revision(product).await
    }

    /// The products with the most 5-star comments (AP11), overall or in one language.
    pub async fn leaderboard(&self, limit: usize, language: Option<&str>) -> Result<Vec<Leader>> {
        self.statistics.leaderboard(limit, language).await
    }

    /// The global aggregates.
    pub async fn global_stats(&self) -> Result<GlobalStats> {
        self.statistics.global_stats().await
    }

    /// The moderation figures the aggregator keeps: reports by reason,
    /// holds by rule, comments waiting, decisions and their median time.
    pub async fn moderation_figures(&self) -> Result<ModerationFigures> {
        figures::read(&self.access).await
    }

    /// Applies the next batch of `feed` (waiting up to `wait` for one) to
    /// the statistics, and returns how many records of the stream it moved
    /// past (0 when another aggregator got there first).
    pub async fn aggregate_once<F: ChangeFeed>(&self, feed: &F, wait: Duration) -> Result<usize> {
        self.aggregator.aggregate_once(feed, wait).await
    }

    /// Applies every batch `feed` holds until it has none (reading each
    /// next batch while the last one commits), telling `progress` how many
    /// records of the stream each commit moved past; returns their sum.
    pub async fn catch_up<F: ChangeFeed>(
        &self,
        feed: &F,
        progress: impl FnMut(usize),
    ) -> Result<usize> {
        self.aggregator.catch_up(feed, progress).await
    }

    /// Which photos the comments name, and where the photo references
    /// disagree with them: one scan of the table in `segments` segments.
    pub async fn photo_inventory(&self, segments: u32) -> Result<PhotoInventory> {
        photo_inventory::take(&self.access, segments).await
    }

    /// Writes the references `inventory` found missing and deletes the
    /// stale ones (each checked against its comment again first).
    pub async fn repair_photo_references(&self, inventory: &PhotoInventory) -> Result<()> {
        photo_inventory::repair(&self.access, inventory).await
    }

    /// Recounts every statistic from the comments and reports (with `fix`,
    /// repairs) what drifted.
    pub async fn reconcile(
        &self,
        segments: u32,
        fix: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<ReconcileReport> {
        self.aggregator.reconcile(segments, fix, progress).await
    }
}

//! The stream aggregator (part 4 and the stream-driven aggregates
//! pattern): statistics, leaderboards and global aggregates kept exact.
//!
//! The aggregator is the only writer of the statistics items. It reads the
//! change stream (`rave_store::ChangeFeed`), turns each comment change into
//! the difference it makes (a published or flagged comment counts for its
//! product, its product's language, its author and the totals; a pending one
//! for nothing), reads the items those differences touch, and writes their
//! new values together with its stream position in one commit, with a
//! compare-and-set on that position. A crash before the commit applies
//! nothing; a retried or duplicated batch is refused by the position check:
//! nothing is lost or counted twice. It asks the feed only for comments and
//! votes (`ChangeFeed::next_wanted`, judged by the record's keys), so the
//! engine's feed passes over every other record, the aggregator's own writes
//! among them, without decoding its images.
//!
//! A batch is as long as the feed's commit can carry: from 2,000 to 100,000
//! records read, kept while their effects fit (99 items on DynamoDB, where a
//! commit is a transaction; on the engine 5,000 beside a live service, whose
//! writes queue behind the commit on the one writer, and 100,000 when
//! catching up). A long batch writes a busy statistics item (the hot
//! product's, a prolific author's) once for many comments, and on the
//! engine, where every commit rewrites and syncs each page it touches, means
//! few commits: a bulk load of 100,000 comments is caught up in two batches.
//! Once counted, a batch lets go of its records' images
//! (`ChangeBatch::release_images`): it is committed by its place in the
//! stream, and the next batch is decoded meanwhile.
//!
//! Catching up a backlog (`catch_up`: `rave aggregate --until-caught-up`,
//! and before a recount) reads, counts and works out the writes of each
//! next batch while the last one commits (`ChangeFeed::next_wanted_after`).
//! The statistics items it reads may predate that commit, so the last
//! batch's writes stand in for the items they write (`Pending`). On the
//! engine the writer thread commits while this one decodes, and the
//! commits are the longer part. A batch read ahead continues from the one
//! before it and is conditional on the versions that one writes, so if
//! that one lost a race its commit fails too, and the catch-up reads again
//! from the stored position.
//!
//! Votes are counted the same way onto their comment: a vote's change moves
//! the comment's helpful or unhelpful count (a replaced vote: the old one
//! out, the new one in), written with the comment's version as condition in
//! the same commit, so edits and other aggregators never lose a count. A
//! vote on a comment that is gone counts for nothing. The rewritten comment
//! is itself a change, which raises its product's revision; a comment with
//! photos is written with its listing copy (`table::comment::writes`), so
//! the copy's counts and `helpful` key move in the same commit. Comments
//! showing a published photo are also counted by rating among those with
//! photos (what sizes a `has_media` listing); the copies' own changes on
//! the stream count for nothing.
//!
//! The overall statistics item carries the product's revision, raised in the
//! same commit as any change to a visible comment of the product (a title or
//! body edit too, which no count sees) to `max(stored + 1, newest commit time
//! applied)`, so it never repeats; pages and their ETags are built on it.
//!
//! Any number of aggregators may run at once (one per `rave serve`, each
//! reading every shard of a DynamoDB stream), and records of different
//! shards touch the same items, so every statistics write is conditional on
//! the `version` token it read (a fresh ULID per write, never reused, so an
//! item deleted and written again cannot pass for the one read). A commit
//! whose item changed since it was read fails whole, and the batch is read
//! and worked out again: two aggregators never both turn N into N+1. The
//! totals are 64 partial items, one picked at random per commit, so commits
//! seldom contend on them.
//!
//! `reconcile` recomputes everything from the comments with a parallel scan,
//! reports every item that drifted, and can repair it.

mod moderation;
pub(crate) mod reconcile;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rave_store::{
    CancellationReason, ChangeBatch, ChangeFeed, ChangeRecord, Item, Store, StoreError,
    TransactWriteAction,
};

use crate::access::TableAccess;
use crate::attributes::AttributeAnswers;
use crate::error::{CommentsError, Result};
use crate::model::{AUTHOR_BUCKETS, Comment, GlobalStats, Language, ProductId, Rating, VoteCounts};
use crate::table::stats::moderation::{self as figures, FiguresPart};
use crate::table::stats::product::{self as product_stats, ProductCounts};
use crate::table::stats::totals::{self, Slot};
use crate::table::stats::{self, author};
use crate::table::{ItemKind, Malformed, comment, describe_key, vote};

/// How many records one read from the feed asks for: as many as the feed's
/// commits carry effects, within these bounds. DynamoDB Streams hands out at
/// most 1,000 a read and a commit there carries 99 writes, which stops a
/// batch first. On the engine a long batch matters while catching up: a
/// busy statistics item (a hot product's, a prolific author's) is written
/// once for many comments, and each commit rewrites and syncs every page it
/// touches, so fewer commits write less. 100,000 records of a bulk load
/// hold some hundreds of megabytes decoded, one batch at a time (the one
/// committing has let go of its images): catching up the medium data set
/// (1,000,000 comments) peaks at 1.1 GB resident, the redb cache included.
const MIN_BATCH_RECORDS: usize = 2_000;
const MAX_BATCH_RECORDS: usize = 100_000;

/// How long a catch-up waits for records before it counts the feed
/// drained: enough for a stream that hands out records a little after they
/// commit, too short to hold up the end.
const CATCH_UP_WAIT: Duration = Duration::from_millis(10);

/// The records the aggregator counts: comments and votes. Everything else
/// on the stream (its own statistics writes among them) changes nothing.
fn counted(keys: &Item) -> bool {
    matches!(ItemKind::of(keys), ItemKind::Comment | ItemKind::Vote)
}

/// What a counted comment counts for, in the validated types it was
/// decoded as.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Contribution {
    product: ProductId,
    language: Language,
    rating: Rating,
    author: String,
    verified: bool,
    /// At least one of its photos is published.
    with_media: bool,
    attributes: AttributeAnswers,
}

/// What the items a commit writes will hold once it lands (`None`: the
/// item goes), by `describe_key`: the next batch's writes are worked out
/// from these while that commit runs. Every write is conditional on the
/// version it read, so a stand-in that the store does not end up holding
/// fails the next commit, which is then read and worked out again.
#[derive(Debug, Default)]
struct Pending(BTreeMap<String, Option<Item>>);

impl Pending {
    fn of(actions: &[TransactWriteAction]) -> Pending {
        Pending(
            actions
                .iter()
                .filter_map(|action| match action {
                    TransactWriteAction::Put { item, .. } => {
                        Some((describe_key(item), Some(item.clone())))
                    }
                    TransactWriteAction::Delete { key, .. } => Some((describe_key(key), None)),
                    TransactWriteAction::Update { .. }
                    | TransactWriteAction::ConditionCheck { .. } => None,
                })
                .collect(),
        )
    }

    /// Replaces what `stored` holds (read before the commit landed, or
    /// after) with what the commit writes.
    fn apply_to(self, stored: &mut BTreeMap<String, Item>) {
        for (key, item) in self.0 {
            match item {
                Some(item) => stored.insert(key, item),
                None => stored.remove(&key),
            };
        }
    }
}

/// What a stored item counts for: nothing unless it is a visible comment.
/// A comment that does not decode is an error, never silently uncounted.
fn contribution(image: Option<&Item>) -> Result<Option<Contribution>, Malformed> {
    let Some(item) = image else {
        return Ok(None);
    };
    if ItemKind::of(item) != ItemKind::Comment {
        return Ok(None);
    }
    let comment = comment::decode(item)?;
    let with_media = comment::has_media_copy(&comment);
    Ok(comment.status.is_visible().then_some(Contribution {
        product: comment.product_id,
        language: comment.language,
        rating: comment.rating,
        author: comment.author,
        verified: comment.verified_purchase,
        with_media,
        attributes: comment.attributes,
    }))
}

/// Per (product, language or `None` for all languages), counts by rating
/// and of verified comments.
type StatsCounts<T> = BTreeMap<(ProductId, Option<Language>), ProductCounts<T>>;

impl Contribution {
    /// What this comment adds to its product's counts, `one` being 1 (or
    /// -1 to take it away).
    fn counts<T: Default + Copy + PartialEq + std::ops::AddAssign>(
        &self,
        one: T,
    ) -> ProductCounts<T> {
        ProductCounts::of_comment(
            self.rating,
            self.verified,
            self.with_media,
            &self.attributes,
            one,
        )
    }

    /// Counts this comment into `stats`, overall and in its language, with
    /// `one` (1, or -1 to take it away).
    fn count_into<T: Default + Copy + PartialEq + std::ops::AddAssign>(
        &self,
        stats: &mut StatsCounts<T>,
        one: T,
    ) {
        for language in [None, Some(self.language.clone())] {
            stats
                .entry((self.product.clone(), language))
                .or_default()
                .add(&self.counts(one));
        }
    }
}

/// Differences a set of changes makes, keyed by the item they change.
#[derive(Debug, Default, Clone)]
struct Deltas {
    stats: StatsCounts<i64>,
    authors: BTreeMap<String, i64>,
    /// Products whose visible comments changed (see `touch`).
    touched: BTreeMap<ProductId, Touch>,
    /// Per comment id, how its helpful and unhelpful counts move.
    votes: BTreeMap<String, VoteDelta>,
    /// What the batch adds to the moderation figures.
    figures: FiguresPart,
}

/// How a comment's vote counts move.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct VoteDelta {
    helpful: i64,
    unhelpful: i64,
}

impl VoteDelta {
    fn is_zero(&self) -> bool {
        *self == VoteDelta::default()
    }

    fn apply(&self, counts: VoteCounts) -> VoteCounts {
        VoteCounts {
            helpful: apply_delta(counts.helpful, self.helpful),
            unhelpful: apply_delta(counts.unhelpful, self.unhelpful),
        }
    }
}

/// The vote an image holds, if it is a vote.
fn vote_of(image: Option<&Item>) -> Result<Option<vote::Vote>, Malformed> {
    match image {
        Some(item) if ItemKind::of(item) == ItemKind::Vote => vote::decode(item).map(Some),
        _ => Ok(None),
    }
}

/// The changes of a batch to one product's visible comments.
#[derive(Debug, Default, Clone, Copy)]
struct Touch {
    records: u64,
    /// The commit time of the newest of them.
    newest_ms: u64,
}

impl Deltas {
    fn count(&mut self, c: &Contribution, sign: i64) {
        c.count_into(&mut self.stats, sign);
        *self.authors.entry(c.author.clone()).or_default() += sign;
    }

    fn add(&mut self, record: &ChangeRecord, sign: i64) -> Result<(), Malformed> {
        self.add_votes(record, sign)?;
        moderation::add(&mut self.figures, record, sign)?;
        let old = contribution(record.old_image.as_ref())?;
        let new = contribution(record.new_image.as_ref())?;
        self.touch(record, old.as_ref().or(new.as_ref()), sign);
        if old == new {
            return Ok(());
        }
        if let Some(old) = &old {
            self.count(old, -sign);
        }
        if let Some(new) = &new {
            self.count(new, sign);
        }
        Ok(())
    }

    /// A vote's change: the old vote leaves its comment's count, the new
    /// one enters it.
    fn add_votes(&mut self, record: &ChangeRecord, sign: i64) -> Result<(), Malformed> {
        let old = vote_of(record.old_image.as_ref())?;
        let new = vote_of(record.new_image.as_ref())?;
        for (vote, sign) in [(old, -sign), (new, sign)] {
            if let Some(vote) = vote {
                let delta = self.votes.entry(vote.comment_id).or_default();
                match vote.helpful {
                    true => delta.helpful += sign,
                    false => delta.unhelpful += sign,
                }
            }
        }
        Ok(())
    }

    fn prune(&mut self) {
        self.stats.retain(|_, d| !d.is_zero());
        self.authors.retain(|_, d| *d != 0);
        self.votes.retain(|_, d| !d.is_zero());
        self.figures.prune();
    }

    /// At least as many items as a commit of these deltas writes, in
    /// constant time: a batch grows record by record while this fits.
    fn items_at_most(&self) -> usize {
        // A voted comment is written with its listing copy, if it has one.
        self.stats.len() + self.authors.len() + self.touched.len() + 2 * self.votes.len() + 2
    }

    /// Items a commit of these deltas writes (the totals item included).
    fn items(&self) -> usize {
        let figures = usize::from(!self.figures.is_zero());
        match self.counted_items() {
            0 => figures,
            changed => changed + 1 + figures,
        }
    }

    /// Statistics and comment items the deltas change, besides the totals
    /// and the moderation figures.
    fn counted_items(&self) -> usize {
        self.stats.values().filter(|d| !d.is_zero()).count()
            + self.authors.values().filter(|d| **d != 0).count()
            + self.touched_only().count()
            + self.votes.values().filter(|d| !d.is_zero()).count()
    }
}

/// Product revisions: any change to a visible comment of a product (a title
/// or body edit too, which no count sees) raises the revision on the
/// product's overall statistics item, which caches compare.
impl Deltas {
    /// Notes (`sign` 1) or takes back (-1) a change to `visible`'s product.
    fn touch(&mut self, record: &ChangeRecord, visible: Option<&Contribution>, sign: i64) {
        let Some(visible) = visible else {
            return;
        };
        if record.old_image == record.new_image {
            return;
        }
        let touch = self.touched.entry(visible.product.clone()).or_default();
        if sign > 0 {
            touch.records += 1;
            touch.newest_ms = touch.newest_ms.max(record.commit_time_ms);
        } else {
            touch.records = touch.records.saturating_sub(1);
            if touch.records == 0 {
                self.touched.remove(&visible.product);
            }
        }
    }

    /// Touched products whose counts do not change: their overall item is
    /// written only to raise its revision.
    fn touched_only(&self) -> impl Iterator<Item = &ProductId> {
        self.touched.keys().filter(|product| {
            self.stats
                .get(&((*product).clone(), None))
                .is_none_or(ProductCounts::is_zero)
        })
    }

    /// The revision a product's overall item takes: past both the stored
    /// one and the newest commit applied, so it never repeats.
    fn revision(&self, product: &ProductId, stored: Option<&Item>) -> Result<u64, Malformed> {
        let before = stored
            .map(product_stats::decode_revision)
            .transpose()?
            .unwrap_or(0);
        let newest = self.touched.get(product).map_or(0, |t| t.newest_ms);
        Ok((before + 1).max(newest))
    }
}

/// Authors are counted in buckets by their number of counted comments.
fn bucket(count: u64) -> usize {
    (count.min(AUTHOR_BUCKETS as u64) - 1) as usize
}

fn apply_delta(value: u64, delta: i64) -> u64 {
    (value as i64 + delta).max(0) as u64
}

/// How many records one read from `feed` asks for.
fn batch_records<F: ChangeFeed>(feed: &F) -> usize {
    feed.max_effects()
        .clamp(MIN_BATCH_RECORDS, MAX_BATCH_RECORDS)
}

/// The first records of `batch` whose effects fit in one commit of at most
/// `capacity` items, and their deltas; the rest come again next time.
fn fit<B: ChangeBatch>(mut batch: B, capacity: usize) -> Result<(B, Deltas), Malformed> {
    let mut deltas = Deltas::default();
    let mut fit = 0;
    for record in batch.records() {
        deltas.add(record, 1)?;
        if deltas.items_at_most() > capacity && fit > 0 {
            deltas.add(record, -1)?;
            break;
        }
        fit += 1;
    }
    batch.truncate(fit);
    batch.release_images();
    deltas.prune();
    Ok((batch, deltas))
}

/// Whether a feed commit landed: `false` when another aggregator applied
/// the batch, or wrote an item it read, first (reading again from the
/// stored position recovers); any other failure is an error.
fn committed(outcome: rave_store::Result<()>) -> Result<bool> {
    match outcome {
        Ok(()) => Ok(true),
        Err(e) if lost_race(&e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether a commit failed only because another aggregator got there first.
fn lost_race(error: &StoreError) -> bool {
    match error {
        StoreError::ConditionalCheckFailed | StoreError::TransactionConflict(_) => true,
        StoreError::TransactionCanceled(reasons) => reasons.iter().all(|r| {
            matches!(
                r,
                CancellationReason::None
                    | CancellationReason::ConditionalCheckFailed
                    | CancellationReason::TransactionConflict
            )
        }),
        _ => false,
    }
}

#[derive(Debug)]
pub(crate) struct Aggregator<S> {
    access: Arc<TableAccess<S>>,
}

impl<S: Store> Aggregator<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>) -> Aggregator<S> {
        Aggregator { access }
    }

    /// Applies the next batch of `feed` (waiting up to `wait` for one) and
    /// returns how many records of the stream it moved past.
    pub(crate) async fn aggregate_once<F: ChangeFeed>(
        &self,
        feed: &F,
        wait: Duration,
    ) -> Result<usize> {
        let Some(batch) = feed.next_wanted(batch_records(feed), wait, counted).await? else {
            return Ok(0);
        };
        let (batch, deltas) = fit(batch, feed.max_effects())?;
        let passed = batch.passed();
        let effects = self.effects(&deltas, Pending::default()).await?;
        Ok(match committed(feed.commit(batch, effects).await)? {
            true => passed,
            false => 0,
        })
    }

    /// Applies every batch `feed` holds until it has none, and returns how
    /// many records of the stream it moved past, telling `progress` after
    /// each commit. The next batch is read, counted and turned into writes
    /// while the last one commits (`ChangeFeed::next_wanted_after`): on the
    /// engine the writer thread commits while this one decodes, so catching
    /// up a bulk load keeps both cores busy. The next batch's statistics
    /// items are read while the last batch's writes may not have landed, so
    /// those writes stand in for what they replace (`Pending`); if that
    /// commit fails, what was read ahead is dropped.
    pub(crate) async fn catch_up<F: ChangeFeed>(
        &self,
        feed: &F,
        mut progress: impl FnMut(usize),
    ) -> Result<usize> {
        let records = batch_records(feed);
        let capacity = feed.max_effects();
        let fit_read = |read: Option<F::Batch>| read.map(|batch| fit(batch, capacity)).transpose();
        let mut applied = 0;
        let mut prepared = None;
        loop {
            // Read from the stored position at the start, when a commit
            // lost a race (what was read ahead follows a batch that never
            // landed), when the feed cannot read ahead, or when nothing
            // followed as it did.
            if prepared.is_none()
                && let Some((batch, deltas)) =
                    fit_read(feed.next_wanted(records, CATCH_UP_WAIT, counted).await?)?
            {
                prepared = Some((batch, self.effects(&deltas, Pending::default()).await?));
            }
            let Some((batch, effects)) = prepared.take() else {
                return Ok(applied);
            };
            let passed = batch.passed();
            let pending = Pending::of(&effects);
            let ahead = feed.next_wanted_after(&batch, records, counted);
            let read_ahead = async {
                let Some((batch, deltas)) = fit_read(ahead.await?)? else {
                    return Ok::<_, CommentsError>(None);
                };
                Ok(Some((batch, self.effects(&deltas, pending).await?)))
            };
            let (outcome, ahead) = futures::join!(feed.commit(batch, effects), read_ahead);
            if committed(outcome)? {
                applied += passed;
                progress(passed);
                prepared = ahead?;
            }
        }
    }

    /// The writes that bring the touched items from their stored values to
    /// their new ones, `pending` standing in for the stored values it holds.
    async fn effects(&self, deltas: &Deltas, pending: Pending) -> Result<Vec<TransactWriteAction>> {
        if deltas.items() == 0 {
            return Ok(Vec::new());
        }
        let mut wanted: Vec<Item> = deltas
            .stats
            .keys()
            .map(|(p, l)| product_stats::key(p, l.as_ref()))
            .chain(deltas.authors.keys().map(|a| author::key(a)))
            .chain(deltas.touched_only().map(|p| product_stats::key(p, None)))
            .chain(deltas.votes.keys().map(|id| comment::key(id)))
            .collect();
        let slot = Slot::random();
        wanted.push(totals::key(slot));
        let figures_slot = figures::random_slot();
        wanted.push(figures::key(figures_slot));
        let mut current: BTreeMap<String, Item> = self
            .access
            .get_many(&wanted)
            .await?
            .into_iter()
            .map(|item| (describe_key(&item), item))
            .collect();
        pending.apply_to(&mut current);
        let stored = |key: &Item| current.get(&describe_key(key));
        let mut totals = stored(&totals::key(slot))
            .map(totals::decode)
            .transpose()?
            .unwrap_or_default();
        let mut actions = Vec::with_capacity(wanted.len());
        for ((product, language), delta) in &deltas.stats {
            let key = product_stats::key(product, language.as_ref());
            let before = stored(&key)
                .map(product_stats::decode)
                .transpose()?
                .unwrap_or_default();
            let mut after = before.clone();
            after.attributes = before.attributes.moved(&delta.attributes);
            for (count, d) in after.ratings.iter_mut().zip(delta.ratings) {
                *count = apply_delta(*count, d);
            }
            after.verified = apply_delta(after.verified, delta.verified);
            for (count, d) in after
                .verified_ratings
                .iter_mut()
                .zip(delta.verified_ratings)
            {
                *count = apply_delta(*count, d);
            }
            for (count, d) in after.media_ratings.iter_mut().zip(delta.media_ratings) {
                *count = apply_delta(*count, d);
            }
            let (before_total, after_total) = (before.total(), after.total());
            if language.is_none() {
                totals.comments += after_total as i64 - before_total as i64;
                totals.products += i64::from(after_total > 0) - i64::from(before_total > 0);
            }
            let revision = match language {
                None => Some(deltas.revision(product, stored(&key))?),
                Some(_) => None,
            };
            let item = product_item(product, language.as_ref(), &after, revision);
            actions.push(self.write_action(&current, key, item));
        }
        for product in deltas.touched_only() {
            let key = product_stats::key(product, None);
            let counts = stored(&key)
                .map(product_stats::decode)
                .transpose()?
                .unwrap_or_default();
            let revision = deltas.revision(product, stored(&key))?;
            let item = product_item(product, None, &counts, Some(revision));
            actions.push(self.write_action(&current, key, item));
        }
        for (author, delta) in &deltas.authors {
            let key = author::key(author);
            let before = stored(&key).map(author::decode).transpose()?.unwrap_or(0);
            let after = apply_delta(before, *delta);
            // Partials are signed: never clamped, only their sum means anything.
            if before > 0 {
                totals.authors_by_comment_count[bucket(before)] -= 1;
            }
            if after > 0 {
                totals.authors_by_comment_count[bucket(after)] += 1;
            }
            totals.authors += i64::from(after > 0) - i64::from(before > 0);
            actions.push(self.write_action(
                &current,
                key,
                (after > 0).then(|| author::encode(author, after)),
            ));
        }
        for (id, delta) in &deltas.votes {
            // A comment deleted since its votes were cast counts nothing.
            let Some(item) = stored(&comment::key(id)) else {
                continue;
            };
            let before = comment::decode(item)?;
            let version = comment::version(item)?;
            let voted = Comment {
                votes: delta.apply(before.votes),
                ..before.clone()
            };
            actions.extend(self.access.write_actions(
                comment::writes(Some(&before), Some(&voted), version + 1),
                Some(comment::at_version(version)),
            ));
        }
        if deltas.counted_items() > 0 {
            actions.push(self.write_action(
                &current,
                totals::key(slot),
                Some(totals::encode(slot, &totals)),
            ));
        }
        if !deltas.figures.is_zero() {
            let key = figures::key(figures_slot);
            let mut part = stored(&key)
                .map(figures::decode)
                .transpose()?
                .unwrap_or_default();
            part.add(&deltas.figures);
            part.prune();
            actions.push(self.write_action(
                &current,
                key,
                Some(figures::encode(figures_slot, &part)),
            ));
        }
        Ok(actions)
    }

    /// The write that replaces the statistics item at `key` with `new` (or
    /// deletes it), on the condition that no other write reached it since
    /// it was read: aggregators of different shards touch the same items,
    /// and an unconditional write would drop the other's count.
    fn write_action(
        &self,
        read: &BTreeMap<String, Item>,
        key: Item,
        new: Option<Item>,
    ) -> TransactWriteAction {
        let condition = Some(stats::unchanged_since(read.get(&describe_key(&key))));
        match new {
            Some(item) => self
                .access
                .put_action(stats::with_new_version(item), condition),
            None => self.access.delete_action(key, condition),
        }
    }
}

/// What a product's statistics item becomes (`None`: it goes). The overall
/// item carries the revision and stays, with zero counts, when the last
/// comment goes; a language's item goes with its last comment.
fn product_item(
    product: &ProductId,
    language: Option<&Language>,
    counts: &ProductCounts,
    revision: Option<u64>,
) -> Option<Item> {
    let mut item = product_stats::encode(product, language, counts);
    match revision {
        Some(revision) => product_stats::set_revision(&mut item, revision),
        None if counts.is_zero() => return None,
        None => {}
    }
    Some(item)
}

/// Everything the statistics should hold, from the totals item's point of view.
fn totals_of(stats: &StatsCounts<u64>, authors: &BTreeMap<String, u64>) -> GlobalStats {
    let mut totals = GlobalStats::default();
    for ((_, language), counts) in stats {
        if language.is_none() {
            totals.comments_total += counts.total();
            totals.products_total += 1;
        }
    }
    for count in authors.values() {
        totals.authors_total += 1;
        totals.authors_by_comment_count[bucket(*count)] += 1;
    }
    totals
}

#[cfg(test)]
mod tests {
    use rave_store::AttributeValue;

    use super::*;
    use crate::model::{Comment, Status, Timestamp};

    fn product(id: &str) -> ProductId {
        ProductId::parse(id).unwrap()
    }

    fn language(code: &str) -> Language {
        Language::parse(code).unwrap()
    }

    fn stored(product: &str, language: &str, rating: i64, author: &str, status: Status) -> Item {
        comment::encode(
            &Comment {
                id: "01JD3X0000000000000000000A".into(),
                product_id: ProductId::parse(product).unwrap(),
                author: author.into(),
                language: Language::parse(language).unwrap(),
                rating: Rating::new(rating).unwrap(),
                title: String::new(),
                body: "b".into(),
                created_at: Timestamp::from_millis(0).unwrap(),
                status,
                held_by: None,
                reply: None,
                verified_purchase: false,
                votes: VoteCounts::default(),
                source: None,
                image_urls: Vec::new(),
                media: Vec::new(),
                incentivized: false,
                attributes: Default::default(),
                reports: Default::default(),
                queued_at: None,
                group: None,
            },
            1,
        )
    }

    fn change(old: Option<Item>, new: Option<Item>) -> ChangeRecord {
        ChangeRecord {
            old_image: old,
            new_image: new,
            commit_time_ms: 0,
            removed_by_ttl: false,
        }
    }

    #[test]
    fn pending_comments_and_other_items_count_for_nothing() {
        let mut d = Deltas::default();
        d.add(
            &change(None, Some(stored("p", "en", 5, "a", Status::Pending))),
            1,
        )
        .unwrap();
        d.add(&change(None, Some(totals::key(Slot::FIRST))), 1)
            .unwrap();
        d.prune();
        assert_eq!(d.counted_items(), 0);
        assert_eq!(d.items(), 1, "only the moderation figures: one waits");
        assert_eq!(d.figures.pending, 1);
    }

    #[test]
    fn an_edit_moves_the_count() {
        let mut d = Deltas::default();
        let before = stored("p", "en", 5, "a", Status::Published);
        let after = stored("p", "de", 4, "a", Status::Flagged);
        d.add(&change(Some(before), Some(after)), 1).unwrap();
        d.prune();
        let (p, en, de) = (product("p"), language("en"), language("de"));
        assert_eq!(d.stats[&(p.clone(), None)].ratings, [0, 0, 0, 1, -1]);
        assert_eq!(d.stats[&(p.clone(), Some(en))].ratings, [0, 0, 0, 0, -1]);
        assert_eq!(d.stats[&(p, Some(de))].ratings, [0, 0, 0, 1, 0]);
        assert!(d.authors.is_empty(), "same author, still counted");
        assert_eq!(d.figures.flagged, 1);
        assert_eq!(d.items(), 5, "three counts, the totals, the figures");
        assert!(d.items_at_most() >= d.items());
    }

    #[test]
    fn a_malformed_comment_image_is_an_error_naming_its_key() {
        let mut image = stored("p", "en", 5, "a", Status::Published);
        image.insert("rating".into(), AttributeValue::s("lots"));
        let error = Deltas::default()
            .add(&change(None, Some(image)), 1)
            .unwrap_err();
        assert!(error.key.starts_with("COMMENT#"), "{error}");
    }

    #[test]
    fn edits_no_count_sees_still_touch_the_product_and_undo_exactly() {
        let before = stored("p", "en", 5, "a", Status::Published);
        let mut after = before.clone();
        after.insert("title".into(), AttributeValue::s("new title"));
        let mut edit = change(Some(before), Some(after));
        edit.commit_time_ms = 1_000;
        let mut d = Deltas::default();
        d.add(&edit, 1).unwrap();
        d.prune();
        assert!(d.stats.is_empty() && d.authors.is_empty());
        let p = product("p");
        assert_eq!(d.touched_only().collect::<Vec<_>>(), [&p]);
        assert_eq!(d.items(), 2, "the product's overall item and the totals");
        assert!(d.items_at_most() >= d.items());
        assert_eq!(d.revision(&p, None).unwrap(), 1_000);
        let mut newer = product_stats::encode(&p, None, &ProductCounts::default());
        product_stats::set_revision(&mut newer, 1_000);
        assert_eq!(d.revision(&p, Some(&newer)).unwrap(), 1_001);
        d.add(&edit, -1).unwrap();
        assert_eq!(d.items(), 0);
    }

    #[test]
    fn pending_comments_touch_nothing() {
        let mut d = Deltas::default();
        let pending = stored("p", "en", 5, "a", Status::Pending);
        d.add(&change(None, Some(pending)), 1).unwrap();
        assert!(d.touched.is_empty());
    }

    #[test]
    fn only_a_lost_race_is_retried_silently() {
        use CancellationReason::{ConditionalCheckFailed, None as Fine, ValidationError};
        assert!(lost_race(&StoreError::ConditionalCheckFailed));
        assert!(lost_race(&StoreError::TransactionCanceled(vec![
            Fine,
            ConditionalCheckFailed
        ])));
        assert!(!lost_race(&StoreError::TransactionCanceled(vec![
            ConditionalCheckFailed,
            ValidationError("item too large".into())
        ])));
        assert!(!lost_race(&StoreError::Unavailable("down".into())));
    }

    #[test]
    fn a_published_photo_counts_the_comment_among_those_with_media_and_copies_count_nothing() {
        use crate::photos::{Photo, PhotoId, PhotoStatus};
        let plain = stored("p", "en", 4, "a", Status::Published);
        let mut with_photo = comment::decode(&plain).unwrap();
        with_photo.media = vec![Photo {
            id: PhotoId::parse(&"a".repeat(64)).unwrap(),
            width: 10,
            height: 10,
            status: PhotoStatus::Published,
        }];
        let mut d = Deltas::default();
        d.add(
            &change(Some(plain), Some(comment::encode(&with_photo, 2))),
            1,
        )
        .unwrap();
        d.prune();
        let overall = &d.stats[&(product("p"), None)];
        assert_eq!(overall.media_ratings, [0, 0, 0, 1, 0]);
        assert_eq!(overall.ratings, [0; 5], "the comment was counted already");
        let copy = comment::listing_copy(&with_photo, comment::Partitions::Media).unwrap();
        assert!(!counted(&crate::table::primary_key(&copy)));
        let mut d = Deltas::default();
        d.add(&change(None, Some(copy)), 1).unwrap();
        d.prune();
        assert_eq!(d.items(), 0);
    }

    #[test]
    fn author_buckets() {
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(9), 8);
        assert_eq!(bucket(10), 9);
        assert_eq!(bucket(250), 9);
    }
}

//! Statistics, leaderboards and global aggregates (part 4 and the
//! stream-driven aggregates pattern), kept exact.
//!
//! The aggregator reads the change stream, turns each comment change into
//! the difference it makes (a visible comment counts for its product, its
//! product's language, its author and the totals), reads the items those
//! differences touch, and writes their new values together with its stream
//! position in one commit. A crash before the commit applies nothing; a
//! retried batch is refused by the position check: nothing is lost or
//! counted twice. Records that are not comments — including the
//! aggregator's own writes — change nothing.
//!
//! `reconcile` recomputes everything from the comments with a parallel scan,
//! reports every item that drifted, and can repair it.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;
use rave_store::{
    AttributeValue, BatchGetItemInput, BatchWriteItemInput, ChangeBatch, ChangeFeed, ChangeRecord,
    GetItemInput, Item, KeyCondition, MAX_BATCH_WRITE_REQUESTS, Number, QueryInput, ScanInput,
    Segment, Store, StoreError, TableKeys, TransactWriteAction, WriteRequest,
};

use crate::keys::{self, Index, ItemKind};
use crate::model::{Language, ProductId, Status};
use crate::{Comments, CommentsError, RatingCounts, Result};

/// Authors are bucketed by their number of counted comments: 1..9 and 10+.
pub const AUTHOR_BUCKETS: usize = 10;

/// Counts of one product, overall or in one language (AP7-AP10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductStats {
    pub product_id: ProductId,
    pub language: Option<Language>,
    pub counts: RatingCounts,
    pub total: u64,
}

/// One row of the leaderboard (AP11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub product_id: String,
    pub five_star: u64,
}

/// The global aggregates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobalStats {
    pub comments_total: u64,
    pub products_total: u64,
    pub authors_total: u64,
    /// `[k - 1]` is the number of authors with exactly k counted comments;
    /// the last entry counts those with 10 or more.
    pub authors_by_comment_count: [u64; AUTHOR_BUCKETS],
}

/// What a counted comment counts for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Contribution {
    product: String,
    language: String,
    rating: usize,
    author: String,
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name).and_then(AttributeValue::as_s)
}

fn number(item: &Item, name: &str) -> u64 {
    item.get(name)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .map_or(0, |n| n.max(0) as u64)
}

/// The contribution of a stored comment, if it is one and it is counted.
fn contribution(image: Option<&Item>) -> Option<Contribution> {
    let item = image?;
    if keys::kind_of(item) != ItemKind::Comment {
        return None;
    }
    let status = Status::parse(text(item, "status")?)?;
    if !status.is_visible() {
        return None;
    }
    let rating = number(item, "rating") as usize;
    if !(1..=5).contains(&rating) {
        return None;
    }
    Some(Contribution {
        product: text(item, "product_id")?.to_owned(),
        language: text(item, "language")?.to_owned(),
        rating,
        author: text(item, "author")?.to_owned(),
    })
}

/// Differences a set of changes makes, keyed by the item they change.
#[derive(Debug, Default, Clone)]
struct Deltas {
    /// (product, language or None for all languages) → per-rating change.
    stats: BTreeMap<(String, Option<String>), [i64; 5]>,
    authors: BTreeMap<String, i64>,
}

impl Deltas {
    fn count(&mut self, c: &Contribution, sign: i64) {
        for language in [None, Some(c.language.clone())] {
            self.stats.entry((c.product.clone(), language)).or_default()[c.rating - 1] += sign;
        }
        *self.authors.entry(c.author.clone()).or_default() += sign;
    }

    fn add(&mut self, record: &ChangeRecord, sign: i64) {
        let old = contribution(record.old_image.as_ref());
        let new = contribution(record.new_image.as_ref());
        if old == new {
            return;
        }
        if let Some(old) = &old {
            self.count(old, -sign);
        }
        if let Some(new) = &new {
            self.count(new, sign);
        }
    }

    fn prune(&mut self) {
        self.stats.retain(|_, d| d.iter().any(|v| *v != 0));
        self.authors.retain(|_, d| *d != 0);
    }

    /// Items a commit of these deltas writes (the totals item included).
    fn items(&self) -> usize {
        let changed = self
            .stats
            .values()
            .filter(|d| d.iter().any(|v| *v != 0))
            .count()
            + self.authors.values().filter(|d| **d != 0).count();
        if changed == 0 { 0 } else { changed + 1 }
    }
}

fn stats_item(product: &str, language: Option<&str>, counts: &[u64; 5]) -> Item {
    let mut item = keys::stats_key(product, language);
    item.insert("product_id".into(), AttributeValue::s(product));
    if let Some(language) = language {
        item.insert("language".into(), AttributeValue::s(language));
    }
    for (i, count) in counts.iter().enumerate() {
        item.insert(
            format!("count_{}", i + 1),
            AttributeValue::N(Number::from(*count)),
        );
    }
    item.insert(
        "count_total".into(),
        AttributeValue::N(Number::from(counts.iter().sum::<u64>())),
    );
    // The product is on the leaderboard only while it has 5-star comments
    // (a sparse entry in the overloaded index).
    if counts[4] > 0 {
        item.insert(
            Index::ByLangAndRating.partition_attribute().into(),
            AttributeValue::S(keys::leaderboard_partition(language)),
        );
        item.insert(
            keys::GSISK.into(),
            AttributeValue::S(keys::leaderboard_sort_key(counts[4])),
        );
    }
    item
}

fn counts_of(item: Option<&Item>) -> [u64; 5] {
    let mut counts = [0; 5];
    if let Some(item) = item {
        for (i, count) in counts.iter_mut().enumerate() {
            *count = number(item, &format!("count_{}", i + 1));
        }
    }
    counts
}

fn author_item(author: &str, count: u64) -> Item {
    let mut item = keys::author_key(author);
    item.insert("author".into(), AttributeValue::s(author));
    item.insert("count".into(), AttributeValue::N(Number::from(count)));
    item
}

fn bucket(count: u64) -> usize {
    (count.min(AUTHOR_BUCKETS as u64) - 1) as usize
}

fn totals_item(totals: &GlobalStats) -> Item {
    let mut item = keys::totals_key();
    let mut set = |name: String, value: u64| {
        item.insert(name, AttributeValue::N(Number::from(value)));
    };
    set("comments_total".into(), totals.comments_total);
    set("products_total".into(), totals.products_total);
    set("authors_total".into(), totals.authors_total);
    for (i, count) in totals.authors_by_comment_count.iter().enumerate() {
        set(format!("authors_{}", i + 1), *count);
    }
    item
}

fn totals_of(item: Option<&Item>) -> GlobalStats {
    let Some(item) = item else {
        return GlobalStats::default();
    };
    let mut totals = GlobalStats {
        comments_total: number(item, "comments_total"),
        products_total: number(item, "products_total"),
        authors_total: number(item, "authors_total"),
        authors_by_comment_count: [0; AUTHOR_BUCKETS],
    };
    for (i, count) in totals.authors_by_comment_count.iter_mut().enumerate() {
        *count = number(item, &format!("authors_{}", i + 1));
    }
    totals
}

fn apply_delta(value: u64, delta: i64) -> u64 {
    (value as i64 + delta).max(0) as u64
}

/// Writes `item`, or deletes it when it no longer counts anything.
fn write(table: &str, key: Item, item: Option<Item>) -> TransactWriteAction {
    match item {
        Some(item) => TransactWriteAction::Put {
            table: table.to_owned(),
            item,
            condition: None,
        },
        None => TransactWriteAction::Delete {
            table: table.to_owned(),
            key,
            condition: None,
        },
    }
}

fn key_text(key: &Item) -> String {
    format!(
        "{}/{}",
        text(key, keys::PK).unwrap_or_default(),
        text(key, keys::SK).unwrap_or_default()
    )
}

/// One item whose stored value differs from the recount.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// `PK/SK` of the item.
    pub key: String,
    pub stored: Option<Item>,
    pub expected: Option<Item>,
}

/// What `reconcile` found (and, with `fix`, repaired).
#[derive(Debug, Clone, PartialEq)]
pub struct ReconcileReport {
    pub items_scanned: u64,
    pub comments_counted: u64,
    pub drift: Vec<Drift>,
    pub fixed: bool,
}

/// Everything the statistics should hold, recounted from comments.
#[derive(Debug, Default)]
struct Recount {
    stats: BTreeMap<(String, Option<String>), [u64; 5]>,
    authors: BTreeMap<String, u64>,
}

impl<S: Store> Comments<S> {
    /// Applies the next batch of `feed` (waiting up to `wait` for one) and
    /// returns how many records it applied.
    pub async fn aggregate_once<F: ChangeFeed>(
        &self,
        feed: &F,
        wait: std::time::Duration,
    ) -> Result<usize> {
        let Some(mut batch) = feed.next(500, wait).await? else {
            return Ok(0);
        };
        let capacity = feed.max_effects();
        // Take as many records as fit in one commit.
        let mut deltas = Deltas::default();
        let mut fit = 0;
        for record in batch.records() {
            deltas.add(record, 1);
            if deltas.items() > capacity && fit > 0 {
                deltas.add(record, -1);
                break;
            }
            fit += 1;
        }
        batch.truncate(fit);
        deltas.prune();
        let effects = self.effects(&deltas).await?;
        match feed.commit(batch, effects).await {
            Ok(()) => Ok(fit),
            // Another aggregator got there first; the next read resumes from it.
            Err(StoreError::ConditionalCheckFailed) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// The writes that bring the touched items from their stored values to
    /// their new ones.
    async fn effects(&self, deltas: &Deltas) -> Result<Vec<TransactWriteAction>> {
        if deltas.items() == 0 {
            return Ok(Vec::new());
        }
        let table = self.table();
        let mut wanted: Vec<Item> = deltas
            .stats
            .keys()
            .map(|(p, l)| keys::stats_key(p, l.as_deref()))
            .chain(deltas.authors.keys().map(|a| keys::author_key(a)))
            .collect();
        wanted.push(keys::totals_key());
        let current = self.read_many(&wanted).await?;
        let stored = |key: &Item| current.get(&key_text(key));
        let mut totals = totals_of(stored(&keys::totals_key()));
        let mut actions = Vec::with_capacity(wanted.len());
        for ((product, language), delta) in &deltas.stats {
            let key = keys::stats_key(product, language.as_deref());
            let before = counts_of(stored(&key));
            let mut after = before;
            for (count, d) in after.iter_mut().zip(delta) {
                *count = apply_delta(*count, *d);
            }
            let (before_total, after_total) =
                (before.iter().sum::<u64>(), after.iter().sum::<u64>());
            if language.is_none() {
                totals.comments_total = apply_delta(
                    totals.comments_total,
                    after_total as i64 - before_total as i64,
                );
                totals.products_total = apply_delta(
                    totals.products_total,
                    i64::from(after_total > 0) - i64::from(before_total > 0),
                );
            }
            let item = (after_total > 0).then(|| stats_item(product, language.as_deref(), &after));
            actions.push(write(table, key, item));
        }
        for (author, delta) in &deltas.authors {
            let key = keys::author_key(author);
            let before = stored(&key).map_or(0, |i| number(i, "count"));
            let after = apply_delta(before, *delta);
            if before > 0 {
                let slot = &mut totals.authors_by_comment_count[bucket(before)];
                *slot = slot.saturating_sub(1);
            }
            if after > 0 {
                totals.authors_by_comment_count[bucket(after)] += 1;
            }
            totals.authors_total = apply_delta(
                totals.authors_total,
                i64::from(after > 0) - i64::from(before > 0),
            );
            actions.push(write(
                table,
                key,
                (after > 0).then(|| author_item(author, after)),
            ));
        }
        actions.push(write(table, keys::totals_key(), Some(totals_item(&totals))));
        Ok(actions)
    }

    /// Reads items by key (strongly consistent), keyed by `PK/SK`.
    async fn read_many(&self, wanted: &[Item]) -> Result<BTreeMap<String, Item>> {
        let mut found = BTreeMap::new();
        for chunk in wanted.chunks(100) {
            let mut pending = vec![TableKeys {
                table: self.table().to_owned(),
                keys: chunk.to_vec(),
                consistent_read: true,
            }];
            while !pending.is_empty() {
                let out = self
                    .store()
                    .batch_get_item(BatchGetItemInput { requests: pending })
                    .await?;
                for (_, items) in out.responses {
                    for item in items {
                        found.insert(key_text(&item), item);
                    }
                }
                pending = out.unprocessed;
            }
        }
        Ok(found)
    }

    /// Reads a statistics item (eventually consistent), with the read units it cost.
    async fn get_stats_item(&self, key: Item) -> Result<(Option<Item>, f64)> {
        let out = self
            .store()
            .get_item(GetItemInput {
                table: self.table().to_owned(),
                key,
                consistent_read: false,
            })
            .await?;
        self.usage()
            .add_read(out.consumed.read_units, usize::from(out.item.is_some()));
        Ok((out.item, out.consumed.read_units))
    }

    /// Counts by rating of a product, overall or in one language (AP7-AP10).
    pub async fn product_stats(
        &self,
        product: &str,
        language: Option<&str>,
    ) -> Result<ProductStats> {
        let product_id = ProductId::parse(product)?;
        let language = language.map(Language::parse).transpose()?;
        let (item, _) = self
            .get_stats_item(keys::stats_key(
                product_id.as_str(),
                language.as_ref().map(Language::as_str),
            ))
            .await?;
        let counts = counts_of(item.as_ref());
        Ok(ProductStats {
            product_id,
            language,
            counts: RatingCounts(counts),
            total: counts.iter().sum(),
        })
    }

    /// The per-rating counts the planner uses, with the read units they cost.
    pub(crate) async fn rating_counts(
        &self,
        product: &ProductId,
        language: Option<&Language>,
    ) -> Result<(RatingCounts, f64)> {
        let (item, units) = self
            .get_stats_item(keys::stats_key(
                product.as_str(),
                language.map(Language::as_str),
            ))
            .await?;
        Ok((RatingCounts(counts_of(item.as_ref())), units))
    }

    /// The products with the most 5-star comments (AP11), overall or in one language.
    pub async fn leaderboard(&self, limit: usize, language: Option<&str>) -> Result<Vec<Leader>> {
        if !(1..=100).contains(&limit) {
            return Err(CommentsError::Invalid {
                field: "limit",
                message: "must be from 1 to 100".into(),
            });
        }
        let language = language.map(Language::parse).transpose()?;
        let index = Index::ByLangAndRating;
        let mut query = QueryInput::new(
            self.table(),
            Some(index.name()),
            KeyCondition::partition(
                index.partition_attribute(),
                keys::leaderboard_partition(language.as_ref().map(Language::as_str)),
            ),
        );
        query.scan_index_forward = false;
        query.limit = Some(limit);
        let page = self.store().query(query).await?;
        self.usage()
            .add_read(page.consumed.read_units, page.scanned_count);
        Ok(page
            .items
            .iter()
            .filter_map(|item| {
                Some(Leader {
                    product_id: text(item, "product_id")?.to_owned(),
                    five_star: text(item, keys::GSISK)?.parse().ok()?,
                })
            })
            .collect())
    }

    /// The global aggregates.
    pub async fn global_stats(&self) -> Result<GlobalStats> {
        Ok(totals_of(
            self.get_stats_item(keys::totals_key()).await?.0.as_ref(),
        ))
    }

    /// Recomputes every statistic and aggregate from the comments with a
    /// parallel scan of `segments` segments, and reports the items whose
    /// stored value differs; with `fix`, writes the recounted values. Run it
    /// while no aggregator is applying changes, or its report can include
    /// changes still on their way.
    pub async fn reconcile(
        &self,
        segments: u32,
        fix: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<ReconcileReport> {
        let scans = (0..segments.max(1))
            .map(|segment| self.scan_segment(segment, segments.max(1), progress));
        let parts = try_join_all(scans).await?;
        let mut recount = Recount::default();
        let mut stored: BTreeMap<String, Item> = BTreeMap::new();
        let (mut items_scanned, mut comments_counted) = (0, 0);
        for (part, stored_part, scanned, counted) in parts {
            for (key, counts) in part.stats {
                let total = recount.stats.entry(key).or_default();
                for (t, c) in total.iter_mut().zip(counts) {
                    *t += c;
                }
            }
            for (author, count) in part.authors {
                *recount.authors.entry(author).or_default() += count;
            }
            stored.extend(stored_part);
            items_scanned += scanned;
            comments_counted += counted;
        }
        let mut expected: BTreeMap<String, Item> = BTreeMap::new();
        let mut totals = GlobalStats::default();
        for ((product, language), counts) in &recount.stats {
            let item = stats_item(product, language.as_deref(), counts);
            if language.is_none() {
                totals.comments_total += counts.iter().sum::<u64>();
                totals.products_total += 1;
            }
            expected.insert(key_text(&item), item);
        }
        for (author, count) in &recount.authors {
            totals.authors_total += 1;
            totals.authors_by_comment_count[bucket(*count)] += 1;
            let item = author_item(author, *count);
            expected.insert(key_text(&item), item);
        }
        // All-zero totals and no totals item at all mean the same.
        let totals_key = key_text(&keys::totals_key());
        if totals != GlobalStats::default() || stored.contains_key(&totals_key) {
            expected.insert(totals_key, totals_item(&totals));
        }
        let names: BTreeSet<&String> = expected.keys().chain(stored.keys()).collect();
        let drift: Vec<Drift> = names
            .into_iter()
            .filter(|k| expected.get(*k) != stored.get(*k))
            .map(|k| Drift {
                key: k.clone(),
                stored: stored.get(k).cloned(),
                expected: expected.get(k).cloned(),
            })
            .collect();
        if fix {
            let writes: Vec<(String, WriteRequest)> = drift
                .iter()
                .map(|d| {
                    let request = match (&d.expected, &d.stored) {
                        (Some(item), _) => WriteRequest::Put(item.clone()),
                        (None, Some(item)) => WriteRequest::Delete(keys_of(item)),
                        (None, None) => unreachable!("a drift has at least one side"),
                    };
                    (self.table().to_owned(), request)
                })
                .collect();
            for chunk in writes.chunks(MAX_BATCH_WRITE_REQUESTS) {
                let mut requests = chunk.to_vec();
                while !requests.is_empty() {
                    let out = self
                        .store()
                        .batch_write_item(BatchWriteItemInput { requests })
                        .await?;
                    requests = out.unprocessed;
                }
            }
        }
        Ok(ReconcileReport {
            items_scanned,
            comments_counted,
            drift,
            fixed: fix,
        })
    }

    async fn scan_segment(
        &self,
        segment: u32,
        total: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(Recount, BTreeMap<String, Item>, u64, u64)> {
        let mut recount = Recount::default();
        let mut stored = BTreeMap::new();
        let (mut scanned, mut counted) = (0u64, 0u64);
        let mut start = None;
        loop {
            let mut input = ScanInput::new(self.table());
            input.segment = Some(Segment {
                segment,
                total_segments: total,
            });
            input.limit = Some(1000);
            input.consistent_read = true;
            input.exclusive_start_key = start.take();
            let page = self.store().scan(input).await?;
            self.usage()
                .add_read(page.consumed.read_units, page.scanned_count);
            scanned += page.scanned_count as u64;
            progress(page.scanned_count as u64);
            for item in page.items {
                match keys::kind_of(&item) {
                    ItemKind::Comment => {
                        if let Some(c) = contribution(Some(&item)) {
                            counted += 1;
                            for language in [None, Some(c.language.clone())] {
                                recount
                                    .stats
                                    .entry((c.product.clone(), language))
                                    .or_default()[c.rating - 1] += 1;
                            }
                            *recount.authors.entry(c.author).or_default() += 1;
                        }
                    }
                    ItemKind::ProductStats | ItemKind::Author | ItemKind::Totals => {
                        stored.insert(key_text(&item), item);
                    }
                    ItemKind::Other => {}
                }
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok((recount, stored, scanned, counted)),
            }
        }
    }
}

fn keys_of(item: &Item) -> Item {
    [keys::PK, keys::SK]
        .iter()
        .filter_map(|k| item.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::comment_item;
    use crate::model::{Comment, Rating, Timestamp};

    fn stored(product: &str, language: &str, rating: i64, author: &str, status: Status) -> Item {
        comment_item(
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
        );
        d.add(&change(None, Some(keys::totals_key())), 1);
        d.prune();
        assert_eq!(d.items(), 0);
    }

    #[test]
    fn an_edit_moves_the_count() {
        let mut d = Deltas::default();
        let before = stored("p", "en", 5, "a", Status::Published);
        let after = stored("p", "de", 4, "a", Status::Flagged);
        d.add(&change(Some(before), Some(after)), 1);
        d.prune();
        assert_eq!(d.stats[&("p".into(), None)], [0, 0, 0, 1, -1]);
        assert_eq!(d.stats[&("p".into(), Some("en".into()))], [0, 0, 0, 0, -1]);
        assert_eq!(d.stats[&("p".into(), Some("de".into()))], [0, 0, 0, 1, 0]);
        assert!(d.authors.is_empty(), "same author, still counted");
        assert_eq!(d.items(), 4);
    }

    #[test]
    fn leaderboard_keys_sort_as_text_and_vanish_at_zero() {
        let item = stats_item("p", None, &[0, 0, 0, 0, 12]);
        assert_eq!(item["GSIPK"], AttributeValue::s("LEADERS"));
        assert_eq!(item["GSISK"], AttributeValue::s("000000000012"));
        assert!(keys::leaderboard_sort_key(9) < keys::leaderboard_sort_key(10));
        let item = stats_item("p", Some("en"), &[3, 0, 0, 0, 0]);
        assert!(!item.contains_key("GSIPK") && !item.contains_key("GSISK"));
        assert_eq!(
            stats_item("p", Some("en"), &[0, 0, 0, 0, 1])["GSIPK"],
            AttributeValue::s("LEADERS#en")
        );
    }

    #[test]
    fn author_buckets() {
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(9), 8);
        assert_eq!(bucket(10), 9);
        assert_eq!(bucket(250), 9);
    }
}

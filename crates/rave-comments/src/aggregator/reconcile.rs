//! Recounting every statistic from the comments themselves, to find (and
//! repair) what drifted: a parallel scan, then a comparison item by item.
//!
//! `rave reconcile [--fix]` recounts the counts (and each comment's votes),
//! reports every drifted item, and with `--fix` writes the recounted values;
//! a comment whose vote counts differ from its votes, or whose `HELPSK` is
//! missing or stale, is rewritten with the recounted ones (the one-time
//! backfill of the `helpful*` indexes). A comment's listing copy (`MEDIA`,
//! `FAMILY`, `FAMILYMEDIA`) that is missing, stale or left over is drift too, and a repair writes it
//! as the comment (repaired first) gives it.
//!
//! **Families.** A comment whose family (`details.family`) is not the
//! group its product's record names (none without a record) is drift too,
//! repaired with the record's family, which moves its family copies: so
//! `--fix` brings comments stored before families had copies into their
//! families' listings, and finishes what a move's job or an import racing
//! a move left (a move whose job has not run yet is reported the same
//! way). And the group partitions must match the records: a member item
//! in `GROUP#<g>` for each record naming `g` and for no other product, and
//! each head counting its members (a head counting none is as good as no
//! head); `--fix` puts the missing, deletes the stray and rewrites the
//! heads. The CLI first lets the aggregator
//! apply what is pending, so the recount and the stored values describe the
//! same moment. A statistics item with zero counts compares equal to no
//! item, and the revision is left out of the comparison (a repair writes
//! the next revision). The totals are compared by their sum; a drifted sum
//! is rewritten into partial 0 and the other partials deleted. Items of the
//! layout before shards and partials (entries in `LEADERS` /
//! `LEADERS#<lang>`, the single `AGGREGATES` / `TOTALS` item) differ from
//! their recount, so `--fix` moves them to the current layout; until then
//! readers merge them in too.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;
use rave_store::{Item, Segment, Store, WriteRequest};

use super::{Aggregator, StatsCounts, contribution, totals_of};
use crate::error::Result;
use crate::model::{ProductId, VoteCounts};
use crate::table::comment::Partitions;
use crate::table::group::{self, GroupItem};
use crate::table::product;
use crate::table::stats::product as product_stats;
use crate::table::stats::totals::{self, Slot, TotalsPart};
use crate::table::stats::{self, author};
use crate::table::{ItemKind, Malformed, comment, describe_key, primary_key, vote};

/// Items a recount scan reads per request.
const SCAN_PAGE: usize = 1000;

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

/// What one scan segment found.
#[derive(Debug, Default)]
struct Recount {
    stats: StatsCounts<u64>,
    authors: BTreeMap<String, u64>,
    /// The statistics items as stored, by `PK/SK`.
    stored: BTreeMap<String, Item>,
    /// Per comment id, the votes counted.
    votes: BTreeMap<String, VoteCounts>,
    /// Comments that carry vote counts or lack the `helpful` sort key their
    /// counts give, by id (the others count zero and carry it).
    voted: BTreeMap<String, Item>,
    /// The listing copies the comments as stored give, by `PK/SK`.
    copies_expected: BTreeMap<String, Item>,
    /// The listing copies stored, by `PK/SK`.
    copies_stored: BTreeMap<String, Item>,
    /// Per comment id, its product and the family it is in.
    families: BTreeMap<String, (ProductId, Option<ProductId>)>,
    /// Per product with a record, the group the record names.
    records: BTreeMap<ProductId, Option<ProductId>>,
    /// The groups' head and member items stored, by `PK/SK`.
    group_items: BTreeMap<String, Item>,
    scanned: u64,
    counted: u64,
}

impl Recount {
    fn merge(&mut self, other: Recount) {
        for (key, counts) in other.stats {
            self.stats.entry(key).or_default().add(&counts);
        }
        for (author, count) in other.authors {
            *self.authors.entry(author).or_default() += count;
        }
        self.stored.extend(other.stored);
        for (id, counts) in other.votes {
            let total = self.votes.entry(id).or_default();
            total.helpful += counts.helpful;
            total.unhelpful += counts.unhelpful;
        }
        self.voted.extend(other.voted);
        self.copies_expected.extend(other.copies_expected);
        self.copies_stored.extend(other.copies_stored);
        self.families.extend(other.families);
        self.records.extend(other.records);
        self.group_items.extend(other.group_items);
        self.scanned += other.scanned;
        self.counted += other.counted;
    }

    /// The stored statistics items as a recount compares them (see
    /// `product_stats::comparable`).
    fn comparable_stored(&self) -> BTreeMap<String, Item> {
        self.stored
            .iter()
            .filter_map(|(key, item)| {
                let item = match ItemKind::of(item) {
                    ItemKind::ProductStats => product_stats::comparable(item)?,
                    _ => item.clone(),
                };
                Some((key.clone(), item))
            })
            .collect()
    }

    /// Every statistics item as the recount says it should be stored.
    fn expected(&self) -> Result<BTreeMap<String, Item>, Malformed> {
        let mut expected = self.expected_totals()?;
        for ((product, language), counts) in &self.stats {
            let item = product_stats::encode(product, language.as_ref(), counts);
            expected.insert(describe_key(&item), item);
        }
        for (author, count) in &self.authors {
            let item = author::encode(author, *count);
            expected.insert(describe_key(&item), item);
        }
        Ok(expected)
    }

    /// The totals items as they should be stored: as they are while their
    /// sum equals the recount and the old layout's single item is gone;
    /// otherwise the recount in partial 0 and no other item (all-zero
    /// totals and no totals item at all mean the same).
    fn expected_totals(&self) -> Result<BTreeMap<String, Item>, Malformed> {
        let stored: BTreeMap<String, Item> = self
            .stored
            .iter()
            .filter(|(_, item)| ItemKind::of(item) == ItemKind::Totals)
            .map(|(key, item)| (key.clone(), item.clone()))
            .collect();
        let mut sum = TotalsPart::default();
        for item in stored.values() {
            sum.add(&totals::decode(item)?);
        }
        let recount = TotalsPart::of_stats(&totals_of(&self.stats, &self.authors));
        let legacy = describe_key(&totals::legacy_key());
        if sum == recount && !stored.contains_key(&legacy) {
            return Ok(stored);
        }
        let mut expected = BTreeMap::new();
        if recount != TotalsPart::default() {
            let item = totals::encode(Slot::FIRST, &recount);
            expected.insert(describe_key(&item), item);
        }
        Ok(expected)
    }
}

/// Listing copies that differ from what their comments give: the copy of
/// each comment as stored, or as `repaired` (comments a repair rewrites)
/// makes it.
fn copy_drift(recount: &Recount, repaired: &[Drift]) -> Result<Vec<Drift>, Malformed> {
    let mut expected = recount.copies_expected.clone();
    for comment_item in repaired.iter().filter_map(|d| d.expected.as_ref()) {
        if ItemKind::of(comment_item) != ItemKind::Comment {
            continue;
        }
        let repaired = comment::decode(comment_item)?;
        for kind in Partitions::COPIES {
            let key = describe_key(&comment::copy_key(&repaired.id, kind));
            match comment::listing_copy(&repaired, kind) {
                Some(copy) => expected.insert(key, copy),
                None => expected.remove(&key),
            };
        }
    }
    let names: BTreeSet<&String> = expected
        .keys()
        .chain(recount.copies_stored.keys())
        .collect();
    Ok(names
        .into_iter()
        .filter(|key| expected.get(*key) != recount.copies_stored.get(*key))
        .map(|key| Drift {
            key: key.clone(),
            stored: recount.copies_stored.get(key).cloned(),
            expected: expected.get(key).cloned(),
        })
        .collect())
}

impl Recount {
    /// The family each comment should be in, for those in another: the
    /// group their product's record names (none without a record).
    fn misplaced(&self) -> BTreeMap<String, Option<ProductId>> {
        self.families
            .iter()
            .filter_map(|(id, (product, family))| {
                let named = self.records.get(product).cloned().flatten();
                (named != *family).then(|| (id.clone(), named))
            })
            .collect()
    }

    /// The group items that differ from what the records give: a member
    /// item in `GROUP#<g>` for each record naming `g` and no other, and
    /// each head counting its members (a head counting none is as good as
    /// none).
    fn membership_drift(&self) -> Result<Vec<Drift>, Malformed> {
        let mut expected: BTreeMap<String, Item> = BTreeMap::new();
        let mut members: BTreeMap<&ProductId, u64> = BTreeMap::new();
        for (product, named) in &self.records {
            if let Some(named) = named {
                let item = group::member_key(named, product);
                expected.insert(describe_key(&item), item);
                *members.entry(named).or_default() += 1;
            }
        }
        for (named, count) in members {
            let item = group::encode_head(named, count);
            expected.insert(describe_key(&item), item);
        }
        let mut stored: BTreeMap<String, Item> = BTreeMap::new();
        for (key, item) in &self.group_items {
            match group::decode_group_item(item)? {
                GroupItem::Head { group, members } => {
                    if members > 0 {
                        stored.insert(key.clone(), group::encode_head(&group, members));
                    }
                }
                GroupItem::Member { .. } => {
                    stored.insert(key.clone(), item.clone());
                }
            }
        }
        let names: BTreeSet<&String> = expected.keys().chain(stored.keys()).collect();
        Ok(names
            .into_iter()
            .filter(|key| expected.get(*key) != stored.get(*key))
            .map(|key| Drift {
                key: key.clone(),
                // A head is repaired whole: its stored form, as it is.
                stored: self.group_items.get(key).cloned(),
                expected: expected.get(key).cloned(),
            })
            .collect())
    }
}

impl<S: Store> Aggregator<S> {
    /// Recomputes every statistic and aggregate from the comments with a
    /// parallel scan of `segments` segments, and reports the items whose
    /// stored value differs; with `fix`, writes the recounted values. Run it
    /// while no aggregator is applying changes, or its report can include
    /// changes still on their way.
    pub(crate) async fn reconcile(
        &self,
        segments: u32,
        fix: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<ReconcileReport> {
        let segments = segments.max(1);
        let scans = (0..segments).map(|segment| self.recount_segment(segment, segments, progress));
        let mut recount = Recount::default();
        for part in try_join_all(scans).await? {
            recount.merge(part);
        }
        let expected = recount.expected()?;
        let stored = recount.comparable_stored();
        let stored = &stored;
        let names: BTreeSet<&String> = expected.keys().chain(stored.keys()).collect();
        let mut drift: Vec<Drift> = names
            .into_iter()
            .filter(|k| expected.get(*k) != stored.get(*k))
            .map(|k| Drift {
                key: k.clone(),
                stored: stored.get(k).cloned(),
                expected: expected.get(k).cloned(),
            })
            .collect();
        let repaired = self.comment_drift(&recount).await?;
        drift.extend(copy_drift(&recount, &repaired)?);
        drift.extend(repaired);
        drift.extend(recount.membership_drift()?);
        if fix {
            let writes = drift
                .iter()
                .filter_map(|d| {
                    // A product's revision survives its repair, raised.
                    let raw = recount.stored.get(&d.key);
                    if let Some(item) =
                        raw.and_then(|raw| product_stats::repaired(raw, d.expected.as_ref()))
                    {
                        return Some(WriteRequest::Put(item));
                    }
                    match (&d.expected, &d.stored) {
                        (Some(item), _) => Some(WriteRequest::Put(item.clone())),
                        (None, Some(item)) => Some(WriteRequest::Delete(primary_key(item))),
                        (None, None) => None,
                    }
                })
                .collect();
            self.access.write_many(writes).await?;
        }
        Ok(ReconcileReport {
            items_scanned: recount.scanned,
            comments_counted: recount.counted,
            drift,
            fixed: fix,
        })
    }

    /// Comments whose vote counts differ from their votes, whose `helpful`
    /// sort key is missing (stored before it existed) or does not match
    /// their counts, or whose family is not the one their product's record
    /// names (stored before families had copies, or left behind by an
    /// import racing a move): the stored comment, and the same comment
    /// with the recounted counts, their key and the record's family (at
    /// its next version, which is what a repair writes).
    async fn comment_drift(&self, recount: &Recount) -> Result<Vec<Drift>> {
        let misplaced = recount.misplaced();
        let unread: Vec<Item> = recount
            .votes
            .keys()
            .chain(misplaced.keys())
            .filter(|id| !recount.voted.contains_key(*id))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|id| comment::key(id))
            .collect();
        let mut comments = recount.voted.clone();
        for item in self.access.get_many(&unread).await? {
            comments.insert(comment::id_of_key(&item)?.to_string(), item);
        }
        let mut drift = Vec::new();
        // Votes whose comment is gone (a delete or an erasure that stopped
        // half-way): nothing counts them any more, so a repair deletes them.
        for id in recount
            .votes
            .keys()
            .filter(|id| !comments.contains_key(*id))
        {
            drift.extend(self.orphaned_votes(id).await?);
        }
        for (id, item) in comments {
            let mut expected = comment::decode(&item)?;
            let counted = recount.votes.get(&id).copied().unwrap_or_default();
            let family = misplaced.get(&id);
            if expected.votes == counted
                && !comment::helpful_key_is_stale(&item)?
                && family.is_none()
            {
                continue;
            }
            expected.votes = counted;
            if let Some(family) = family {
                expected.group = family.clone();
            }
            drift.push(Drift {
                key: describe_key(&item),
                expected: Some(comment::encode(&expected, comment::version(&item)? + 1)),
                stored: Some(item),
            });
        }
        Ok(drift)
    }

    /// Every vote stored on comment `id`, each as drift that deletes it.
    async fn orphaned_votes(&self, id: &str) -> Result<Vec<Drift>> {
        let mut drift = Vec::new();
        let mut start = None;
        loop {
            let mut input = self.access.query_input(None, vote::votes_of(id));
            input.consistent_read = true;
            input.exclusive_start_key = start.take();
            let page = self.access.query(input).await?;
            drift.extend(page.items.into_iter().map(|item| Drift {
                key: describe_key(&item),
                stored: Some(item),
                expected: None,
            }));
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(drift),
            }
        }
    }

    async fn recount_segment(
        &self,
        segment: u32,
        total_segments: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Recount> {
        let mut recount = Recount::default();
        let mut start = None;
        loop {
            let page = self
                .access
                .scan(
                    Segment {
                        segment,
                        total_segments,
                    },
                    SCAN_PAGE,
                    true,
                    start.take(),
                )
                .await?;
            recount.scanned += page.scanned_count as u64;
            progress(page.scanned_count as u64);
            for item in page.items {
                match ItemKind::of(&item) {
                    ItemKind::Comment => {
                        if let Some(c) = contribution(Some(&item))? {
                            recount.counted += 1;
                            c.count_into(&mut recount.stats, 1u64);
                            *recount.authors.entry(c.author).or_default() += 1;
                        }
                        let decoded = comment::decode(&item)?;
                        recount.families.insert(
                            decoded.id.clone(),
                            (decoded.product_id.clone(), decoded.group.clone()),
                        );
                        for copy in Partitions::COPIES
                            .into_iter()
                            .filter_map(|kind| comment::listing_copy(&decoded, kind))
                        {
                            recount.copies_expected.insert(describe_key(&copy), copy);
                        }
                        if decoded.votes != VoteCounts::default()
                            || comment::helpful_key_is_stale(&item)?
                        {
                            recount
                                .voted
                                .insert(comment::id_of_key(&item)?.to_string(), item);
                        }
                    }
                    ItemKind::Vote => {
                        let vote = vote::decode(&item)?;
                        let counts = recount.votes.entry(vote.comment_id).or_default();
                        match vote.helpful {
                            true => counts.helpful += 1,
                            false => counts.unhelpful += 1,
                        }
                    }
                    ItemKind::ProductStats | ItemKind::AuthorStats | ItemKind::Totals => {
                        // Compared by value: the version token is not part of it.
                        recount
                            .stored
                            .insert(describe_key(&item), stats::without_version(item));
                    }
                    ItemKind::ListingCopy => {
                        recount.copies_stored.insert(describe_key(&item), item);
                    }
                    ItemKind::ProductRecord => {
                        let (record, _) = product::decode(&item)?;
                        let named = record.group.as_deref().map(ProductId::parse).transpose();
                        let named = named
                            .map_err(|_| Malformed::new(&item, "group is not a product id"))?;
                        recount.records.insert(product::product_of(&item)?, named);
                    }
                    ItemKind::Group => {
                        recount.group_items.insert(describe_key(&item), item);
                    }
                    ItemKind::Other => {}
                }
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(recount),
            }
        }
    }
}

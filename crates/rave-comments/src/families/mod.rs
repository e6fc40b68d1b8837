//! Product families: a product record may name its `group`, and the group
//! then lists, counts and shows every variant's comments together.
//!
//! **Membership** (`table::group`): the record's write and the group
//! partition's member items are one TransactWriteItems, so the members
//! listed are exactly the records naming the group: the record is written
//! conditional on the revision it was read at (a racing write of it reads
//! again, never leaving a member behind; `catalog::skus` composes the
//! transaction), the old group's member item goes and
//! the new one's comes, and the heads' member counts keep families one
//! level deep (`table::group`'s doc).
//!
//! **Listing: the family's own index entries.** A comment knows its
//! family: `details.family` on the comment item, the group its product's
//! record named when the comment was written (`Comment::group`). A
//! visible comment of a grouped product has a family copy (`COMMENT#<id>`
//! / `FAMILY`, and `FAMILYMEDIA` with a published photo) keyed into the
//! `FAMILY#<g>…` partitions of the listing indexes, written, moved and
//! removed with the comment by `table::comment::writes`, as the media copy
//! is. So a group's listing is a product listing of those partitions
//! (`listing::group`): one planner, one cursor, no merge over variants.
//!
//! **A create cannot miss a move.** A new comment's transaction checks
//! the product record: `group = :g` when it read group `g`,
//! `attribute_not_exists(group)` when it read none (true of a missing
//! record too). A move committed in between cancels it; it reads the
//! record again and retries (at most `MAX_WRITE_ATTEMPTS`, then a 409).
//! This makes every create a transaction of at least two actions: 13
//! write units for a plain post instead of 10, 21 for a verified one
//! instead of 19 (`tests/verified.rs`). An import (BatchWriteItem, no
//! conditions) reads the records' groups first; a move racing it can
//! leave a comment in the old family, which `reconcile` finds and mends.
//!
//! **Moving a product moves its comments** (`moves`): the listing follows
//! within the move's job, which rewrites each comment of the product with
//! its new family through the versioned modify path; the counts follow at
//! once. **Statistics stay derived**: a group holds no counts of its own;
//! its statistics are the sum of its variants' statistics items, read in
//! one BatchGetItem, as exact as theirs (the aggregator's, recounted by
//! `reconcile`), and a move changes them when its record commits.
//!
//! **Cost.** One more item per visible comment of a grouped product (two
//! with a published photo): the listed attributes and the listing keys,
//! the size of a media copy (342 bytes for a short comment, under 1 KB
//! for most: `table::comment`'s tests), with entries in the four listing
//! and four `helpful` indexes (six more when verified). A post to a
//! grouped product costs 23 write units instead of 13 (the copy, 2 in a
//! transaction, and its 8 entries: `tests/groups.rs`), and each later
//! change of the comment rewrites the copy with it. The table has room:
//! no new index, no new projected attribute (`details` carries the
//! family). A move costs one versioned rewrite per comment of the product
//! (its item, its copies and their entries).

pub(crate) mod moves;

use std::collections::BTreeMap;
use std::time::SystemTime;

use rave_store::{CancellationReason, Item, Store, TransactWriteAction};
use ulid::Ulid;

use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::{Language, ProductId, ProductRecord, Timestamp};
use crate::statistics::ProductStats;
use crate::table::stats::product::{self as product_stats, ProductCounts};
use crate::table::{group, product};

/// Most variants a group has: its statistics read one item per variant
/// (within one BatchGetItem of 100 keys), and a page of its listing sums
/// their counts.
pub const MAX_VARIANTS: usize = 50;

/// A variant and what its statistics count (overall or in one language).
pub(crate) type VariantCounts = (ProductId, ProductCounts);

/// A group's statistics: the sum of its variants'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStats {
    /// The counts, with the group's id as their `product_id`.
    pub stats: ProductStats,
    /// Each variant's own, in product id order.
    pub variants: Vec<ProductStats>,
}

/// The members of a group, in product id order (empty for a group with
/// none, or a product id that is no group).
pub(crate) async fn members<S: Store>(
    access: &TableAccess<S>,
    group_id: &ProductId,
) -> Result<Vec<ProductId>> {
    let mut members = Vec::new();
    let mut start = None;
    loop {
        let mut query = access.query_input(None, group::members(group_id));
        query.exclusive_start_key = start.take();
        let page = access.query(query).await?;
        for item in &page.items {
            members.push(group::decode_member(item)?);
        }
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => return Ok(members),
        }
    }
}

/// Each variant of the group and what its statistics item counts
/// (overall or in `language`), read in one request.
pub(crate) async fn variant_counts<S: Store>(
    access: &TableAccess<S>,
    group_id: &ProductId,
    language: Option<&Language>,
) -> Result<Vec<VariantCounts>> {
    let variants = members(access, group_id).await?;
    let keys: Vec<Item> = variants
        .iter()
        .map(|variant| product_stats::key(variant, language))
        .collect();
    let found = access.get_many(&keys).await?;
    variants
        .into_iter()
        .zip(&keys)
        .map(|(variant, key)| {
            let counts = match found.iter().find(|item| same_key(item, key)) {
                Some(item) => product_stats::decode(item)?,
                None => ProductCounts::default(),
            };
            Ok((variant, counts))
        })
        .collect()
}

/// The group's statistics (overall or in one language): its variants'
/// statistics items summed.
pub(crate) async fn group_stats<S: Store>(
    access: &TableAccess<S>,
    group: &str,
    language: Option<&str>,
) -> Result<GroupStats> {
    let group_id = parse_group(group)?;
    let language = language.map(Language::parse).transpose()?;
    let variants = variant_counts(access, &group_id, language.as_ref()).await?;
    let mut total = ProductCounts::default();
    for (_, counts) in &variants {
        total.add(counts);
    }
    Ok(GroupStats {
        stats: ProductStats::of(group_id, language.clone(), &total),
        variants: variants
            .into_iter()
            .map(|(variant, counts)| ProductStats::of(variant, language.clone(), &counts))
            .collect(),
    })
}

/// The group `product`'s record names now (none without a record), read
/// consistently: the family a comment written now belongs to.
pub(crate) async fn family_of<S: Store>(
    access: &TableAccess<S>,
    product: &ProductId,
) -> Result<Option<ProductId>> {
    let (item, _) = access.get(product::key(product), true).await?;
    match item {
        Some(item) => record_group(&product::decode(&item)?.0),
        None => Ok(None),
    }
}

/// The group each of `products`' records names (products of no group and
/// without a record are left out), read in one request.
pub(crate) async fn families_of<S: Store>(
    access: &TableAccess<S>,
    products: &[ProductId],
) -> Result<BTreeMap<ProductId, ProductId>> {
    let keys: Vec<Item> = products.iter().map(product::key).collect();
    let mut families = BTreeMap::new();
    for item in access.get_many(&keys).await? {
        if let Some(group) = record_group(&product::decode(&item)?.0)? {
            families.insert(product::product_of(&item)?, group);
        }
    }
    Ok(families)
}

fn record_group(record: &ProductRecord) -> Result<Option<ProductId>> {
    record.group.as_deref().map(ProductId::parse).transpose()
}

/// The check a new comment's transaction makes that `product`'s record
/// still names `family`, the group it was given (see `write`).
pub(crate) fn still_of_family<S: Store>(
    access: &TableAccess<S>,
    product: &ProductId,
    family: Option<&ProductId>,
) -> TransactWriteAction {
    access.condition_check_action(product::key(product), group::names(family))
}

/// A group's id, which is shaped like a product's; an error names `group`.
pub(crate) fn parse_group(group: &str) -> Result<ProductId> {
    ProductId::parse(group)
        .map_err(|_| invalid("must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'"))
}

fn same_key(item: &Item, key: &Item) -> bool {
    key.iter()
        .all(|(name, value)| item.get(name) == Some(value))
}

/// The actions that move a product's group membership with its record's
/// write (the old group's member item removed, the new one's added, each
/// head's count moved), and where its checks sit among them.
pub(crate) struct Membership {
    pub actions: Vec<TransactWriteAction>,
    product_not_a_group: Option<usize>,
    group_not_a_variant: Option<usize>,
    new_group: Option<ProductId>,
}

impl Membership {
    /// The refusal a cancelled transaction means, if one of these checks
    /// failed; `offset` is where the actions start in the transaction.
    pub(crate) fn refusal(
        &self,
        product_id: &ProductId,
        reasons: &[CancellationReason],
        offset: usize,
    ) -> Option<CommentsError> {
        let failed = |at: Option<usize>| {
            at.and_then(|at| reasons.get(offset + at)) == Some(&CONDITION_FAILED)
        };
        if failed(self.product_not_a_group) {
            Some(invalid(format!(
                "{product_id} is a group with variants; a group cannot be a variant of another"
            )))
        } else if failed(self.group_not_a_variant) {
            let group_id = self.new_group.as_ref().map_or("", ProductId::as_str);
            Some(invalid(format!(
                "{group_id} is a variant of another group; groups are one level deep"
            )))
        } else {
            None
        }
    }
}

/// The membership change of writing `record` over `previous` (the stored
/// record, if any) as `product_id`'s.
pub(crate) async fn membership<S: Store>(
    access: &TableAccess<S>,
    product_id: &ProductId,
    record: &ProductRecord,
    previous: Option<&ProductRecord>,
) -> Result<Membership> {
    let new_group = record.group.as_deref().map(parse_group).transpose()?;
    if new_group.as_ref() == Some(product_id) {
        return Err(invalid("a product cannot be a variant of itself"));
    }
    if let Some(group_id) = &new_group {
        let members = members(access, group_id).await?;
        if !members.contains(product_id) && members.len() >= MAX_VARIANTS {
            return Err(invalid(format!(
                "group {group_id} has {MAX_VARIANTS} variants, the most a group has"
            )));
        }
    }
    let old_group = previous
        .and_then(|old| old.group.as_deref())
        .map(ProductId::parse)
        .transpose()?;
    let mut membership = Membership {
        actions: Vec::new(),
        product_not_a_group: None,
        group_not_a_variant: None,
        new_group: new_group.clone(),
    };
    let actions = &mut membership.actions;
    if new_group.is_some() {
        membership.product_not_a_group = Some(actions.len());
        actions.push(
            access.condition_check_action(group::head_key(product_id), group::has_no_members()),
        );
    }
    if old_group != new_group {
        // The move's job puts the product's comments in the new family
        // (`moves`); the marker says it is to be done, durably.
        actions.push(access.put_action(
            group::encode_move(&group::MoveMarker {
                product: product_id.clone(),
                from: old_group.clone(),
                to: new_group.clone(),
                since: Timestamp::now(),
                token: Ulid::from_datetime(SystemTime::now()).to_string(),
            }),
            None,
        ));
        if let Some(old) = &old_group {
            actions.push(access.delete_action(group::member_key(old, product_id), None));
            actions.push(update(access, group::head_key(old), -1));
        }
        if let Some(new) = &new_group {
            actions.push(access.put_action(group::member_key(new, product_id), None));
            actions.push(update(access, group::head_key(new), 1));
            membership.group_not_a_variant = Some(actions.len());
            actions.push(access.condition_check_action(product::key(new), group::not_a_variant()));
        }
    }
    Ok(membership)
}

const CONDITION_FAILED: CancellationReason = CancellationReason::ConditionalCheckFailed;

fn update<S: Store>(access: &TableAccess<S>, key: Item, change: i64) -> TransactWriteAction {
    TransactWriteAction::Update {
        table: access.table().to_owned(),
        key,
        update: group::count_members(change),
        condition: None,
    }
}

fn invalid(message: impl Into<String>) -> CommentsError {
    CommentsError::Invalid {
        field: "group",
        message: message.into(),
    }
}

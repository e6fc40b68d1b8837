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
//! **Design: derived, not copied.** A group holds no comments and no
//! counts of its own. Its listing is a merge of its variants' listings
//! (`listing::group`), and its statistics are the sum of its variants'
//! statistics items, read in one BatchGetItem. The variants' items are the
//! aggregator's (conditional on their version, in the transaction with the
//! stream position) and `reconcile` recounts them, so the group's are as
//! exact as theirs; and moving a product to another group is the one
//! transaction above: its comments and counts belong to the new group
//! when it commits, with nothing to copy, no job to run, and nothing a
//! crash can leave half done. A copy per group (index entries or counts
//! kept under the group's key) would need a background move that rewrites
//! every comment of the product, and new indexes the table has no room
//! for (16 of DynamoDB's 20, 91 of the 100 included attributes, used).
//! The price is the listing's reads: a merge over k variants reads about
//! k items a page more than it shows (`listing::group` has the figures).

use rave_store::{CancellationReason, Item, Store, TransactWriteAction};

use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::{Language, ProductId, ProductRecord};
use crate::statistics::ProductStats;
use crate::table::stats::product::{self as product_stats, ProductCounts};
use crate::table::{group, product};

/// Most variants a group has: a group page merges one listing per variant,
/// up to five rating partitions each, and the executor names each source
/// with a byte.
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

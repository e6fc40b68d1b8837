//! Moving a product's comments with it to another family: every comment of
//! the product gets the group its record names now, through the versioned
//! modify path every writer uses (`write`), which moves its family copies
//! (`table::comment::writes`).
//!
//! **Finding every comment of a product** without a scan: the visible ones
//! (published or flagged) are its `all` listing partition; the others are
//! pending, and every pending comment is in the moderation index's
//! `MODERATION#pending` partition, read with a filter on the product. No
//! comment is in neither (a status other than published has a moderation
//! key), so none needs its group fixed without being found. The queue is
//! read before and after the listing, so a comment approved (or held)
//! between the reads is found in one of them.

use std::collections::BTreeMap;

use rave_store::{Condition, KeyCondition, Store};

use super::family_of;
use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::{ProductId, Status};
use crate::table::{Index, comment};
use crate::write::Writes;

/// Every comment of `product`, by id, with the family it is in now.
async fn product_comments<S: Store>(
    access: &TableAccess<S>,
    product: &ProductId,
) -> Result<BTreeMap<String, Option<ProductId>>> {
    let pending = || {
        (
            Index::Moderation,
            comment::queued(Status::Pending),
            Some(comment::of_product(product)),
        )
    };
    let mut found = BTreeMap::new();
    for (index, key, filter) in [
        pending(),
        (Index::All, comment::visible_of(product), None),
        pending(),
    ] {
        read_partition(access, index, key, filter, &mut found).await?;
    }
    Ok(found)
}

async fn read_partition<S: Store>(
    access: &TableAccess<S>,
    index: Index,
    key: KeyCondition,
    filter: Option<Condition>,
    found: &mut BTreeMap<String, Option<ProductId>>,
) -> Result<()> {
    let mut start = None;
    loop {
        let mut input = access.query_input(Some(index.name()), key.clone());
        input.filter = filter.clone();
        input.exclusive_start_key = start.take();
        let page = access.query(input).await?;
        for item in &page.items {
            let listed = comment::decode(item)?;
            found.insert(listed.id, listed.group);
        }
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => return Ok(()),
        }
    }
}

/// Puts every comment of `product` in the family its record names now,
/// telling `progress` how many of how many are done after each. A comment
/// deleted meanwhile is done.
pub(crate) async fn refamily<S: Store>(
    access: &TableAccess<S>,
    writes: &Writes<S>,
    product: &ProductId,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<()> {
    let family = family_of(access, product).await?;
    let comments = product_comments(access, product).await?;
    let total = comments.len() as u64;
    progress(0, total);
    for (done, (id, group)) in comments.iter().enumerate() {
        if group.as_ref() != family.as_ref() {
            match writes.set_group(id, family.as_ref()).await {
                Ok(_) | Err(CommentsError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        progress(done as u64 + 1, total);
    }
    Ok(())
}

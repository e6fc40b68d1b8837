//! Moving a product's comments with it to another family: a background
//! job with progress, exact when it ends.
//!
//! The record write that changes a product's group also puts a durable
//! move marker (`table::group`), in the same transaction. A job (the
//! server runs one worker, woken by every record write and at start-up, so
//! moves a crash interrupted resume) takes each marker, oldest first, and
//! gives every comment of the product the group its record names now,
//! through the versioned modify path every writer uses (`write`), which
//! moves its family copies (`table::comment::writes`): a write racing the
//! job is retried on the version, never lost. Then it deletes the marker,
//! on the condition that no newer move replaced it (that one's run
//! follows). Until then, the group listings may show a moved comment in
//! its old family or not yet in its new one, never twice (a comment has
//! one family copy); the counts move at once (`families`). A job cut short
//! leaves its marker, and is run again from the start: the comments it
//! already moved are passed over (`tests/groups.rs` stops a job midway;
//! rave-cli's `tests/moves_crash.rs` kills `rave serve` mid-move with
//! SIGKILL and restarts it).
//!
//! **Progress**: how many of the product's comments the running job has
//! been through, of how many it found, kept in memory by the process
//! running it ([`Moves`]); a marker no job here has started shows none.
//!
//! **Finding every comment of a product** without a scan: the visible ones
//! (published or flagged) are its `all` listing partition; the others are
//! pending, and every pending comment is in the moderation index's
//! `MODERATION#pending` partition, read with a filter on the product. No
//! comment is in neither (a status other than published has a moderation
//! key), so none needs its group fixed without being found. The queue is
//! read before and after the listing, so a comment approved (or held)
//! between the reads is found in one of them. On DynamoDB the indexes are
//! eventually consistent: a comment written (with the old family) in the
//! instant before the move's record can be missing from what the job
//! reads; `reconcile` reports it and `--fix` moves it (the embedded
//! engine's indexes are written with their items).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use rave_store::{Condition, Item, KeyCondition, Store, StoreError};
use tokio::sync::Notify;

use super::family_of;
use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::{ProductId, Status, Timestamp};
use crate::table::group::{self, MoveMarker};
use crate::table::{Index, comment};
use crate::write::Writes;

/// A pending move of a product between families, and how far its job has
/// gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveProgress {
    pub product_id: ProductId,
    /// The group before the move, and after (`None`: no group).
    pub from: Option<ProductId>,
    pub to: Option<ProductId>,
    /// When the record was written.
    pub since: Timestamp,
    /// The product's comments the job has been through, of `total`.
    pub done: u64,
    /// The product's comments the job found; `None` until a job in this
    /// process has started on the move.
    pub total: Option<u64>,
}

/// The moves' jobs of one process: their progress, and the signal that a
/// record write may have left a move to do.
#[derive(Debug, Default)]
pub(crate) struct Moves {
    /// By product: (done, total) of the job running or last run here.
    progress: Mutex<BTreeMap<ProductId, (u64, u64)>>,
    requested: Notify,
}

impl Moves {
    /// A record was written: the worker looks for markers.
    pub(crate) fn request(&self) {
        self.requested.notify_one();
    }

    /// Resolves once a record was written since the last wait.
    pub(crate) async fn requested(&self) {
        self.requested.notified().await;
    }

    fn set(&self, product: &ProductId, done: u64, total: u64) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(product.clone(), (done, total));
    }

    fn forget(&self, product: &ProductId) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(product);
    }

    fn of(&self, product: &ProductId) -> Option<(u64, u64)> {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(product)
            .copied()
    }
}

/// Every pending move's marker, oldest first.
async fn markers<S: Store>(access: &TableAccess<S>) -> Result<Vec<MoveMarker>> {
    let mut keys: Vec<Item> = Vec::new();
    let mut start = None;
    loop {
        let mut input = access.query_input(Some(Index::Moderation.name()), group::pending_moves());
        input.exclusive_start_key = start.take();
        let page = access.query(input).await?;
        keys.extend(page.items.iter().map(crate::table::primary_key));
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => break,
        }
    }
    // Read by key: the index entry may be older than a marker rewritten
    // since, or name one deleted since (then it is left out).
    let found = access.get_many(&keys).await?;
    let mut markers = found
        .iter()
        .map(group::decode_move)
        .collect::<Result<Vec<_>, _>>()?;
    markers.sort_by(|a, b| (a.since, &a.product).cmp(&(b.since, &b.product)));
    Ok(markers)
}

/// The pending moves, with the progress of the jobs of this process.
pub(crate) async fn pending<S: Store>(
    access: &TableAccess<S>,
    moves: &Moves,
) -> Result<Vec<MoveProgress>> {
    Ok(markers(access)
        .await?
        .into_iter()
        .map(|marker| {
            let progress = moves.of(&marker.product);
            MoveProgress {
                done: progress.map_or(0, |(done, _)| done),
                total: progress.map(|(_, total)| total),
                product_id: marker.product,
                from: marker.from,
                to: marker.to,
                since: marker.since,
            }
        })
        .collect())
}

/// Runs the job of every pending move, oldest first, until none is left;
/// returns how many it completed. An error stops it, leaving the markers
/// of the moves not done.
pub(crate) async fn run_pending<S: Store>(
    access: &TableAccess<S>,
    writes: &Writes<S>,
    moves: &Moves,
) -> Result<usize> {
    let mut completed = 0;
    loop {
        let pending = markers(access).await?;
        if pending.is_empty() {
            return Ok(completed);
        }
        for marker in pending {
            let product = &marker.product;
            refamily(access, writes, product, &|done, total| {
                moves.set(product, done, total)
            })
            .await?;
            match access
                .delete(group::move_key(product), Some(group::same_move(&marker)))
                .await
            {
                Ok(()) => completed += 1,
                // A newer move of the product: its marker stays, and the
                // next round runs it.
                Err(StoreError::ConditionalCheckFailed) => {}
                Err(e) => return Err(e.into()),
            }
            moves.forget(product);
        }
    }
}

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
async fn refamily<S: Store>(
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

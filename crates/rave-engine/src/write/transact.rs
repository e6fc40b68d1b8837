//! TransactWriteItems: up to 100 actions on distinct items that all commit
//! or none does. Every action is checked and evaluated against the current
//! state before any is written, so a cancelled transaction leaves the
//! group's transaction untouched; a cancellation gives one reason per
//! action. A stream consumer's commit is a transaction too, one that also
//! moves the consumer's checkpoint and is not bound by DynamoDB's limits.
//!
//! Two actions on one item are found with a set of their keys, not by
//! comparing each action with every other: a consumer's commit carries tens
//! of thousands of actions, and the pairwise comparison grew with their
//! square (a fifth of a catch-up's CPU at 20,000 actions).

use std::collections::HashSet;
use std::sync::Arc;

use rave_store::{
    CancellationReason, ConsumedCapacity, Item, MAX_TRANSACT_ACTIONS, MAX_TRANSACTION_BYTES,
    ReturnValuesOnConditionCheckFailure, StoreError, TransactWriteAction, TransactWriteItemsInput,
    TransactWriteItemsOutput, WriteFailure, item_size, write_units,
};

use super::collections::{self, CollectionChange};
use super::conditions::check_condition;
use super::consumers::{check_checkpoint, write_checkpoint};
use super::item::{Consumption, write_item};
use super::queue::Written;
use super::tx::{Applied, Failure, Tx};
use super::update::{check_update, updated_item};
use crate::catalog::{Catalog, TableState};
use crate::stream::Checkpoint;

/// The item one action is on: its table and stored key.
struct Target {
    table: Arc<TableState>,
    key: Vec<u8>,
}

/// What one action found, and what it would leave.
struct Evaluated {
    old: Option<Item>,
    new: Option<Item>,
    /// A ConditionCheck, which reads and writes nothing.
    is_check: bool,
}

/// Applies `input`, moving `checkpoint` with it if there is one;
/// `on_failure[i]` says what action `i` hands back if its condition fails.
pub(crate) fn transact(
    tx: &mut Tx<'_>,
    input: &TransactWriteItemsInput,
    checkpoint: Option<&Checkpoint>,
    on_failure: &[ReturnValuesOnConditionCheckFailure],
) -> Applied<Written<TransactWriteItemsOutput>> {
    check_count(input.actions.len(), checkpoint.is_some())?;
    let targets = resolve(tx.catalog, &input.actions)?;
    if let Some(checkpoint) = checkpoint {
        check_checkpoint(tx, checkpoint)?;
    }
    // Evaluate every action against the current state; change nothing yet.
    let mut reasons = Vec::with_capacity(targets.len());
    let mut writes = Vec::with_capacity(targets.len());
    for (action, target) in input.actions.iter().zip(&targets) {
        let (reason, write) = evaluate(tx, action, target)?;
        reasons.push(reason);
        writes.push(write);
    }
    if checkpoint.is_none() {
        check_size(&writes)?;
    }
    if reasons.iter().any(|r| *r != CancellationReason::None) {
        return Err(cancelled(reasons, &writes, on_failure));
    }
    check_collections(tx, &targets, &writes)?;
    let consumed = apply(tx, &targets, writes)?;
    if let Some(checkpoint) = checkpoint {
        write_checkpoint(tx, checkpoint)?;
    }
    Ok(Written {
        item_collections: collections::sizes(tx, &written_items(&targets, &input.actions))?,
        output: TransactWriteItemsOutput {
            consumed: consumed
                .0
                .into_iter()
                .map(ConsumedCapacity::transactional)
                .collect(),
        },
    })
}

/// DynamoDB's limit binds TransactWriteItems; a stream consumer's commit
/// (with a checkpoint) is the engine's own and may be larger.
fn check_count(count: usize, with_checkpoint: bool) -> Applied<()> {
    let limit = if with_checkpoint {
        usize::MAX
    } else {
        MAX_TRANSACT_ACTIONS
    };
    if count == 0 || count > limit {
        return Err(Failure::Request(StoreError::validation(format!(
            "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and {MAX_TRANSACT_ACTIONS} (got {count})"
        ))));
    }
    Ok(())
}

/// Checks each action against its table, and that no two are on one item,
/// before anything is read.
fn resolve(catalog: &Catalog, actions: &[TransactWriteAction]) -> Applied<Vec<Target>> {
    let mut resolved = Vec::with_capacity(actions.len());
    // A set, not a scan of `resolved`: a consumer's commit carries
    // thousands of actions, and the scan made checking them quadratic.
    let mut targets: HashSet<(String, Vec<u8>)> = HashSet::with_capacity(actions.len());
    for action in actions {
        let table = catalog.get(action.table())?;
        let key = match action {
            TransactWriteAction::Put { item, .. } => table.validate_item(item)?,
            TransactWriteAction::Update { key, update, .. } => {
                check_update(&table, update)?;
                table.key_bytes(key)?
            }
            TransactWriteAction::Delete { key, .. }
            | TransactWriteAction::ConditionCheck { key, .. } => table.key_bytes(key)?,
        };
        if !targets.insert((table.name().to_owned(), key.clone())) {
            return Err(Failure::Request(StoreError::validation(
                "Transaction request cannot include multiple operations on one item",
            )));
        }
        resolved.push(Target { table, key });
    }
    Ok(resolved)
}

/// Reads `action`'s item and works out whether the action may go ahead
/// (its cancellation reason, `None` if it may) and what it would write.
fn evaluate(
    tx: &mut Tx<'_>,
    action: &TransactWriteAction,
    target: &Target,
) -> Applied<(CancellationReason, Evaluated)> {
    let old = tx.get(&target.table, &target.key)?;
    let (condition, new) = match action {
        TransactWriteAction::Put {
            item, condition, ..
        } => (condition.as_ref(), Ok(Some(item.clone()))),
        TransactWriteAction::Update {
            key,
            update,
            condition,
            ..
        } => (
            condition.as_ref(),
            updated_item(&target.table, key, old.as_ref(), update),
        ),
        TransactWriteAction::Delete { condition, .. } => (condition.as_ref(), Ok(None)),
        TransactWriteAction::ConditionCheck { condition, .. } => (Some(condition), Ok(old.clone())),
    };
    let reason = if check_condition(condition, old.as_ref()).is_err() {
        CancellationReason::ConditionalCheckFailed
    } else {
        match &new {
            Ok(_) => CancellationReason::None,
            // The reason carries the message alone: its code is the
            // variant.
            Err(StoreError::Validation(message)) => {
                CancellationReason::ValidationError(message.clone())
            }
            Err(other) => return Err(Failure::Request(other.clone())),
        }
    };
    let is_check = matches!(action, TransactWriteAction::ConditionCheck { .. });
    Ok((
        reason,
        Evaluated {
            old,
            new: new.ok().flatten(),
            is_check,
        },
    ))
}

/// Refuses a transaction larger than DynamoDB's 4 MB: each action counts
/// the larger of its item before and after.
fn check_size(writes: &[Evaluated]) -> Applied<()> {
    let size = |item: &Option<Item>| item.as_ref().map_or(0, item_size);
    let aggregate: usize = writes
        .iter()
        .map(|write| size(&write.old).max(size(&write.new)))
        .sum();
    if aggregate > MAX_TRANSACTION_BYTES {
        return Err(Failure::Request(StoreError::validation(
            "Transaction request cannot be larger than 4 MB",
        )));
    }
    Ok(())
}

/// The cancellation of a transaction with `reasons`, carrying the items of
/// the failed conditions whose actions asked for them.
fn cancelled(
    reasons: Vec<CancellationReason>,
    writes: &[Evaluated],
    on_failure: &[ReturnValuesOnConditionCheckFailure],
) -> Failure {
    let old_items: Vec<Option<Item>> = reasons
        .iter()
        .zip(writes)
        .enumerate()
        .map(|(action, (reason, write))| {
            let asked =
                on_failure.get(action) == Some(&ReturnValuesOnConditionCheckFailure::AllOld);
            write
                .old
                .clone()
                .filter(|_| asked && *reason == CancellationReason::ConditionalCheckFailed)
        })
        .collect();
    let error = StoreError::TransactionCanceled(reasons);
    if on_failure.is_empty() {
        Failure::Request(error)
    } else {
        Failure::Refused(WriteFailure { error, old_items })
    }
}

/// Cancels the transaction if its writes would grow an item collection
/// past the limit, naming the action that would.
fn check_collections(tx: &mut Tx<'_>, targets: &[Target], writes: &[Evaluated]) -> Applied<()> {
    let changes: Vec<CollectionChange<'_>> = targets
        .iter()
        .zip(writes)
        .map(|(target, write)| {
            if write.is_check {
                (target.table.as_ref(), None, None)
            } else {
                (
                    target.table.as_ref(),
                    write.old.as_ref(),
                    write.new.as_ref(),
                )
            }
        })
        .collect();
    let Some(oversized) = collections::oversized(tx, &changes)? else {
        return Ok(());
    };
    let reasons = (0..targets.len())
        .map(|action| {
            if action == oversized {
                CancellationReason::ItemCollectionSizeLimitExceeded
            } else {
                CancellationReason::None
            }
        })
        .collect();
    Err(Failure::Request(StoreError::TransactionCanceled(reasons)))
}

/// Writes every action's item; a condition check is billed like a write
/// of the item it reads.
fn apply(tx: &mut Tx<'_>, targets: &[Target], writes: Vec<Evaluated>) -> Applied<Consumption> {
    let mut consumed = Consumption::default();
    for (target, write) in targets.iter().zip(writes) {
        if write.is_check {
            let mut units = ConsumedCapacity::new(target.table.name());
            units.write_units = write_units(write.old.as_ref().map_or(0, item_size));
            consumed.add(units);
        } else {
            consumed.add(write_item(
                tx,
                &target.table,
                &target.key,
                write.old.as_ref(),
                write.new.as_ref(),
            )?);
        }
    }
    Ok(consumed)
}

/// The item or key each writing action names, for the item collections
/// the reply reports.
fn written_items<'a>(
    targets: &'a [Target],
    actions: &'a [TransactWriteAction],
) -> Vec<(&'a TableState, &'a Item)> {
    targets
        .iter()
        .zip(actions)
        .filter_map(|(target, action)| match action {
            TransactWriteAction::Put { item, .. } => Some((target.table.as_ref(), item)),
            TransactWriteAction::Update { key, .. } | TransactWriteAction::Delete { key, .. } => {
                Some((target.table.as_ref(), key))
            }
            TransactWriteAction::ConditionCheck { .. } => None,
        })
        .collect()
}

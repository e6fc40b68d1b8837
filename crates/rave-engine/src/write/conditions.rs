//! What every item write checks against the item it finds, before it
//! changes anything: its condition, and what it asked to see back.

use rave_store::{
    Condition, Item, Result, ReturnValues, ReturnValuesOnConditionCheckFailure, StoreError,
    WriteFailure,
};

use super::tx::{Applied, Failure};

/// Whether `condition` holds for the item as found (a missing item is
/// checked as an empty one); no condition always holds.
pub(crate) fn check_condition(condition: Option<&Condition>, old: Option<&Item>) -> Result<()> {
    let Some(condition) = condition else {
        return Ok(());
    };
    let empty = Item::new();
    if condition.evaluate(old.unwrap_or(&empty)) {
        Ok(())
    } else {
        Err(StoreError::ConditionalCheckFailed)
    }
}

/// A single-item write's condition: when it fails, the item it saw goes
/// back with the error if the request asked for it.
pub(crate) fn check_write_condition(
    condition: Option<&Condition>,
    old: Option<&Item>,
    on_failure: ReturnValuesOnConditionCheckFailure,
) -> Applied<()> {
    check_condition(condition, old).map_err(|error| match on_failure {
        ReturnValuesOnConditionCheckFailure::None => Failure::Request(error),
        ReturnValuesOnConditionCheckFailure::AllOld => Failure::Refused(WriteFailure {
            error,
            old_items: vec![old.cloned()],
        }),
    })
}

/// PutItem and DeleteItem hand back at most the old item: DynamoDB refuses
/// any other `ReturnValues` for `operation`.
pub(crate) fn check_returns_old_at_most(
    return_values: ReturnValues,
    operation: &str,
) -> Applied<()> {
    match return_values.at_most_the_old_item() {
        true => Ok(()),
        false => Err(Failure::Request(StoreError::validation(format!(
            "ReturnValues can only be ALL_OLD or NONE for {operation}"
        )))),
    }
}

//! UpdateItem: applies an update expression to the item with a key,
//! creating it when it is missing (unless the update only removes), and
//! the rules an update is checked by, which TransactWriteItems shares.

use rave_store::{
    Item, Result, ReturnValues, ReturnValuesOnConditionCheckFailure, StoreError, Update,
    UpdateItemInput, WriteOutput,
};

use super::collections;
use super::conditions::check_write_condition;
use super::item::write_item;
use super::queue::Written;
use super::tx::{Applied, Tx};
use crate::catalog::TableState;

pub(crate) fn update(
    tx: &mut Tx<'_>,
    input: &UpdateItemInput,
    on_failure: ReturnValuesOnConditionCheckFailure,
) -> Applied<Written<WriteOutput>> {
    let table = tx.catalog.get(&input.table)?;
    let key = table.key_bytes(&input.key)?;
    check_update(&table, &input.update)?;
    let old = tx.get(&table, &key)?;
    check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
    let new = updated_item(&table, &input.key, old.as_ref(), &input.update)?;
    collections::check(tx, &[(&table, old.as_ref(), new.as_ref())])?;
    let consumed = write_item(tx, &table, &key, old.as_ref(), new.as_ref())?;
    let item_collections = collections::sizes(tx, &[(&table, &input.key)])?;
    let attributes = match input.return_values {
        ReturnValues::None => None,
        ReturnValues::AllOld => old,
        ReturnValues::AllNew => new,
        ReturnValues::UpdatedOld => updated_attributes(old.as_ref(), &input.update),
        ReturnValues::UpdatedNew => updated_attributes(new.as_ref(), &input.update),
    };
    Ok(Written {
        output: WriteOutput {
            attributes,
            consumed,
        },
        item_collections,
    })
}

/// Rejects updates DynamoDB rejects before looking at the item.
pub(crate) fn check_update(table: &TableState, update: &Update) -> Result<()> {
    if update.is_empty() {
        // DynamoDB's UpdateItem without an UpdateExpression: it writes the
        // bare key.
        return Ok(());
    }
    update
        .validate()
        .map_err(|e| StoreError::Validation(e.to_string()))?;
    for path in update.paths() {
        if let Some(top) = path.top()
            && table.schema().attributes().any(|a| a.name == top)
        {
            return Err(StoreError::validation(format!(
                "One or more parameter values were invalid: Cannot update attribute {top}. This attribute is part of the key"
            )));
        }
    }
    Ok(())
}

/// The item after `update`. An update of a missing item creates it from its
/// key, unless the update only removes: the API reference (AttributeValueUpdate)
/// says that for a missing item "DELETE - Nothing happens; there is no
/// attribute to delete", and REMOVE and DELETE-from-set on a missing item
/// leave the key alone, so DynamoDB creates no item and no stream record.
/// An update without actions (UpdateItem without an UpdateExpression)
/// writes the bare key: a missing item is created with only its key, an
/// existing one stays as it is.
pub(crate) fn updated_item(
    table: &TableState,
    key: &Item,
    old: Option<&Item>,
    update: &Update,
) -> Result<Option<Item>> {
    let base = old.unwrap_or(key);
    if update.is_empty() {
        return Ok(Some(base.clone()));
    }
    let new = update
        .apply(base)
        .map_err(|e| StoreError::Validation(e.to_string()))?;
    table.validate_item(&new)?;
    if old.is_none() && new == *key {
        return Ok(None);
    }
    Ok(Some(new))
}

/// What UPDATED_OLD and UPDATED_NEW return: the attributes the update
/// wrote, taken from `image` (API reference, UpdateItem: "Returns only the
/// updated attributes"); nothing when none of them is there.
fn updated_attributes(image: Option<&Item>, update: &Update) -> Option<Item> {
    let paths: Vec<rave_store::Path> = update.paths().cloned().collect();
    Some(rave_store::project(image?, &paths)).filter(|item| !item.is_empty())
}

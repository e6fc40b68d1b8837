//! DeleteItem: removes the item with a key, if there is one.

use rave_store::{DeleteItemInput, ReturnValues, ReturnValuesOnConditionCheckFailure, WriteOutput};

use super::collections;
use super::conditions::{check_returns_old_at_most, check_write_condition};
use super::item::write_item;
use super::queue::Written;
use super::tx::{Applied, Tx};

pub(crate) fn delete(
    tx: &mut Tx<'_>,
    input: &DeleteItemInput,
    on_failure: ReturnValuesOnConditionCheckFailure,
) -> Applied<Written<WriteOutput>> {
    let table = tx.catalog.get(&input.table)?;
    check_returns_old_at_most(input.return_values, "DeleteItem")?;
    let key = table.key_bytes(&input.key)?;
    let old = tx.get(&table, &key)?;
    check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
    // A deletion only shrinks its collection: no limit to check.
    let consumed = write_item(tx, &table, &key, old.as_ref(), None)?;
    Ok(Written {
        item_collections: collections::sizes(tx, &[(&table, &input.key)])?,
        output: WriteOutput {
            attributes: old.filter(|_| input.return_values == ReturnValues::AllOld),
            consumed,
        },
    })
}

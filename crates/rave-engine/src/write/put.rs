//! PutItem: writes a whole item, replacing any with its key.

use rave_store::{PutItemInput, ReturnValues, ReturnValuesOnConditionCheckFailure, WriteOutput};

use super::collections;
use super::conditions::{check_returns_old_at_most, check_write_condition};
use super::item::write_item;
use super::queue::Written;
use super::tx::{Applied, Tx};

pub(crate) fn put(
    tx: &mut Tx<'_>,
    input: &PutItemInput,
    on_failure: ReturnValuesOnConditionCheckFailure,
) -> Applied<Written<WriteOutput>> {
    let table = tx.catalog.get(&input.table)?;
    check_returns_old_at_most(input.return_values, "PutItem")?;
    let key = table.validate_item(&input.item)?;
    let old = tx.get(&table, &key)?;
    check_write_condition(input.condition.as_ref(), old.as_ref(), on_failure)?;
    collections::check(tx, &[(&table, old.as_ref(), Some(&input.item))])?;
    let consumed = write_item(tx, &table, &key, old.as_ref(), Some(&input.item))?;
    Ok(Written {
        item_collections: collections::sizes(tx, &[(&table, &input.item)])?,
        output: WriteOutput {
            attributes: old.filter(|_| input.return_values == ReturnValues::AllOld),
            consumed,
        },
    })
}

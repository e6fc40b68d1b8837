//! One item's change with everything kept beside it, in the group's
//! transaction: the item itself, the size of its item collection, its
//! place in the Time to Live queue, its entries in each index and its
//! stream record. Every write of every
//! operation goes through [`write_item`] (or [`expire_item`] for Time to
//! Live), so nothing is kept one way by one operation and another way by
//! another.
//!
//! A change that changes nothing (the new item equals the old) is charged
//! but writes nothing and appends no stream record. Otherwise the new item
//! is encoded once: the same bytes go to its table and, as its new image,
//! into its stream record.

use rave_store::{ConsumedCapacity, Item, add_by_table, item_size, write_units};

use super::change_stream;
use super::collections;
use super::expiries;
use super::indexes::{self, ItemChange};
use super::tx::{Applied, Tx};
use crate::catalog::TableState;
use crate::codec::encode_item;

/// Replaces `old` by `new` (either may be absent): the item, its index
/// entries and a stream record. Returns the write units DynamoDB charges.
pub(crate) fn write_item(
    tx: &mut Tx<'_>,
    table: &TableState,
    key: &[u8],
    old: Option<&Item>,
    new: Option<&Item>,
) -> Applied<ConsumedCapacity> {
    replace_item(tx, table, key, old, new, false)
}

/// Deletes `old` on behalf of Time to Live: its stream record says so.
pub(crate) fn expire_item(
    tx: &mut Tx<'_>,
    table: &TableState,
    key: &[u8],
    old: &Item,
) -> Applied<()> {
    replace_item(tx, table, key, Some(old), None, true).map(|_| ())
}

fn replace_item(
    tx: &mut Tx<'_>,
    table: &TableState,
    key: &[u8],
    old: Option<&Item>,
    new: Option<&Item>,
    removed_by_ttl: bool,
) -> Applied<ConsumedCapacity> {
    let old_size = old.map_or(0, item_size);
    let new_size = new.map_or(0, item_size);
    let mut consumed = ConsumedCapacity::new(table.name());
    consumed.write_units = write_units(old_size.max(new_size));
    if old == new {
        // Nothing changes, so nothing is written and no record is produced.
        return Ok(consumed);
    }
    collections::resize(tx, table, old, new)?;
    expiries::track(tx, table, key, old, new)?;
    // The new item is encoded once, for the table and its stream record
    // (an index entry leaves out its key's strings: `entry`).
    let new_bytes = new.map(encode_item);
    let items = tx.table(&table.items_table)?;
    match &new_bytes {
        Some(bytes) => items.insert(key, bytes.as_slice())?,
        None => items.remove(key)?,
    };
    let change = ItemChange {
        old,
        new,
        old_size,
        new_size,
        new_bytes: new_bytes.as_deref(),
    };
    indexes::update_entries(tx, table, &change, &mut consumed)?;
    if table.definition.stream_enabled {
        change_stream::append_record(tx, table, &change, removed_by_ttl)?;
    }
    Ok(consumed)
}

/// Capacity summed per table, in the order tables were first touched.
#[derive(Default)]
pub(crate) struct Consumption(pub(crate) Vec<ConsumedCapacity>);

impl Consumption {
    pub(crate) fn add(&mut self, units: ConsumedCapacity) {
        add_by_table(&mut self.0, units);
    }
}

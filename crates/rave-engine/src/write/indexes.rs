//! Index entries kept with each write: an item's entry in every index of
//! its table (but those a bulk load deferred, `bulk`) moves, changes or
//! goes with the item, in the same commit, and
//! is charged as DynamoDB charges it (an entry entering or leaving once,
//! moved to another index key twice, rewritten in place once, of the larger
//! of the two; an entry that stays as it is is neither rewritten nor
//! charged).
//!
//! An index that projects some attributes knows their names in order once
//! per table (`IndexState::projected_names`): its entry borrows those
//! attributes from the item and is encoded from them, with no map built.

use rave_store::{ConsumedCapacity, Item, write_units};

use super::tx::{Applied, Tx};
use crate::catalog::{IndexEntry, IndexState, Projected, TableState};

/// One item's change as its index entries see it.
pub(crate) struct ItemChange<'a> {
    pub(crate) old: Option<&'a Item>,
    pub(crate) new: Option<&'a Item>,
    pub(crate) old_size: usize,
    pub(crate) new_size: usize,
    /// `new` as stored, which its stream record holds too.
    pub(crate) new_bytes: Option<&'a [u8]>,
}

/// Brings `table`'s index entries from `change.old` to `change.new` and
/// adds what that costs to `consumed`.
pub(crate) fn update_entries(
    tx: &mut Tx<'_>,
    table: &TableState,
    change: &ItemChange<'_>,
    consumed: &mut ConsumedCapacity,
) -> Applied<()> {
    for index in table.indexes.iter().filter(|index| !index.deferred) {
        let before = change.old.and_then(|item| table.index_entry(index, item));
        let after = change.new.and_then(|item| table.index_entry(index, item));
        let units = entry_write_units(before.as_ref(), after.as_ref(), change);
        let moved = before
            .as_ref()
            .is_some_and(|b| after.as_ref().is_none_or(|a| a.key != b.key));
        if let Some(b) = before.as_ref().filter(|_| moved) {
            tx.entries.remove(&index.redb_table, &b.key);
        }
        if units > 0.0 {
            charge(consumed, index, units);
        }
        if let Some(a) = after
            && units > 0.0
        {
            // A new key has no stored entry; an entry rewritten in place has.
            let fresh = before.is_none() || moved;
            let value = a.stored_value(index);
            tx.entries.put(&index.redb_table, a.key, value, fresh);
        }
    }
    Ok(())
}

/// The write units of an index entry going from `before` to `after`; 0
/// when it stays as it is, and then it is not rewritten.
fn entry_write_units(
    before: Option<&IndexEntry<'_>>,
    after: Option<&IndexEntry<'_>>,
    change: &ItemChange<'_>,
) -> f64 {
    let entry_size = |entry: &IndexEntry<'_>, whole: usize| match entry.projected {
        Projected::Whole(_) => whole,
        Projected::Picked(_) => entry.projected.size(),
    };
    match (before, after) {
        (None, None) => 0.0,
        (Some(b), Some(a)) if b.key == a.key && b.projected == a.projected => 0.0,
        // An entry rewritten in place is charged like an UpdateItem
        // (developer guide, "Item sizes and formats": "the larger of
        // the item sizes before and after the update").
        (Some(b), Some(a)) if b.key == a.key => {
            write_units(entry_size(b, change.old_size).max(entry_size(a, change.new_size)))
        }
        (b, a) => {
            b.map_or(0.0, |e| write_units(entry_size(e, change.old_size)))
                + a.map_or(0.0, |e| write_units(entry_size(e, change.new_size)))
        }
    }
}

/// Adds `units` written to `index` to the request's capacity.
fn charge(consumed: &mut ConsumedCapacity, index: &IndexState, units: f64) {
    consumed.write_units += units;
    let charged = if index.local {
        &mut consumed.local_index_units
    } else {
        &mut consumed.index_units
    };
    charged.insert(index.index.name.clone(), units);
}

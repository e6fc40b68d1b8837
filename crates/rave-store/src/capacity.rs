//! Capacity units as DynamoDB charges them.
//!
//! The embedded engine must report the units DynamoDB would charge for the
//! same request, so that what is measured on it holds on DynamoDB; the
//! rules are therefore DynamoDB's documented ones, applied exactly:
//!
//! * Reads come in 4 KB units, half a unit when eventually consistent. A
//!   Query or Scan sums its items before rounding; GetItem and each key of a
//!   BatchGetItem round alone.
//! * Writes come in 1 KB units of the larger of the old and the new item.
//!   Each index adds the units of its projected entry: once for an entry
//!   entering or leaving, twice when the entry's index key changes, and once,
//!   of the larger of the old and new entry, when only projected attributes
//!   change.
//! * A transaction doubles the table's units but not its indexes'.
//! * A request is charged at least one unit of its kind.
//!
//! The sizes are `value.rs`'s; a number takes one byte per pair of digits
//! aligned on the decimal point, plus one, plus one if negative (zero is one
//! byte, and no number more than 21).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

const READ_UNIT_BYTES: usize = 4 * 1024;
const WRITE_UNIT_BYTES: usize = 1024;

/// Read units for reading `bytes` in one request (Query and Scan sum their
/// items first; GetItem and each BatchGetItem key are charged one by one).
pub fn read_units(bytes: usize, consistent: bool) -> f64 {
    let units = bytes.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent { units } else { units / 2.0 }
}

/// Write units for writing an item of `bytes` (the larger of old and new image).
pub fn write_units(bytes: usize) -> f64 {
    bytes.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// Units one request consumed on one table and its indexes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsumedCapacity {
    pub table: String,
    pub read_units: f64,
    pub write_units: f64,
    /// Units charged to each global secondary index (included in the totals).
    pub index_units: BTreeMap<String, f64>,
    /// Units charged to each local secondary index (included in the totals).
    #[serde(default)]
    pub local_index_units: BTreeMap<String, f64>,
}

impl ConsumedCapacity {
    pub fn new(table: impl Into<String>) -> ConsumedCapacity {
        ConsumedCapacity {
            table: table.into(),
            ..ConsumedCapacity::default()
        }
    }

    pub fn total(&self) -> f64 {
        self.read_units + self.write_units
    }

    /// A write's consumption from a response that reported a single total
    /// (on-demand tables do): for a write, the total is write units.
    pub fn total_as_writes(mut self) -> ConsumedCapacity {
        if self.write_units == 0.0 {
            self.write_units = self.read_units;
            self.read_units = 0.0;
        }
        self
    }

    /// Adds another request's consumption on the same table.
    pub fn absorb(&mut self, other: &ConsumedCapacity) {
        self.read_units += other.read_units;
        self.write_units += other.write_units;
        for (index, units) in &other.index_units {
            *self.index_units.entry(index.clone()).or_default() += units;
        }
        for (index, units) in &other.local_index_units {
            *self.local_index_units.entry(index.clone()).or_default() += units;
        }
    }

    /// The units charged to indexes, global and local.
    pub fn on_indexes(&self) -> f64 {
        self.index_units
            .values()
            .chain(self.local_index_units.values())
            .sum()
    }

    /// The units of the same work done in a transaction. The developer
    /// guide (Capacity management for transactions): DynamoDB "performs two
    /// underlying reads or writes of every item in the transaction: one to
    /// prepare the transaction and one to commit the transaction". That
    /// doubles the table's units; index entries are propagated as for any
    /// write, after the commit, so their units stay as they are.
    pub fn transactional(mut self) -> ConsumedCapacity {
        let index_units = self.on_indexes();
        self.read_units *= 2.0;
        self.write_units = 2.0 * (self.write_units - index_units) + index_units;
        self
    }
}

/// Adds `units` to the entry of its table in `totals`, or appends it: one
/// figure per table, in the order tables were first touched.
pub fn add_by_table(totals: &mut Vec<ConsumedCapacity>, units: ConsumedCapacity) {
    match totals.iter_mut().find(|c| c.table == units.table) {
        Some(total) => total.absorb(&units),
        None => totals.push(units),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_follows_the_documentation() {
        assert_eq!(read_units(0, true), 1.0);
        assert_eq!(read_units(4096, true), 1.0);
        assert_eq!(read_units(4097, true), 2.0);
        assert_eq!(read_units(4097, false), 1.0);
        assert_eq!(read_units(100, false), 0.5);
        assert_eq!(write_units(1), 1.0);
        assert_eq!(write_units(1024), 1.0);
        assert_eq!(write_units(1025), 2.0);
        assert_eq!(write_units(3500), 4.0);
    }

    #[test]
    fn a_transaction_doubles_the_table_units_but_not_the_index_units() {
        let mut units = ConsumedCapacity::new("t");
        units.write_units = 5.0;
        units.index_units.insert("byGroup".into(), 2.0);
        let units = units.transactional();
        // Table: 3 units × 2; the index: 2 units once.
        assert_eq!(units.write_units, 8.0);
        assert_eq!(units.index_units["byGroup"], 2.0);
    }
}

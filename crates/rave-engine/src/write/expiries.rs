//! The expiry queue of a table with Time to Live: `expiries/<table>`, one
//! entry per item whose TTL attribute holds a Number, keyed by that number
//! (in the keys' order-preserving encoding) and then the item's stored key,
//! with the number's text as its value.
//!
//! The sweeper reads the queue from "five years ago" up to now, which is
//! exactly the items that have expired (`ttl::expired_value`), instead of
//! decoding every item of the table every pass: that scan cost a medium
//! store (a million comments) 3.7 s of one core a minute, for the
//! few idempotency records that ever expire, and read a store larger than
//! memory back from the disk.
//!
//! [`track`] keeps the queue in `item::write_item`'s transaction, the one
//! place every write goes through (Time to Live's deletions included), so it
//! commits with the item. Enabling TTL fills it from the table's items
//! ([`fill`], one scan in the enabling commit), disabling drops it; a data
//! directory from before the queue existed has it filled when the engine
//! opens it (`startup`).

use rave_store::{AttributeValue, Item, Number, Result};
use redb::{ReadableTable, WriteTransaction};

use super::tx::{Applied, Tx};
use crate::catalog::TableState;
use crate::codec::decode_item;
use crate::database::storage;
use crate::keys::encode_value;
use crate::layout::bytes_table;

/// The queue's key of the item stored at `item_key` whose TTL value is
/// `value`.
pub(crate) fn queue_key(value: &Number, item_key: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(16 + item_key.len());
    encode_value(&mut key, &AttributeValue::N(*value));
    key.extend_from_slice(item_key);
    key
}

/// Where the queue's keys for TTL values from `value` on begin.
pub(crate) fn queue_bound(value: &Number) -> Vec<u8> {
    queue_key(value, &[])
}

/// `item`'s TTL value, if its TTL attribute holds a Number.
fn ttl_value<'a>(item: Option<&'a Item>, attribute: &str) -> Option<&'a Number> {
    match item?.get(attribute)? {
        AttributeValue::N(value) => Some(value),
        _ => None,
    }
}

/// Moves the item stored at `key` in the queue from `old`'s TTL value to
/// `new`'s (either may have none).
pub(crate) fn track(
    tx: &mut Tx<'_>,
    table: &TableState,
    key: &[u8],
    old: Option<&Item>,
    new: Option<&Item>,
) -> Applied<()> {
    let (Some(queue), Some(attribute)) = (
        &table.expiries_table,
        &table.definition.time_to_live_attribute,
    ) else {
        return Ok(());
    };
    let (before, after) = (ttl_value(old, attribute), ttl_value(new, attribute));
    if before == after {
        return Ok(());
    }
    let entries = tx.table(queue)?;
    if let Some(value) = before {
        entries.remove(queue_key(value, key).as_slice())?;
    }
    if let Some(value) = after {
        let text = value.to_string();
        entries.insert(queue_key(value, key).as_slice(), text.as_bytes())?;
    }
    Ok(())
}

/// Fills `state`'s queue from its items (TTL just enabled, or a store from
/// before the queue): one scan, in `txn`.
pub(crate) fn fill(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    let (Some(queue), Some(attribute)) = (
        &state.expiries_table,
        &state.definition.time_to_live_attribute,
    ) else {
        return Ok(());
    };
    let mut entries = txn.open_table(bytes_table(queue)).map_err(storage)?;
    let items = txn
        .open_table(bytes_table(&state.items_table))
        .map_err(storage)?;
    for entry in items.iter().map_err(storage)? {
        let (key, value) = entry.map_err(storage)?;
        let item = match decode_item(value.value()) {
            Ok(item) => item,
            Err(why) => {
                // As the sweeper did before the queue: not its item to judge.
                let error = state.corrupt_item(key.value(), why);
                tracing::error!(%error, "time to live skipped an item");
                continue;
            }
        };
        if let Some(value) = ttl_value(Some(&item), attribute) {
            let text = value.to_string();
            entries
                .insert(queue_key(value, key.value()).as_slice(), text.as_bytes())
                .map_err(storage)?;
        }
    }
    Ok(())
}

/// Fills the queue of `state` when its table has TTL enabled and the file
/// has no queue for it yet (a store from before the queue existed).
pub(crate) fn fill_if_missing(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    let Some(queue) = &state.expiries_table else {
        return Ok(());
    };
    let exists = txn
        .list_tables()
        .map_err(storage)?
        .any(|table| redb::TableHandle::name(&table) == queue.as_str());
    if exists {
        return Ok(());
    }
    tracing::info!(table = state.name(), "filling the time to live queue");
    fill(txn, state)
}

/// Drops the queue `state` had (TTL disabled, or the table deleted).
pub(crate) fn drop_queue(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    if let Some(queue) = &state.expiries_table {
        txn.delete_table(bytes_table(queue)).map_err(storage)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn number(text: &str) -> Number {
        text.parse().expect("a number")
    }

    proptest! {
        /// The queue's order is the TTL values' order, whatever the item
        /// keys: a range up to "now" holds exactly the values below it.
        #[test]
        fn keys_order_as_their_values(
            a in -1_000_000i64..1_000_000,
            a_fraction in 0u32..1000,
            b in -1_000_000i64..1_000_000,
            key_a in proptest::collection::vec(any::<u8>(), 0..12),
            key_b in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let a = number(&format!("{a}.{a_fraction:03}"));
            let b = Number::from(b);
            let (ka, kb) = (queue_key(&a, &key_a), queue_key(&b, &key_b));
            if a < b {
                prop_assert!(ka < kb);
                prop_assert!(ka < queue_bound(&b));
            }
            if a > b {
                prop_assert!(ka > kb);
                prop_assert!(ka >= queue_bound(&b));
            }
            prop_assert!(ka >= queue_bound(&a));
            // The sweeper takes the value back from its text: the same key.
            let again: Number = a.to_string().parse().expect("a number");
            prop_assert_eq!(queue_key(&again, &key_a), ka);
        }
    }
}

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
//! commits with the item. Enabling TTL on a table that has items fills the
//! queue from them a chunk at a time, between the writer's groups as an
//! index backfill is ([`fill_step`]), so a large table never holds the
//! writer for a whole scan; DescribeTimeToLive says `ENABLING` until the
//! last chunk is in, and a restarted engine goes on from the stored
//! position. Items written meanwhile are queued by [`track`] like any
//! others (a chunk that reaches one later writes the same entry again).
//! Disabling drops the queue; a data directory from before the queue
//! existed has it filled the same way once opened (`startup`).

use std::ops::Bound;
use std::time::Duration;

use rave_store::{AttributeValue, Item, Number, Result};
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};

use super::tx::{Applied, Tx};
use crate::catalog::{Catalog, TableState};
use crate::codec::decode_item;
use crate::database::{SharedDatabase, storage};
use crate::keys::encode_value;
use crate::layout::{EXPIRY_FILLS, bytes_table};

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

/// Items one fill commit reads: a million-item table fills in a few
/// hundred commits, and the requests that queue behind one chunk wait
/// about as long as behind a group of their own (about 2 µs an item).
const FILL_CHUNK: usize = 5_000;

/// Makes `state`'s queue (TTL just enabled, or a store from before the
/// queue) and, when its table already has items, starts filling the queue
/// from them: a record of the fill goes into [`EXPIRY_FILLS`], and the
/// writer fills a chunk at a time between groups ([`fill_step`]). Returns
/// whether a fill started.
pub(crate) fn start(txn: &WriteTransaction, state: &TableState) -> Result<bool> {
    let Some(queue) = &state.expiries_table else {
        return Ok(false);
    };
    txn.open_table(bytes_table(queue)).map_err(storage)?;
    let has_items = !txn
        .open_table(bytes_table(&state.items_table))
        .map_err(storage)?
        .is_empty()
        .map_err(storage)?;
    if has_items {
        txn.open_table(EXPIRY_FILLS)
            .map_err(storage)?
            .insert(state.name(), [].as_slice())
            .map_err(storage)?;
    }
    Ok(has_items)
}

/// Whether `state`'s queue is being filled when the engine opens: a fill
/// a stopped engine left unfinished goes on, and a store from before the
/// queue existed starts one.
pub(crate) fn resume(txn: &WriteTransaction, state: &TableState) -> Result<bool> {
    let Some(queue) = &state.expiries_table else {
        return Ok(false);
    };
    let unfinished = txn
        .open_table(EXPIRY_FILLS)
        .map_err(storage)?
        .get(state.name())
        .map_err(storage)?
        .is_some();
    if unfinished {
        return Ok(true);
    }
    let exists = txn
        .list_tables()
        .map_err(storage)?
        .any(|table| redb::TableHandle::name(&table) == queue.as_str());
    if exists {
        return Ok(false);
    }
    tracing::info!(table = state.name(), "filling the time to live queue");
    start(txn, state)
}

/// Fills one chunk of the queue of a table whose queue is being filled,
/// if there is one; returns whether there was. The table's TTL turns
/// `ENABLED` with the last chunk. A failure is logged and retried on the
/// next call.
pub(crate) fn fill_step(db: &SharedDatabase, catalog: &Catalog) -> bool {
    let Some(table) = catalog.expiries_being_filled() else {
        return false;
    };
    match db.commit_alone(|txn| fill_chunk(txn, &table)) {
        Ok(true) => {
            if let Err(error) = catalog.insert(table.with_expiries_filled()) {
                tracing::error!(%error, "time to live could not finish enabling");
            }
        }
        Ok(false) => {}
        Err(error) => {
            tracing::error!(%error, table = table.name(), "filling the time to live queue failed; retrying");
            // Leave the writer free for requests before trying again.
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    true
}

/// Queues the next chunk of `state`'s items, inside `txn`. Returns whether
/// the fill is complete (its record is then removed).
fn fill_chunk(txn: &WriteTransaction, state: &TableState) -> Result<bool> {
    let (Some(queue), Some(attribute)) = (
        &state.expiries_table,
        &state.definition.time_to_live_attribute,
    ) else {
        return Ok(true);
    };
    let mut fills = txn.open_table(EXPIRY_FILLS).map_err(storage)?;
    let after = match fills.get(state.name()).map_err(storage)? {
        Some(position) => position.value().to_vec(),
        // TTL disabled or moved meanwhile: that change dropped this fill.
        None => return Ok(true),
    };
    let mut entries = txn.open_table(bytes_table(queue)).map_err(storage)?;
    let items = txn
        .open_table(bytes_table(&state.items_table))
        .map_err(storage)?;
    let range = if after.is_empty() {
        items.range::<&[u8]>(..)
    } else {
        items.range::<&[u8]>((Bound::Excluded(after.as_slice()), Bound::Unbounded))
    }
    .map_err(storage)?;
    let mut last = None;
    let mut read = 0;
    for entry in range {
        let (key, value) = entry.map_err(storage)?;
        read += 1;
        match decode_item(value.value()) {
            Ok(item) => {
                if let Some(value) = ttl_value(Some(&item), attribute) {
                    let text = value.to_string();
                    entries
                        .insert(queue_key(value, key.value()).as_slice(), text.as_bytes())
                        .map_err(storage)?;
                }
            }
            Err(why) => {
                // As the sweeper did before the queue: not its item to judge.
                let error = state.corrupt_item(key.value(), why);
                tracing::error!(%error, "time to live skipped an item");
            }
        }
        if read == FILL_CHUNK {
            last = Some(key.value().to_vec());
            break;
        }
    }
    match last {
        Some(position) => {
            fills
                .insert(state.name(), position.as_slice())
                .map_err(storage)?;
            Ok(false)
        }
        None => {
            fills.remove(state.name()).map_err(storage)?;
            Ok(true)
        }
    }
}

/// Drops the queue `state` had (TTL disabled, or the table deleted), and
/// its fill if one was running.
pub(crate) fn drop_queue(txn: &WriteTransaction, state: &TableState) -> Result<()> {
    if let Some(queue) = &state.expiries_table {
        txn.delete_table(bytes_table(queue)).map_err(storage)?;
        txn.open_table(EXPIRY_FILLS)
            .map_err(storage)?
            .remove(state.name())
            .map_err(storage)?;
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

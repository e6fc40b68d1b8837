//! The writer's side of Time to Live: deleting the items the sweeper
//! (`sweeper`) found expired, if they still are.

use super::item::expire_item;
use super::tx::{Applied, Failure, Tx};
use crate::ttl::{Expired, expired_value};

/// Deletes the items that are still as the sweeper found them: the
/// table's TTL attribute unchanged, the item's TTL value the one that
/// expired it, and still expired now. Anything else was written in
/// between, and stays. Returns how many it deleted.
pub(crate) fn expire(
    tx: &mut Tx<'_>,
    table: &str,
    attribute: &str,
    items: &[Expired],
) -> Applied<u64> {
    let table = tx.catalog.get(table)?;
    if table.definition.time_to_live_attribute.as_deref() != Some(attribute) {
        return Ok(0);
    }
    let mut deleted = 0;
    for expired in items {
        let old = match tx.get(&table, &expired.key) {
            Ok(old) => old,
            Err(Failure::Request(error)) => {
                tracing::error!(%error, "time to live skipped an item");
                continue;
            }
            Err(failure) => return Err(failure),
        };
        let Some(old) = old else { continue };
        if expired_value(&old, attribute, tx.now_ms) == Some(expired.value) {
            expire_item(tx, &table, &expired.key, &old)?;
            deleted += 1;
        }
    }
    Ok(deleted)
}

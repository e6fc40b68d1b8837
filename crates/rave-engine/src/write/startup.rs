//! What the engine reads back from the file when it opens, before the
//! writer starts: the tables, the backfills and Time to Live queue fills a
//! stopped engine left unfinished, and the next stream sequence number;
//! what an older store never kept is measured on the way (item collection
//! sizes) or starts filling (the Time to Live queue).

use rave_store::Result;
use redb::{ReadableTable, WriteTransaction};

use super::{collections, expiries};
use crate::catalog::{Catalog, IndexStatus, TableState};
use crate::database::{SharedDatabase, storage};
use crate::layout::definition::decode_definition;
use crate::layout::{CATALOG, CONSUMERS, INDEX_BUILDS, META, next_sequence, split_key};

/// Fills `catalog` from the file and returns the next sequence number.
/// Item collection sizes never kept (a table from before rave kept them)
/// are measured on the way.
pub(crate) fn load(db: &SharedDatabase, catalog: &Catalog) -> Result<u64> {
    let txn = db.begin_write().map_err(storage)?;
    load_tables(&txn, catalog)?;
    txn.open_table(CONSUMERS).map_err(storage)?;
    resume_index_builds(&txn, catalog)?;
    let next = next_sequence(&txn.open_table(META).map_err(storage)?)?;
    db.commit(txn).map_err(storage)?;
    Ok(next)
}

fn load_tables(txn: &WriteTransaction, catalog: &Catalog) -> Result<()> {
    let definitions = txn.open_table(CATALOG).map_err(storage)?;
    for entry in definitions.iter().map_err(storage)? {
        let (name, value) = entry.map_err(storage)?;
        let definition = decode_definition(value.value(), name.value())?;
        let mut state = TableState::new(definition);
        collections::measure(txn, &state)?;
        state.expiries_filling = expiries::resume(txn, &state)?;
        catalog.insert(state)?;
    }
    Ok(())
}

/// Marks the indexes whose backfill a stopped engine left unfinished as
/// CREATING, so that the writer resumes them.
fn resume_index_builds(txn: &WriteTransaction, catalog: &Catalog) -> Result<()> {
    let builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    for entry in builds.iter().map_err(storage)? {
        let (key, _) = entry.map_err(storage)?;
        if let Some((table, index)) = split_key(key.value())
            && let Ok(state) = catalog.get(table)
        {
            catalog.insert(state.with_status(index, IndexStatus::Creating))?;
        }
    }
    Ok(())
}

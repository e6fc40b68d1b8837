//! UpdateTable's index changes: adding a global secondary index to a table
//! that already has items, and deleting one.
//!
//! Adding an index commits it to the catalog at once, with status
//! `CREATING`: from then on every write maintains it like any other index.
//! The items written before are copied in by a backfill
//! (`backfill`) that the writer thread runs between groups of
//! requests. DynamoDB refuses to read an index that is still backfilling,
//! and so does the engine. One index is created at a time per table.

use rave_store::{GlobalSecondaryIndex, Result, StoreError};
use redb::WriteTransaction;

use super::tables::{CatalogUpdate, store_definition};
use crate::catalog::{Catalog, IndexChange, IndexStatus, TableState};
use crate::database::storage;
use crate::layout::{INDEX_BUILDS, build_key, bytes_table};

/// Applies `change` to `table` inside `txn`.
pub(crate) fn update_table(
    txn: &WriteTransaction,
    catalog: &Catalog,
    table: &str,
    change: &IndexChange,
) -> Result<CatalogUpdate> {
    let state = catalog.get(table)?;
    let next = match change {
        IndexChange::Create(index) => create_index(txn, &state, index)?,
        IndexChange::Delete(name) => delete_index(txn, &state, name)?,
    };
    store_definition(txn, &next.definition)?;
    Ok(CatalogUpdate::Set(Box::new(next)))
}

/// A new index starts empty and CREATING, with a backfill record.
fn create_index(
    txn: &WriteTransaction,
    state: &TableState,
    index: &GlobalSecondaryIndex,
) -> Result<TableState> {
    if state
        .indexes
        .iter()
        .any(|i| i.status == IndexStatus::Creating)
    {
        return Err(StoreError::ResourceInUse(format!(
            "Attempt to change a resource which is still in use: Table is being updated: {}",
            state.name()
        )));
    }
    if state.index(&index.name).is_ok() {
        return Err(StoreError::validation(format!(
            "One or more parameter values were invalid: Attempting to create an index which already exists: {}",
            index.name
        )));
    }
    let mut definition = state.definition.clone();
    definition.global_secondary_indexes.push(index.clone());
    definition.validate().map_err(StoreError::Validation)?;
    let next = state.successor(definition, Some(&index.name));
    let created = next.index(&index.name)?;
    txn.open_table(bytes_table(&created.redb_table))
        .map_err(storage)?;
    txn.open_table(INDEX_BUILDS)
        .map_err(storage)?
        .insert(build_key(state.name(), &index.name).as_str(), [].as_slice())
        .map_err(storage)?;
    Ok(next)
}

/// A deleted index loses its entries and any backfill; a local secondary
/// index lives as long as its table.
fn delete_index(txn: &WriteTransaction, state: &TableState, name: &str) -> Result<TableState> {
    let deleted = state
        .indexes
        .iter()
        .find(|i| i.index.name == name && !i.local)
        .ok_or_else(|| {
            StoreError::ResourceNotFound(format!(
                "Requested resource not found: Index: {name} not found on table {}",
                state.name()
            ))
        })?;
    txn.delete_table(bytes_table(&deleted.redb_table))
        .map_err(storage)?;
    txn.open_table(INDEX_BUILDS)
        .map_err(storage)?
        .remove(build_key(state.name(), name).as_str())
        .map_err(storage)?;
    let mut definition = state.definition.clone();
    definition
        .global_secondary_indexes
        .retain(|i| i.name != name);
    Ok(state.successor(definition, None))
}

//! Catalog changes to whole tables: CreateTable, DeleteTable,
//! UpdateTimeToLive and UpdateTable's StreamSpecification (index changes
//! are in `index_changes`).
//!
//! A catalog change commits alone, in a transaction of its own: each step
//! here writes the change inside that transaction and returns what the
//! shared catalog becomes once it has committed ([`CatalogUpdate`]), so
//! readers never see a table the file does not have.

use rave_store::{Result, StoreError, TableDefinition};
use redb::WriteTransaction;

use super::expiries;
use crate::catalog::{Catalog, TableState};
use crate::database::storage;
use crate::layout::definition::encode_definition;
use crate::layout::{
    CATALOG, CONSUMERS, INDEX_BUILDS, build_key, bytes_table, collections_table, consumer_key,
    stream_table,
};
use crate::ttl::{TimeToLiveSpecification, changed_attribute};

/// What the shared catalog becomes once a change has committed.
pub(crate) enum CatalogUpdate {
    /// The table's new state (a new table, or a changed one).
    Set(Box<TableState>),
    /// The table is gone.
    Remove(String),
}

pub(crate) fn create_table(
    txn: &WriteTransaction,
    catalog: &Catalog,
    definition: &TableDefinition,
) -> Result<CatalogUpdate> {
    definition.validate().map_err(StoreError::Validation)?;
    if catalog.get(&definition.name).is_ok() {
        return Err(StoreError::ResourceInUse(format!(
            "Table already exists: {}",
            definition.name
        )));
    }
    let state = TableState::new(definition.clone());
    store_definition(txn, definition)?;
    // Create the redb tables now, so readers never meet a missing one.
    for name in
        std::iter::once(&state.items_table).chain(state.indexes.iter().map(|i| &i.redb_table))
    {
        txn.open_table(bytes_table(name)).map_err(storage)?;
    }
    txn.open_table(stream_table(&state.stream_table))
        .map_err(storage)?;
    if let Some(collections) = &state.collections_table {
        txn.open_table(collections_table(collections))
            .map_err(storage)?;
    }
    // An empty table: its Time to Live queue, if any, is made empty.
    expiries::start(txn, &state)?;
    Ok(CatalogUpdate::Set(Box::new(state)))
}

/// Deletes the table with its items, indexes, stream, consumers and any
/// index backfill.
pub(crate) fn delete_table(
    txn: &WriteTransaction,
    catalog: &Catalog,
    name: &str,
) -> Result<CatalogUpdate> {
    let state = catalog.get(name)?;
    txn.open_table(CATALOG)
        .map_err(storage)?
        .remove(name)
        .map_err(storage)?;
    for table in
        std::iter::once(&state.items_table).chain(state.indexes.iter().map(|i| &i.redb_table))
    {
        txn.delete_table(bytes_table(table)).map_err(storage)?;
    }
    txn.delete_table(stream_table(&state.stream_table))
        .map_err(storage)?;
    if let Some(collections) = &state.collections_table {
        txn.delete_table(collections_table(collections))
            .map_err(storage)?;
    }
    expiries::drop_queue(txn, &state)?;
    let mut consumers = txn.open_table(CONSUMERS).map_err(storage)?;
    let prefix = consumer_key(name, "");
    consumers
        .retain(|k, _| !k.starts_with(&prefix))
        .map_err(storage)?;
    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    let prefix = build_key(name, "");
    builds
        .retain(|k, _| !k.starts_with(&prefix))
        .map_err(storage)?;
    Ok(CatalogUpdate::Remove(name.to_owned()))
}

/// Enables or disables Time to Live under DynamoDB's rules
/// ([`changed_attribute`]).
pub(crate) fn update_time_to_live(
    txn: &WriteTransaction,
    catalog: &Catalog,
    table: &str,
    change: &TimeToLiveSpecification,
) -> Result<CatalogUpdate> {
    let state = catalog.get(table)?;
    let mut definition = state.definition.clone();
    definition.time_to_live_attribute =
        changed_attribute(definition.time_to_live_attribute.as_deref(), change)?;
    store_definition(txn, &definition)?;
    // A change is a disable or an enable: the old queue goes, a new one is
    // filled from the items.
    expiries::drop_queue(txn, &state)?;
    let mut next = state.successor(definition, None);
    next.expiries_filling = expiries::start(txn, &next)?;
    Ok(CatalogUpdate::Set(Box::new(next)))
}

/// Turns the table's change stream on or off; enabling an enabled stream,
/// or disabling one that is off, is refused with DynamoDB's message.
pub(crate) fn update_stream(
    txn: &WriteTransaction,
    catalog: &Catalog,
    table: &str,
    enabled: bool,
) -> Result<CatalogUpdate> {
    let state = catalog.get(table)?;
    match (state.definition.stream_enabled, enabled) {
        (true, true) => {
            return Err(StoreError::validation(format!(
                "Table already has an enabled stream: TableName: {table}"
            )));
        }
        (false, false) => {
            return Err(StoreError::validation(format!(
                "Table has no stream to disable: TableName: {table}"
            )));
        }
        _ => {}
    }
    let mut definition = state.definition.clone();
    definition.stream_enabled = enabled;
    store_definition(txn, &definition)?;
    Ok(CatalogUpdate::Set(Box::new(
        state.successor(definition, None),
    )))
}

/// Writes `definition` as its table's catalog entry.
pub(crate) fn store_definition(txn: &WriteTransaction, definition: &TableDefinition) -> Result<()> {
    txn.open_table(CATALOG)
        .map_err(storage)?
        .insert(
            definition.name.as_str(),
            encode_definition(definition)?.as_slice(),
        )
        .map_err(storage)?;
    Ok(())
}

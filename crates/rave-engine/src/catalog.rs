//! The tables the engine holds, and how a table's items map to stored keys,
//! index entries and redb tables.
//!
//! [`Catalog`] is shared by readers and the writer; each table's
//! [`TableState`] is immutable and replaced whole when the table changes
//! (only the writer changes it, after the change has committed), so a
//! reader holds a consistent table for as long as it needs one.
//!
//! A local secondary index is an `IndexState` like a global one (keyed by
//! the table's partition key, with `local` set), so every write path
//! maintains and charges it alike; only reads differ (strongly consistent
//! reads are allowed, and what it does not project is fetched from the
//! table: `read`). A table with local indexes has item collections, and
//! `TableState::collection_bytes` is what one item adds to its collection.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use rave_store::{
    AttributeValue, GlobalSecondaryIndex, Item, KeyAttribute, KeySchema, MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES, Projection, Result, SORT_KEY_TOO_LONG, StoreError, TableDefinition,
    empty_key_value, item_size, key_value_bytes,
};

use crate::codec::Undecodable;
use crate::entry::encode_entry;
use crate::keys::{describe_stored_key, stored_key};
use crate::layout::{
    collections_table_name, expiries_table_name, index_table_name, items_table_name,
    stream_table_name,
};

/// A change UpdateTable makes to a table's global secondary indexes.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexChange {
    /// Adds the index and backfills it from the table's items.
    Create(GlobalSecondaryIndex),
    /// Deletes the index named.
    Delete(String),
}

/// An index's status, as DescribeTable reports it (`IndexStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexStatus {
    /// Being backfilled: written to, not yet readable.
    Creating,
    Active,
}

/// One global secondary index of a table and its status.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDescription {
    pub index: GlobalSecondaryIndex,
    pub status: IndexStatus,
}

/// A table definition with the names of its redb tables.
#[derive(Debug)]
pub(crate) struct TableState {
    pub(crate) definition: TableDefinition,
    pub(crate) items_table: String,
    pub(crate) indexes: Vec<IndexState>,
    pub(crate) stream_table: String,
    /// Where the sizes of the item collections are kept: only a table with
    /// local secondary indexes has one (DynamoDB limits only its
    /// collections).
    pub(crate) collections_table: Option<String>,
    /// Where the items with a TTL value are queued by it: only a table with
    /// Time to Live enabled has one (`write::expiries`).
    pub(crate) expiries_table: Option<String>,
    /// The queue is still being filled from the items stored before TTL
    /// was enabled (DescribeTimeToLive says `ENABLING`).
    pub(crate) expiries_filling: bool,
}

/// A secondary index of a table. A local one is kept as a global one
/// whose partition key is the table's, and differs only in how it is read:
/// strongly consistent reads, and what it does not project fetched from the
/// table.
#[derive(Debug)]
pub(crate) struct IndexState {
    pub(crate) index: GlobalSecondaryIndex,
    pub(crate) redb_table: String,
    /// The attributes an entry holds, in name order, where the index does
    /// not project all: the table's and the index's keys, and what an
    /// INCLUDE projection names.
    pub(crate) projected_names: Option<Vec<String>>,
    /// The attributes an entry's stored key is made of, in its order: the
    /// index's partition and sort attributes, then the table's (`entry`
    /// takes the strings among them back from the key).
    pub(crate) entry_key: Vec<KeyAttribute>,
    pub(crate) status: IndexStatus,
    pub(crate) local: bool,
    /// A bulk load's writes leave the index alone; it is built from sorted
    /// runs when the load ends (`write::bulk`). Only ever set on an index
    /// that is CREATING, and only in the engine that deferred it: its file
    /// says CREATING, so a restart backfills it as usual.
    pub(crate) deferred: bool,
}

impl IndexState {
    /// Refuses a Query or Scan of an index still backfilling, as DynamoDB
    /// does.
    pub(crate) fn check_readable(&self) -> Result<()> {
        match self.status {
            IndexStatus::Active => Ok(()),
            IndexStatus::Creating => Err(StoreError::validation(format!(
                "Cannot read from backfilling global secondary index: {}",
                self.index.name
            ))),
        }
    }
}

/// One item's entry in one index: where it is stored and what is projected.
/// It borrows from the item: a write copies no attribute into an entry,
/// and encodes an index that projects everything not at all (the table's
/// encoding serves).
#[derive(Debug, PartialEq)]
pub(crate) struct IndexEntry<'a> {
    pub(crate) key: Vec<u8>,
    pub(crate) projected: Projected<'a>,
}

/// What an index entry holds of its item.
#[derive(Debug, PartialEq)]
pub(crate) enum Projected<'a> {
    /// The whole item (an index projecting all).
    Whole(&'a Item),
    /// The attributes of the item the index projects, in name order.
    Picked(Vec<(&'a str, &'a AttributeValue)>),
}

impl Projected<'_> {
    /// Bytes DynamoDB charges for the entry: names plus values.
    pub(crate) fn size(&self) -> usize {
        match self {
            Projected::Whole(item) => item_size(item),
            Projected::Picked(attributes) => attributes
                .iter()
                .map(|(name, value)| name.len() + value.size())
                .sum(),
        }
    }
}

impl IndexEntry<'_> {
    /// The entry's stored value in `index` (`entry`: without the strings
    /// its key holds).
    pub(crate) fn stored_value(&self, index: &IndexState) -> Vec<u8> {
        match &self.projected {
            Projected::Whole(item) => encode_entry(
                item.iter().map(|(name, value)| (name.as_str(), value)),
                &index.entry_key,
            ),
            Projected::Picked(attributes) => {
                encode_entry(attributes.iter().copied(), &index.entry_key)
            }
        }
    }
}

/// [`IndexState::projected_names`] of `index` on a table keyed by `table_keys`.
fn projected_names(table_keys: &KeySchema, index: &GlobalSecondaryIndex) -> Option<Vec<String>> {
    let included: &[String] = match &index.projection {
        Projection::All => return None,
        Projection::KeysOnly => &[],
        Projection::Include(names) => names,
    };
    let names: BTreeSet<&str> = table_keys
        .attributes()
        .chain(index.key_schema.attributes())
        .map(|key| key.name.as_str())
        .chain(included.iter().map(String::as_str))
        .collect();
    Some(names.into_iter().map(str::to_owned).collect())
}

impl TableState {
    pub(crate) fn new(definition: TableDefinition) -> TableState {
        let name = &definition.name;
        TableState {
            items_table: items_table_name(name),
            stream_table: stream_table_name(name),
            collections_table: (!definition.local_secondary_indexes.is_empty())
                .then(|| collections_table_name(name)),
            expiries_table: definition
                .time_to_live_attribute
                .is_some()
                .then(|| expiries_table_name(name)),
            expiries_filling: false,
            indexes: definition
                .global_secondary_indexes
                .iter()
                .map(|index| (index.clone(), false))
                .chain(definition.local_secondary_indexes.iter().map(|local| {
                    let index = GlobalSecondaryIndex {
                        name: local.name.clone(),
                        key_schema: local.key_schema(&definition.key_schema.partition),
                        projection: local.projection.clone(),
                    };
                    (index, true)
                }))
                .map(|(index, local)| IndexState {
                    redb_table: index_table_name(name, &index.name),
                    projected_names: projected_names(&definition.key_schema, &index),
                    entry_key: index
                        .key_schema
                        .partition_attributes()
                        .chain(index.key_schema.sort_attributes())
                        .chain(definition.key_schema.attributes())
                        .cloned()
                        .collect(),
                    index,
                    status: IndexStatus::Active,
                    local,
                    deferred: false,
                })
                .collect(),
            definition,
        }
    }

    /// The state of this table under a changed definition: indexes it
    /// already had keep their status, and so does the filling of its TTL
    /// queue while the TTL attribute stays; `creating` names an index that
    /// starts backfilling.
    pub(crate) fn successor(
        &self,
        definition: TableDefinition,
        creating: Option<&str>,
    ) -> TableState {
        let mut next = TableState::new(definition);
        next.expiries_filling = self.expiries_filling
            && next.definition.time_to_live_attribute == self.definition.time_to_live_attribute;
        for index in &mut next.indexes {
            let name = index.index.name.as_str();
            let before = self.indexes.iter().find(|i| i.index.name == name);
            if let Some(before) = before {
                index.status = before.status;
                index.deferred = before.deferred;
            }
            if creating == Some(name) {
                index.status = IndexStatus::Creating;
            }
        }
        next
    }

    /// The same table with index `name` set to `status`.
    pub(crate) fn with_status(&self, name: &str, status: IndexStatus) -> TableState {
        let mut next = self.successor(self.definition.clone(), None);
        for index in &mut next.indexes {
            if index.index.name == name {
                index.status = status;
            }
        }
        next
    }

    /// The same table with every index emptied for a bulk load: CREATING,
    /// and left alone by writes until it is built (`write::bulk`).
    pub(crate) fn with_indexes_deferred(&self) -> TableState {
        let mut next = self.successor(self.definition.clone(), None);
        for index in &mut next.indexes {
            index.status = IndexStatus::Creating;
            index.deferred = true;
        }
        next
    }

    /// The same table with its deferred indexes built: ACTIVE.
    pub(crate) fn with_deferred_indexes_built(&self) -> TableState {
        let mut next = self.successor(self.definition.clone(), None);
        for index in next.indexes.iter_mut().filter(|index| index.deferred) {
            index.status = IndexStatus::Active;
            index.deferred = false;
        }
        next
    }

    /// The same table with its TTL queue filled.
    pub(crate) fn with_expiries_filled(&self) -> TableState {
        let mut next = self.successor(self.definition.clone(), None);
        next.expiries_filling = false;
        next
    }

    pub(crate) fn name(&self) -> &str {
        &self.definition.name
    }

    pub(crate) fn schema(&self) -> &KeySchema {
        &self.definition.key_schema
    }

    /// The error for an item whose stored bytes do not decode, naming the
    /// item by its key.
    pub(crate) fn corrupt_item(&self, stored_key: &[u8], why: Undecodable) -> StoreError {
        StoreError::corrupt(
            format!(
                "item {{{}}} of table {}",
                describe_stored_key(stored_key, self.schema().attributes()),
                self.name()
            ),
            why.to_string(),
        )
    }

    /// The error for an index entry whose stored bytes do not decode.
    pub(crate) fn corrupt_index_entry(&self, index: &IndexState, why: Undecodable) -> StoreError {
        StoreError::corrupt(
            format!(
                "an entry of index {} of table {}",
                index.index.name,
                self.name()
            ),
            why.to_string(),
        )
    }

    /// The error for a stream record whose stored bytes do not decode.
    pub(crate) fn corrupt_record(&self, sequence: u64, why: Undecodable) -> StoreError {
        StoreError::corrupt(
            format!("stream record {sequence} of table {}", self.name()),
            why.to_string(),
        )
    }

    pub(crate) fn index(&self, name: &str) -> Result<&IndexState> {
        self.indexes
            .iter()
            .find(|i| i.index.name == name)
            .ok_or_else(|| {
                StoreError::validation(format!(
                    "The table does not have the specified index: {name}"
                ))
            })
    }

    /// Checks that `key` holds exactly the table's key attributes, with the
    /// declared types and sizes, and returns its stored key.
    pub(crate) fn key_bytes(&self, key: &Item) -> Result<Vec<u8>> {
        let schema = self.schema();
        if key.len() != schema.attributes().count() {
            return Err(StoreError::validation(
                "The provided key element does not match the schema",
            ));
        }
        let partition = key_value(key, &schema.partition, MAX_PARTITION_KEY_BYTES, true)?;
        let sort = match &schema.sort {
            Some(attr) => Some(key_value(key, attr, MAX_SORT_KEY_BYTES, true)?),
            None => None,
        };
        Ok(stored_key(&[partition], sort))
    }

    /// Checks a whole item against the table (keys, index keys, value rules,
    /// size) and returns its stored key.
    pub(crate) fn validate_item(&self, item: &Item) -> Result<Vec<u8>> {
        let schema = self.schema();
        let partition = key_value(item, &schema.partition, MAX_PARTITION_KEY_BYTES, false)?;
        let sort = match &schema.sort {
            Some(attr) => Some(key_value(item, attr, MAX_SORT_KEY_BYTES, false)?),
            None => None,
        };
        // DynamoDB reports the first index by name whose key does not fit.
        let mut indexes: Vec<&IndexState> = self.indexes.iter().collect();
        indexes.sort_by(|a, b| a.index.name.cmp(&b.index.name));
        for index in indexes {
            for (attr, limit) in index_key_limits(&index.index.key_schema) {
                if let Some(value) = item.get(&attr.name) {
                    check_key_value(value, attr, limit, Some(&index.index.name))?;
                }
            }
        }
        rave_store::validate_attributes(item).map_err(StoreError::Validation)?;
        if item_size(item) > rave_store::MAX_ITEM_SIZE {
            return Err(StoreError::validation(
                "Item size has exceeded the maximum allowed size",
            ));
        }
        Ok(stored_key(&[partition], sort))
    }

    /// The entry `item` has in `index`, or `None` when it lacks one of the
    /// index's key attributes (sparse index).
    pub(crate) fn index_entry<'a>(
        &self,
        index: &IndexState,
        item: &'a Item,
    ) -> Option<IndexEntry<'a>> {
        let index_schema = &index.index.key_schema;
        let partition = index_schema
            .partition_attributes()
            .map(|a| item.get(&a.name))
            .collect::<Option<Vec<_>>>()?;
        let index_sort = index_schema
            .sort_attributes()
            .map(|a| item.get(&a.name))
            .collect::<Option<Vec<_>>>()?;
        let table_schema = self.schema();
        let table_partition = item.get(&table_schema.partition.name)?;
        let table_sort = table_schema.sort.as_ref().and_then(|a| item.get(&a.name));
        let key = stored_key(
            &partition,
            index_sort
                .into_iter()
                .chain(Some(table_partition))
                .chain(table_sort),
        );
        let projected = match &index.projected_names {
            None => Projected::Whole(item),
            Some(names) => Projected::Picked(
                names
                    .iter()
                    .filter_map(|name| item.get_key_value(name))
                    .map(|(name, value)| (name.as_str(), value))
                    .collect(),
            ),
        };
        Some(IndexEntry { key, projected })
    }

    /// What `item` adds to its item collection: its own size and the size
    /// of its entry in each local secondary index. The API reference
    /// (ItemCollectionMetrics): "the size of all the items in the table,
    /// plus the size of all attributes projected into all of the local
    /// secondary indexes".
    pub(crate) fn collection_bytes(&self, item: &Item) -> u64 {
        let entries: usize = self
            .indexes
            .iter()
            .filter(|index| index.local)
            .filter_map(|index| self.index_entry(index, item))
            .map(|entry| entry.projected.size())
            .sum();
        (item_size(item) + entries) as u64
    }

    /// Whether `index` holds `attribute` of the items it has: a key of the
    /// table or of the index, or an attribute its projection names.
    pub(crate) fn projects(&self, index: &IndexState, attribute: &str) -> bool {
        let is_key = |schema: &KeySchema| schema.attributes().any(|a| a.name == attribute);
        is_key(self.schema())
            || is_key(&index.index.key_schema)
            || match &index.index.projection {
                Projection::All => true,
                Projection::KeysOnly => false,
                Projection::Include(names) => names.iter().any(|n| n == attribute),
            }
    }

    /// The table's and the index's key attributes of `item`: what an index
    /// page's LastEvaluatedKey holds.
    pub(crate) fn keys_for_index(&self, index: &IndexState, item: &Item) -> Item {
        let mut keys = self.schema().key_of(item);
        keys.extend(index.index.key_schema.key_of(item));
        keys
    }

    /// The stored key a Query or Scan resumes after, from an ExclusiveStartKey:
    /// it must hold exactly the key attributes of the table (and of the
    /// index read), as DynamoDB requires.
    pub(crate) fn start_key_bytes(
        &self,
        index: Option<&IndexState>,
        start: &Item,
    ) -> Result<Vec<u8>> {
        let invalid = || {
            StoreError::validation(
                "The provided starting key is invalid: The provided key element does not match the schema",
            )
        };
        let table_schema = self.schema();
        match index {
            None => {
                if start.len() != table_schema.attributes().count() {
                    return Err(StoreError::validation(
                        "The provided starting key is invalid: Exclusive Start Key must have same size as table's key schema",
                    ));
                }
                self.key_bytes(start).map_err(|_| invalid())
            }
            Some(index) => {
                let expected: Vec<&KeyAttribute> = index
                    .index
                    .key_schema
                    .attributes()
                    .chain(table_schema.attributes())
                    .collect();
                let mut names: Vec<&str> = expected.iter().map(|a| a.name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                if start.len() != names.len() {
                    return Err(invalid());
                }
                let mut values = Vec::with_capacity(expected.len());
                for attr in &expected {
                    let value = start.get(&attr.name).ok_or_else(invalid)?;
                    if !attr.key_type.matches(value) {
                        return Err(invalid());
                    }
                    // An attribute may be a key of both the index and the table.
                    values.push(value);
                }
                let partition_len = index.index.key_schema.partition_attributes().count();
                let (partition, rest) = values.split_at(partition_len);
                Ok(stored_key(partition, rest.iter().copied()))
            }
        }
    }
}

fn index_key_limits(schema: &KeySchema) -> impl Iterator<Item = (&KeyAttribute, usize)> {
    schema
        .partition_attributes()
        .map(|a| (a, MAX_PARTITION_KEY_BYTES))
        .chain(schema.sort_attributes().map(|a| (a, MAX_SORT_KEY_BYTES)))
}

fn key_value<'a>(
    item: &'a Item,
    attr: &KeyAttribute,
    limit: usize,
    in_key: bool,
) -> Result<&'a AttributeValue> {
    let value = item.get(&attr.name).ok_or_else(|| {
        StoreError::validation(if in_key {
            "The provided key element does not match the schema".to_string()
        } else {
            format!(
                "One or more parameter values were invalid: Missing the key {} in the item",
                attr.name
            )
        })
    })?;
    // A key looked up (not an item's) of another type does not match the
    // schema; an item's names the key and both types.
    if in_key && !attr.key_type.matches(value) {
        return Err(StoreError::validation(
            "The provided key element does not match the schema",
        ));
    }
    check_key_value(value, attr, limit, None)?;
    Ok(value)
}

/// `index` names the secondary index whose key `attr` is, if it is not
/// the table's.
fn check_key_value(
    value: &AttributeValue,
    attr: &KeyAttribute,
    limit: usize,
    index: Option<&str>,
) -> Result<()> {
    if !attr.key_type.matches(value) {
        return Err(StoreError::validation(match index {
            Some(index) => format!(
                "One or more parameter values were invalid: Type mismatch for Index Key {} Expected: {} Actual: {} IndexName: {index}",
                attr.name,
                attr.key_type.attribute_type().as_str(),
                value.attribute_type().as_str()
            ),
            None => format!(
                "One or more parameter values were invalid: Type mismatch for key {} expected: {} actual: {}",
                attr.name,
                attr.key_type.attribute_type().as_str(),
                value.attribute_type().as_str()
            ),
        }));
    }
    if let Some(refusal) = empty_key_value(value, &attr.name, index) {
        return Err(StoreError::validation(refusal));
    }
    let Some(len) = key_value_bytes(value) else {
        return Ok(());
    };
    if len > limit {
        return Err(StoreError::validation(
            if limit == MAX_PARTITION_KEY_BYTES {
                // DynamoDB's words, its missing space included.
                format!(
                    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of{limit} bytes"
                )
            } else {
                SORT_KEY_TOO_LONG.to_owned()
            },
        ));
    }
    Ok(())
}

/// The tables, shared by readers and the writer; replaced wholesale on
/// CreateTable/DeleteTable so readers only ever clone an `Arc`.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    tables: RwLock<HashMap<String, Arc<TableState>>>,
}

impl Catalog {
    pub(crate) fn get(&self, name: &str) -> Result<Arc<TableState>> {
        self.tables
            .read()
            .map_err(|_| StoreError::Internal("catalog lock poisoned".into()))?
            .get(name)
            .cloned()
            .ok_or_else(|| {
                StoreError::ResourceNotFound(format!(
                    "Requested resource not found: Table: {name} not found"
                ))
            })
    }

    pub(crate) fn insert(&self, state: TableState) -> Result<()> {
        self.tables
            .write()
            .map_err(|_| StoreError::Internal("catalog lock poisoned".into()))?
            .insert(state.name().to_owned(), Arc::new(state));
        Ok(())
    }

    pub(crate) fn remove(&self, name: &str) -> Result<()> {
        self.tables
            .write()
            .map_err(|_| StoreError::Internal("catalog lock poisoned".into()))?
            .remove(name);
        Ok(())
    }

    /// A table with an index being backfilled (created, not deferred for
    /// a bulk load), and that index's position in its `indexes`.
    pub(crate) fn index_being_created(&self) -> Option<(Arc<TableState>, usize)> {
        let tables = self.tables.read().ok()?;
        tables.values().find_map(|table| {
            let position = table
                .indexes
                .iter()
                .position(|i| i.status == IndexStatus::Creating && !i.deferred)?;
            Some((table.clone(), position))
        })
    }

    /// A table whose TTL queue is being filled, if any.
    pub(crate) fn expiries_being_filled(&self) -> Option<Arc<TableState>> {
        let tables = self.tables.read().ok()?;
        tables
            .values()
            .find(|table| table.expiries_filling)
            .cloned()
    }

    pub(crate) fn names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .tables
            .read()
            .map_err(|_| StoreError::Internal("catalog lock poisoned".into()))?
            .keys()
            .cloned()
            .collect();
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rave_conformance::table_definition;
    use rave_store::{AttributeValue, item};

    use super::*;
    use crate::entry::decode_entry;

    /// What an entry of `index` holds of `item`, built as a map: every
    /// attribute the item has that is a key of the table or of the index,
    /// or that the projection names.
    fn projected_map(table: &TableState, index: &IndexState, item: &Item) -> Item {
        let mut map = table.keys_for_index(index, item);
        match &index.index.projection {
            Projection::All => return item.clone(),
            Projection::KeysOnly => {}
            Projection::Include(names) => {
                for name in names {
                    if let Some(value) = item.get(name) {
                        map.insert(name.clone(), value.clone());
                    }
                }
            }
        }
        map
    }

    proptest! {
        /// Each index's entry, borrowed from the item, reads back and is
        /// charged as the map of its attributes would be.
        #[test]
        fn an_entry_reads_back_and_sizes_as_the_map_of_what_it_projects(
            group in proptest::option::of("[a-c]{1,3}"),
            kind in proptest::option::of("[a-c]{1,3}"),
            score in proptest::option::of(any::<i32>()),
            tag in proptest::option::of(proptest::collection::vec(any::<u8>(), 1..4)),
            note in proptest::option::of(".{0,8}"),
            other in proptest::option::of(".{0,8}"),
        ) {
            let table = TableState::new(table_definition("things"));
            let mut item = item! {"PK" => "p", "SK" => "s", "AT" => "t"};
            let attributes = [
                ("GROUP", group.map(AttributeValue::S)),
                ("KIND", kind.map(AttributeValue::S)),
                ("SCORE", score.map(|n| AttributeValue::N(i64::from(n).into()))),
                ("TAG", tag.map(AttributeValue::B)),
                ("note", note.map(AttributeValue::S)),
                ("other", other.map(AttributeValue::S)),
            ];
            for (name, value) in attributes {
                if let Some(value) = value {
                    item.insert(name.into(), value);
                }
            }
            for index in &table.indexes {
                let Some(entry) = table.index_entry(index, &item) else {
                    continue;
                };
                let expected = projected_map(&table, index, &item);
                // Stored without its key strings, read back whole.
                let value = entry.stored_value(index);
                prop_assert_eq!(
                    decode_entry(&entry.key, &value, &index.entry_key).expect("decodes"),
                    expected.clone()
                );
                prop_assert_eq!(entry.projected.size(), item_size(&expected));
            }
        }
    }
}

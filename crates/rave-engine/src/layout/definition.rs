//! The stored form of a table definition (a `catalog` entry) and its
//! migrations.
//!
//! Table definitions are rare and small, so serde and postcard keep them
//! simple. postcard is not self-describing, though: a field added since an
//! entry was written cannot default on its own. Each shape the entry has
//! had is therefore kept here as a type of its own, and an old entry is
//! decoded as the newest shape it fits and upgraded step by step:
//!
//! 1. [`DefinitionBeforeTtl`]: before Time to Live;
//! 2. [`DefinitionBeforeLocalIndexes`]: before local secondary indexes;
//! 3. [`DefinitionBeforeMultiAttributeKeys`]: before keys of several
//!    attributes;
//! 4. today's `TableDefinition`, written after a leading
//!    [`DEFINITION_WITH_MULTI_ATTRIBUTE_KEYS`] byte.
//!
//! The leading byte is `0`, which no older entry can start with: an older
//! entry starts with its table name's length, 3 to 255. An entry without it
//! is read through the layouts of its time.
//!
//! A new field means a new shape here: the previous one keeps its fields
//! and gains an `upgrade`.

use rave_store::{Result, StoreError, TableDefinition};
#[cfg(test)]
use serde::Serialize;

/// A catalog entry written since global secondary indexes could have keys
/// of several attributes starts with this byte: an older entry starts with
/// its table's name, whose length (3 to 255 bytes, as a postcard varint)
/// never encodes as 0.
const DEFINITION_WITH_MULTI_ATTRIBUTE_KEYS: u8 = 0;

/// The catalog entry of `definition`.
pub(crate) fn encode_definition(definition: &TableDefinition) -> Result<Vec<u8>> {
    postcard::to_extend(definition, vec![DEFINITION_WITH_MULTI_ATTRIBUTE_KEYS])
        .map_err(|e| StoreError::Internal(format!("encoding: {e}")))
}

/// A stored table definition. postcard is not self-describing, so a field
/// added since an entry was written cannot default on its own: an entry
/// without the leading [`DEFINITION_WITH_MULTI_ATTRIBUTE_KEYS`] was written
/// before keys of several attributes; of those, one that ends where
/// [`DefinitionBeforeLocalIndexes`] ends was written before local secondary
/// indexes existed, one that ends where [`DefinitionBeforeTtl`] ends before
/// Time to Live existed.
pub(crate) fn decode_definition(bytes: &[u8], table: &str) -> Result<TableDefinition> {
    use postcard::Error::DeserializeUnexpectedEnd as Ends;
    let corrupt = |e: postcard::Error| {
        StoreError::corrupt(format!("the catalog entry of table {table}"), e.to_string())
    };
    if let Some((&DEFINITION_WITH_MULTI_ATTRIBUTE_KEYS, current)) = bytes.split_first() {
        return postcard::from_bytes(current).map_err(corrupt);
    }
    match postcard::from_bytes::<DefinitionBeforeMultiAttributeKeys>(bytes) {
        Ok(definition) => Ok(definition.upgrade()),
        Err(Ends) => match postcard::from_bytes::<DefinitionBeforeLocalIndexes>(bytes) {
            Ok(definition) => Ok(definition.upgrade().upgrade()),
            Err(Ends) => postcard::from_bytes(bytes)
                .map(|definition: DefinitionBeforeTtl| definition.upgrade().upgrade().upgrade())
                .map_err(corrupt),
            Err(e) => Err(corrupt(e)),
        },
        Err(e) => Err(corrupt(e)),
    }
}

/// A key schema as written before keys of several attributes.
#[derive(serde::Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct KeySchemaBeforeMultiAttributeKeys {
    partition: rave_store::KeyAttribute,
    sort: Option<rave_store::KeyAttribute>,
}

impl KeySchemaBeforeMultiAttributeKeys {
    fn upgrade(self) -> rave_store::KeySchema {
        rave_store::KeySchema::new(self.partition, self.sort)
    }
}

/// A global secondary index as written before keys of several attributes.
#[derive(serde::Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct IndexBeforeMultiAttributeKeys {
    name: String,
    key_schema: KeySchemaBeforeMultiAttributeKeys,
    projection: rave_store::Projection,
}

impl IndexBeforeMultiAttributeKeys {
    fn upgrade(self) -> rave_store::GlobalSecondaryIndex {
        rave_store::GlobalSecondaryIndex {
            name: self.name,
            key_schema: self.key_schema.upgrade(),
            projection: self.projection,
        }
    }
}

/// The catalog entry as written before keys of several attributes:
/// `TableDefinition` with the key schemas of the time.
#[derive(serde::Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct DefinitionBeforeMultiAttributeKeys {
    name: String,
    key_schema: KeySchemaBeforeMultiAttributeKeys,
    global_secondary_indexes: Vec<IndexBeforeMultiAttributeKeys>,
    stream_enabled: bool,
    time_to_live_attribute: Option<String>,
    local_secondary_indexes: Vec<rave_store::LocalSecondaryIndex>,
}

impl DefinitionBeforeMultiAttributeKeys {
    fn upgrade(self) -> TableDefinition {
        TableDefinition {
            name: self.name,
            key_schema: self.key_schema.upgrade(),
            global_secondary_indexes: self
                .global_secondary_indexes
                .into_iter()
                .map(IndexBeforeMultiAttributeKeys::upgrade)
                .collect(),
            stream_enabled: self.stream_enabled,
            time_to_live_attribute: self.time_to_live_attribute,
            local_secondary_indexes: self.local_secondary_indexes,
        }
    }
}

/// The catalog entry as written before local secondary indexes: without
/// the last field of [`DefinitionBeforeMultiAttributeKeys`].
#[derive(serde::Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct DefinitionBeforeLocalIndexes {
    name: String,
    key_schema: KeySchemaBeforeMultiAttributeKeys,
    global_secondary_indexes: Vec<IndexBeforeMultiAttributeKeys>,
    stream_enabled: bool,
    time_to_live_attribute: Option<String>,
}

impl DefinitionBeforeLocalIndexes {
    fn upgrade(self) -> DefinitionBeforeMultiAttributeKeys {
        DefinitionBeforeMultiAttributeKeys {
            name: self.name,
            key_schema: self.key_schema,
            global_secondary_indexes: self.global_secondary_indexes,
            stream_enabled: self.stream_enabled,
            time_to_live_attribute: self.time_to_live_attribute,
            local_secondary_indexes: Vec::new(),
        }
    }
}

/// The catalog entry as written before Time to Live: without the last two
/// fields of [`DefinitionBeforeMultiAttributeKeys`].
#[derive(serde::Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct DefinitionBeforeTtl {
    name: String,
    key_schema: KeySchemaBeforeMultiAttributeKeys,
    global_secondary_indexes: Vec<IndexBeforeMultiAttributeKeys>,
    stream_enabled: bool,
}

impl DefinitionBeforeTtl {
    fn upgrade(self) -> DefinitionBeforeLocalIndexes {
        DefinitionBeforeLocalIndexes {
            name: self.name,
            key_schema: self.key_schema,
            global_secondary_indexes: self.global_secondary_indexes,
            stream_enabled: self.stream_enabled,
            time_to_live_attribute: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use rave_conformance::table_definition;

    use super::*;

    #[test]
    fn catalog_entries_from_before_time_to_live_still_load() {
        let current = table_definition("things");
        let old_keys = |schema: &rave_store::KeySchema| KeySchemaBeforeMultiAttributeKeys {
            partition: schema.partition.clone(),
            sort: schema.sort.clone(),
        };
        let old_indexes = |definition: &TableDefinition| {
            definition
                .global_secondary_indexes
                .iter()
                .map(|index| IndexBeforeMultiAttributeKeys {
                    name: index.name.clone(),
                    key_schema: old_keys(&index.key_schema),
                    projection: index.projection.clone(),
                })
                .collect::<Vec<_>>()
        };
        let legacy = DefinitionBeforeTtl {
            name: current.name.clone(),
            key_schema: old_keys(&current.key_schema),
            global_secondary_indexes: old_indexes(&current),
            stream_enabled: current.stream_enabled,
        };
        let bytes = postcard::to_allocvec(&legacy).expect("encodes");
        assert_eq!(decode_definition(&bytes, "things"), Ok(current.clone()));

        let with_ttl = TableDefinition {
            time_to_live_attribute: Some("expires".into()),
            ..current.clone()
        };
        let before_local_indexes = DefinitionBeforeLocalIndexes {
            name: current.name.clone(),
            key_schema: old_keys(&current.key_schema),
            global_secondary_indexes: old_indexes(&current),
            stream_enabled: current.stream_enabled,
            time_to_live_attribute: Some("expires".into()),
        };
        let bytes = postcard::to_allocvec(&before_local_indexes).expect("encodes");
        assert_eq!(decode_definition(&bytes, "things"), Ok(with_ttl.clone()));
        let with_local_index = TableDefinition {
            local_secondary_indexes: vec![rave_store::LocalSecondaryIndex {
                name: "byDate".into(),
                sort_key: rave_store::KeyAttribute::new("date", rave_store::KeyType::N),
                projection: rave_store::Projection::KeysOnly,
            }],
            ..with_ttl
        };
        let before_multi_attribute_keys = DefinitionBeforeMultiAttributeKeys {
            name: current.name.clone(),
            key_schema: old_keys(&current.key_schema),
            global_secondary_indexes: old_indexes(&current),
            stream_enabled: current.stream_enabled,
            time_to_live_attribute: Some("expires".into()),
            local_secondary_indexes: with_local_index.local_secondary_indexes.clone(),
        };
        let bytes = postcard::to_allocvec(&before_multi_attribute_keys).expect("encodes");
        assert_eq!(
            decode_definition(&bytes, "things"),
            Ok(with_local_index.clone())
        );

        let attribute = |name: &str| rave_store::KeyAttribute::new(name, rave_store::KeyType::S);
        let mut with_multi_attribute_key = with_local_index;
        with_multi_attribute_key
            .global_secondary_indexes
            .push(rave_store::GlobalSecondaryIndex {
                name: "byPlace".into(),
                key_schema: rave_store::KeySchema::of(
                    vec![attribute("country"), attribute("city")],
                    vec![attribute("street"), attribute("number")],
                )
                .expect("a partition attribute"),
                projection: rave_store::Projection::All,
            });
        let bytes = encode_definition(&with_multi_attribute_key).expect("encodes");
        assert_eq!(
            decode_definition(&bytes, "things"),
            Ok(with_multi_attribute_key)
        );
        for truncated in [&bytes[..3], &bytes[1..4]] {
            assert!(matches!(
                decode_definition(truncated, "things"),
                Err(StoreError::Corrupt { .. })
            ));
        }
    }
}

//! Table and index definitions: key schemas, key types, projections.
//!
//! A `TableDefinition` is everything needed to create a table: its key
//! schema, its global secondary indexes, its local secondary indexes (a sort
//! key and a projection; the partition key is the table's, and the set is
//! fixed at creation), whether it records a change stream, and its Time to
//! Live attribute. The limits DynamoDB puts on key values (a sort key of at
//! most 1,024 bytes) and its refusals for them live here too, so item writes
//! and key conditions refuse a key with the same words.
//!
//! `TableDefinition::index_drift` compares the indexes a table has with the
//! ones a definition wants. A table made by an older layout may lack an index
//! or have one with other keys or projection, and DynamoDB cannot change
//! either in place (an INCLUDE list included): the owner of the layout
//! creates what is missing and deletes and creates again what changed, one
//! index at a time, on either backend.

use serde::{Deserialize, Serialize};

use crate::value::{AttributeType, AttributeValue, Item};

/// Largest partition-key value DynamoDB accepts, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort-key value DynamoDB accepts, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// DynamoDB's refusal of a sort-key value longer than
/// [`MAX_SORT_KEY_BYTES`], in an item, a key or a Query's key condition.
pub const SORT_KEY_TOO_LONG: &str = "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes";

/// The bytes a string or binary key value takes, which DynamoDB limits;
/// `None` for a number, which it limits by its digits instead.
pub fn key_value_bytes(value: &AttributeValue) -> Option<usize> {
    match value {
        AttributeValue::S(s) => Some(s.len()),
        AttributeValue::B(b) => Some(b.len()),
        _ => None,
    }
}

/// DynamoDB's refusal of `value` for key attribute `attribute` of secondary
/// index `index` (of the table, without one), when it is an empty string or
/// binary; `None` for any other value.
pub fn empty_key_value(
    value: &AttributeValue,
    attribute: &str,
    index: Option<&str>,
) -> Option<String> {
    let kind = match value {
        AttributeValue::S(s) if s.is_empty() => "string",
        AttributeValue::B(b) if b.is_empty() => "binary",
        _ => return None,
    };
    Some(match index {
        Some(index) => format!(
            "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty {kind} value. IndexName: {index}, IndexKey: {attribute}"
        ),
        None => format!(
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty {kind} value. Key: {attribute}"
        ),
    })
}

/// The three types a key attribute may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyType {
    S,
    N,
    B,
}

impl KeyType {
    pub fn matches(&self, value: &AttributeValue) -> bool {
        matches!(
            (self, value),
            (KeyType::S, AttributeValue::S(_))
                | (KeyType::N, AttributeValue::N(_))
                | (KeyType::B, AttributeValue::B(_))
        )
    }

    pub fn attribute_type(&self) -> AttributeType {
        match self {
            KeyType::S => AttributeType::S,
            KeyType::N => AttributeType::N,
            KeyType::B => AttributeType::B,
        }
    }
}

/// One key attribute: its name and declared type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyAttribute {
    pub name: String,
    pub key_type: KeyType,
}

impl KeyAttribute {
    pub fn new(name: impl Into<String>, key_type: KeyType) -> KeyAttribute {
        KeyAttribute {
            name: name.into(),
            key_type,
        }
    }
}

/// A partition key and an optional sort key. A global secondary index's
/// key may have up to [`MAX_INDEX_KEY_ATTRIBUTES`] partition (HASH) and as
/// many sort (RANGE) attributes: `partition` and `sort` are the first of
/// each, the others follow in `more_partition` and `more_sort`, in the
/// order the key sorts by. Tables and local indexes have one of each at
/// most.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeySchema {
    pub partition: KeyAttribute,
    pub sort: Option<KeyAttribute>,
    pub more_partition: Vec<KeyAttribute>,
    pub more_sort: Vec<KeyAttribute>,
}

/// Most partition (HASH) attributes, and most sort (RANGE) attributes, a
/// global secondary index's key has.
pub const MAX_INDEX_KEY_ATTRIBUTES: usize = 4;

impl KeySchema {
    pub fn new(partition: KeyAttribute, sort: Option<KeyAttribute>) -> KeySchema {
        KeySchema {
            partition,
            sort,
            more_partition: Vec::new(),
            more_sort: Vec::new(),
        }
    }

    /// A key of the partition attributes `partition` and the sort
    /// attributes `sort`, each list in key order; `None` without a
    /// partition attribute.
    pub fn of(partition: Vec<KeyAttribute>, sort: Vec<KeyAttribute>) -> Option<KeySchema> {
        let mut partition = partition.into_iter();
        let mut sort = sort.into_iter();
        Some(KeySchema {
            partition: partition.next()?,
            sort: sort.next(),
            more_partition: partition.collect(),
            more_sort: sort.collect(),
        })
    }

    /// The partition (HASH) attributes, in key order.
    pub fn partition_attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        std::iter::once(&self.partition).chain(&self.more_partition)
    }

    /// The sort (RANGE) attributes, in key order.
    pub fn sort_attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        self.sort.iter().chain(&self.more_sort)
    }

    /// The key attributes, partition attributes first, to change in place.
    pub fn attributes_mut(&mut self) -> impl Iterator<Item = &mut KeyAttribute> {
        std::iter::once(&mut self.partition)
            .chain(self.more_partition.iter_mut())
            .chain(self.sort.as_mut())
            .chain(self.more_sort.iter_mut())
    }

    /// Whether a kind of key attribute has more than one attribute.
    pub fn is_multi_attribute(&self) -> bool {
        !self.more_partition.is_empty() || !self.more_sort.is_empty()
    }

    /// The key attributes, partition attributes first.
    pub fn attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        self.partition_attributes().chain(self.sort_attributes())
    }

    /// Copies the key attributes of `item` (missing ones are skipped).
    pub fn key_of(&self, item: &Item) -> Item {
        self.attributes()
            .filter_map(|a| item.get(&a.name).map(|v| (a.name.clone(), v.clone())))
            .collect()
    }

    /// Checks the shape of a global secondary index's key: at most
    /// [`MAX_INDEX_KEY_ATTRIBUTES`] of each kind, no attribute twice (in
    /// DynamoDB's words).
    fn validate_index_key(&self) -> Result<(), String> {
        let names: Vec<&str> = self.attributes().map(|a| a.name.as_str()).collect();
        if names
            .iter()
            .enumerate()
            .any(|(at, name)| names[..at].contains(name))
        {
            return Err("Two keys can not have the same name".into());
        }
        if self.partition_attributes().count() > MAX_INDEX_KEY_ATTRIBUTES {
            return Err(format!(
                "Too many partition keys. GSI can have at most {MAX_INDEX_KEY_ATTRIBUTES} partition keys"
            ));
        }
        if self.sort_attributes().count() > MAX_INDEX_KEY_ATTRIBUTES {
            return Err(format!(
                "Too many sort keys. GSI can have at most {MAX_INDEX_KEY_ATTRIBUTES} sort keys"
            ));
        }
        Ok(())
    }
}

/// Which attributes a secondary index copies from the table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Projection {
    /// Every attribute of the item.
    All,
    /// Only the table's and the index's key attributes.
    KeysOnly,
    /// The keys plus the listed attributes.
    Include(Vec<String>),
}

/// A global secondary index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GlobalSecondaryIndex {
    pub name: String,
    pub key_schema: KeySchema,
    pub projection: Projection,
}

impl GlobalSecondaryIndex {
    /// Whether `other` is the same index: same name, keys and projected
    /// attributes (an INCLUDE list in any order, as DescribeTable may list
    /// it in another order than it was created with).
    pub fn same_as(&self, other: &GlobalSecondaryIndex) -> bool {
        let projected = |index: &GlobalSecondaryIndex| match &index.projection {
            Projection::Include(names) => {
                let mut names = names.clone();
                names.sort();
                names.dedup();
                Projection::Include(names)
            }
            other => other.clone(),
        };
        self.name == other.name
            && self.key_schema == other.key_schema
            && projected(self) == projected(other)
    }
}

/// A local secondary index: the table's partition key with another sort
/// key, its entries kept beside the table's items in each partition, so it
/// reads strongly consistent and can fetch what it does not project.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LocalSecondaryIndex {
    pub name: String,
    pub sort_key: KeyAttribute,
    pub projection: Projection,
}

/// Most local secondary indexes one table has (DynamoDB's quota).
pub const MAX_LOCAL_SECONDARY_INDEXES: usize = 5;

impl LocalSecondaryIndex {
    /// Its key schema in a table whose partition key is `partition`.
    pub fn key_schema(&self, partition: &KeyAttribute) -> KeySchema {
        KeySchema::new(partition.clone(), Some(self.sort_key.clone()))
    }
}

/// What a table lacks of the indexes its definition wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexDrift {
    /// No index of that name exists: create it.
    Missing(GlobalSecondaryIndex),
    /// An index of that name exists with other keys or another projection:
    /// it must be deleted and created again (DynamoDB cannot change either
    /// in place).
    Changed(GlobalSecondaryIndex),
}

/// Everything needed to create a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TableDefinition {
    pub name: String,
    pub key_schema: KeySchema,
    pub global_secondary_indexes: Vec<GlobalSecondaryIndex>,
    /// Whether the table records a change stream (NEW_AND_OLD_IMAGES).
    pub stream_enabled: bool,
    /// The Time to Live attribute when TTL is enabled: an item whose value
    /// there is a Number of epoch seconds in the past expires and is
    /// deleted in the background. Definitions stored before TTL existed
    /// have none.
    #[serde(default)]
    pub time_to_live_attribute: Option<String>,
    /// Fixed when the table is created. Definitions stored before local
    /// secondary indexes existed have none.
    #[serde(default)]
    pub local_secondary_indexes: Vec<LocalSecondaryIndex>,
}

impl TableDefinition {
    pub fn index(&self, name: &str) -> Option<&GlobalSecondaryIndex> {
        self.global_secondary_indexes
            .iter()
            .find(|i| i.name == name)
    }

    /// How the indexes `current` (a table's, as described) fall short of
    /// the ones this definition wants, in the definition's order. Indexes
    /// the definition does not name are left alone.
    pub fn index_drift(&self, current: &[GlobalSecondaryIndex]) -> Vec<IndexDrift> {
        self.global_secondary_indexes
            .iter()
            .filter_map(
                |wanted| match current.iter().find(|i| i.name == wanted.name) {
                    None => Some(IndexDrift::Missing(wanted.clone())),
                    Some(existing) if !existing.same_as(wanted) => {
                        Some(IndexDrift::Changed(wanted.clone()))
                    }
                    Some(_) => None,
                },
            )
            .collect()
    }

    /// The declared type of `attribute` if it is a key of the table or of
    /// any index (a key attribute has one type throughout the table).
    pub fn key_type_of(&self, attribute: &str) -> Option<KeyType> {
        self.key_attributes()
            .find(|a| a.name == attribute)
            .map(|a| a.key_type)
    }

    /// The key attributes of the table and of every index, repeats included.
    pub fn key_attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        self.key_schema
            .attributes()
            .chain(
                self.global_secondary_indexes
                    .iter()
                    .flat_map(|i| i.key_schema.attributes()),
            )
            .chain(self.local_secondary_indexes.iter().map(|i| &i.sort_key))
    }

    /// The names of every index, global and local.
    pub fn index_names(&self) -> impl Iterator<Item = &str> {
        self.global_secondary_indexes
            .iter()
            .map(|i| i.name.as_str())
            .chain(self.local_secondary_indexes.iter().map(|i| i.name.as_str()))
    }

    /// Checks the definition itself: names, and one type per key attribute.
    pub fn validate(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "table name {:?} must be 3-255 characters of a-z A-Z 0-9 _ - .",
                self.name
            ));
        }
        let mut seen: Vec<&KeyAttribute> = Vec::new();
        for name in self.index_names() {
            if !valid_name(name) {
                return Err(format!(
                    "index name {name:?} must be 3-255 characters of a-z A-Z 0-9 _ - ."
                ));
            }
            if self.index_names().filter(|i| *i == name).count() > 1 {
                return Err(format!("duplicate index name {name:?}"));
            }
        }
        if !self.local_secondary_indexes.is_empty() && self.key_schema.sort.is_none() {
            return Err("a table with local secondary indexes must have a sort key".into());
        }
        if self.local_secondary_indexes.len() > MAX_LOCAL_SECONDARY_INDEXES {
            return Err(format!(
                "a table has at most {MAX_LOCAL_SECONDARY_INDEXES} local secondary indexes"
            ));
        }
        for attribute in self.key_attributes() {
            // Naming rules: key attribute names are 1 to 255 bytes long.
            if !(1..=MAX_KEY_ATTRIBUTE_NAME_BYTES).contains(&attribute.name.len()) {
                return Err(format!(
                    "1 validation error detected: Value '{}' at 'keySchema.member.attributeName' failed to satisfy constraint: Member must have length between 1 and {MAX_KEY_ATTRIBUTE_NAME_BYTES}",
                    attribute.name
                ));
            }
            if let Some(other) = seen.iter().find(|a| a.name == attribute.name)
                && other.key_type != attribute.key_type
            {
                return Err(format!(
                    "key attribute {:?} is declared with two types",
                    attribute.name
                ));
            }
            seen.push(attribute);
        }
        if let Some(sort) = &self.key_schema.sort
            && sort.name == self.key_schema.partition.name
        {
            return Err("partition key and sort key must be different attributes".into());
        }
        if self.key_schema.is_multi_attribute() {
            return Err(
                "a table's key has one partition attribute and at most one sort attribute".into(),
            );
        }
        for index in &self.global_secondary_indexes {
            index.key_schema.validate_index_key()?;
        }
        if let Some(attribute) = &self.time_to_live_attribute {
            valid_time_to_live_attribute(attribute)?;
        }
        Ok(())
    }
}

/// Longest name of a key attribute, of the table or of an index.
pub const MAX_KEY_ATTRIBUTE_NAME_BYTES: usize = 255;

/// DynamoDB's constraint on a TTL attribute name (TimeToLiveSpecification).
pub fn valid_time_to_live_attribute(name: &str) -> Result<(), String> {
    if (1..=255).contains(&name.len()) {
        Ok(())
    } else {
        Err(format!(
            "TimeToLive attribute name {name:?} must be 1-255 characters long"
        ))
    }
}

fn valid_name(name: &str) -> bool {
    (3..=255).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_index_key(name: &str) -> TableDefinition {
        TableDefinition {
            name: "things".into(),
            key_schema: KeySchema::new(KeyAttribute::new("PK", KeyType::S), None),
            global_secondary_indexes: vec![GlobalSecondaryIndex {
                name: "byName".into(),
                key_schema: KeySchema::new(KeyAttribute::new(name, KeyType::S), None),
                projection: Projection::KeysOnly,
            }],
            stream_enabled: false,
            time_to_live_attribute: None,
            local_secondary_indexes: Vec::new(),
        }
    }

    #[test]
    fn index_drift_names_missing_and_changed_indexes_only() {
        let index = |name: &str, projection: Projection| GlobalSecondaryIndex {
            name: name.into(),
            key_schema: KeySchema::new(KeyAttribute::new("K", KeyType::S), None),
            projection,
        };
        let include =
            |names: &[&str]| Projection::Include(names.iter().map(|n| n.to_string()).collect());
        let wanted = TableDefinition {
            global_secondary_indexes: vec![
                index("same", include(&["a", "b"])),
                index("reordered", include(&["a", "b"])),
                index("widened", include(&["a", "b"])),
                index("absent", Projection::KeysOnly),
            ],
            ..with_index_key("K")
        };
        let current = [
            index("same", include(&["a", "b"])),
            index("reordered", include(&["b", "a"])),
            index("widened", include(&["a"])),
            index("extra", Projection::All),
        ];
        assert_eq!(
            wanted.index_drift(&current),
            vec![
                IndexDrift::Changed(index("widened", include(&["a", "b"]))),
                IndexDrift::Missing(index("absent", Projection::KeysOnly)),
            ]
        );
        assert!(
            wanted
                .index_drift(&wanted.global_secondary_indexes)
                .is_empty()
        );
    }

    #[test]
    fn local_indexes_need_a_sort_key_distinct_names_and_one_type_per_attribute() {
        let local = |name: &str, sort: &str, key_type: KeyType| LocalSecondaryIndex {
            name: name.into(),
            sort_key: KeyAttribute::new(sort, key_type),
            projection: Projection::KeysOnly,
        };
        let with_sort = |locals: Vec<LocalSecondaryIndex>| TableDefinition {
            key_schema: KeySchema::new(
                KeyAttribute::new("PK", KeyType::S),
                Some(KeyAttribute::new("SK", KeyType::S)),
            ),
            local_secondary_indexes: locals,
            ..with_index_key("K")
        };
        let fine = with_sort(vec![local("byDate", "date", KeyType::N)]);
        assert_eq!(fine.validate(), Ok(()));
        assert_eq!(fine.key_type_of("date"), Some(KeyType::N));
        assert_eq!(fine.index_names().collect::<Vec<_>>(), ["byName", "byDate"]);
        let no_sort = TableDefinition {
            local_secondary_indexes: vec![local("byDate", "date", KeyType::N)],
            ..with_index_key("K")
        };
        assert!(no_sort.validate().is_err_and(|e| e.contains("sort key")));
        let clash = with_sort(vec![local("byName", "date", KeyType::N)]);
        assert!(
            clash
                .validate()
                .is_err_and(|e| e.contains("duplicate index name"))
        );
        let two_types = with_sort(vec![local("byK", "K", KeyType::N)]);
        assert!(two_types.validate().is_err_and(|e| e.contains("two types")));
        let six = with_sort(
            (0..6)
                .map(|i| local(&format!("local{i}"), "date", KeyType::N))
                .collect(),
        );
        assert!(six.validate().is_err_and(|e| e.contains("at most 5")));
    }

    #[test]
    fn key_attribute_names_are_at_most_255_bytes() {
        let longest = "k".repeat(MAX_KEY_ATTRIBUTE_NAME_BYTES);
        assert_eq!(with_index_key(&longest).validate(), Ok(()));
        let refused = with_index_key(&format!("{longest}k")).validate();
        assert!(refused.is_err_and(|e| e.contains("Member must have length between 1 and 255")));
    }
}

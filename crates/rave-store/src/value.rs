//! Attribute values and items, with DynamoDB's size and validity rules.
//!
//! `AttributeValue` has DynamoDB's ten types (S, N, B, BOOL, NULL, L, M, SS,
//! NS, BS). An item's size is computed here, once, by the developer guide's
//! rules ("Item sizes and formats"), because everything that is charged or
//! limited by size (capacity units, the 400 KB item, item collections, the
//! 4 MB transaction) must agree on it, on every backend.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::number::Number;

/// Largest item DynamoDB stores (400 KB).
pub const MAX_ITEM_SIZE: usize = 400 * 1024;

/// Deepest nesting DynamoDB stores, counting the attribute itself as level 1
/// (developer guide, "Nested attribute depth": 32 levels). A value holding
/// 31 documents one inside the other is the deepest allowed.
const MAX_NESTING_LEVELS: usize = 32;

/// Longest attribute name (developer guide, naming rules: "less than 64 KB").
pub const MAX_ATTRIBUTE_NAME_BYTES: usize = 65_535;

/// One attribute value, with DynamoDB's ten types.
///
/// Sets are kept ordered so that equality and serialisation are
/// deterministic; DynamoDB itself does not promise an order for them.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AttributeValue {
    S(String),
    N(Number),
    B(Vec<u8>),
    Bool(bool),
    Null,
    L(Vec<AttributeValue>),
    M(BTreeMap<String, AttributeValue>),
    Ss(BTreeSet<String>),
    Ns(BTreeSet<Number>),
    Bs(BTreeSet<Vec<u8>>),
}

/// An item: attribute name → value.
pub type Item = BTreeMap<String, AttributeValue>;

/// The type of an attribute value, as named by DynamoDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AttributeType {
    S,
    N,
    B,
    Bool,
    Null,
    L,
    M,
    Ss,
    Ns,
    Bs,
}

impl AttributeType {
    /// DynamoDB's own spelling (`"S"`, `"BOOL"`, `"SS"`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            AttributeType::S => "S",
            AttributeType::N => "N",
            AttributeType::B => "B",
            AttributeType::Bool => "BOOL",
            AttributeType::Null => "NULL",
            AttributeType::L => "L",
            AttributeType::M => "M",
            AttributeType::Ss => "SS",
            AttributeType::Ns => "NS",
            AttributeType::Bs => "BS",
        }
    }
}

impl AttributeValue {
    pub fn s(v: impl Into<String>) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    pub fn n(v: impl Into<Number>) -> AttributeValue {
        AttributeValue::N(v.into())
    }

    pub fn attribute_type(&self) -> AttributeType {
        match self {
            AttributeValue::S(_) => AttributeType::S,
            AttributeValue::N(_) => AttributeType::N,
            AttributeValue::B(_) => AttributeType::B,
            AttributeValue::Bool(_) => AttributeType::Bool,
            AttributeValue::Null => AttributeType::Null,
            AttributeValue::L(_) => AttributeType::L,
            AttributeValue::M(_) => AttributeType::M,
            AttributeValue::Ss(_) => AttributeType::Ss,
            AttributeValue::Ns(_) => AttributeType::Ns,
            AttributeValue::Bs(_) => AttributeType::Bs,
        }
    }

    pub fn as_s(&self) -> Option<&str> {
        match self {
            AttributeValue::S(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_n(&self) -> Option<&Number> {
        match self {
            AttributeValue::N(n) => Some(n),
            _ => None,
        }
    }

    /// Bytes DynamoDB charges for this value, not counting its name.
    pub fn size(&self) -> usize {
        match self {
            AttributeValue::S(s) => s.len(),
            AttributeValue::N(n) => n.storage_size(),
            AttributeValue::B(b) => b.len(),
            AttributeValue::Bool(_) | AttributeValue::Null => 1,
            AttributeValue::L(l) => 3 + l.iter().map(|v| 1 + v.size()).sum::<usize>(),
            AttributeValue::M(m) => {
                3 + m.iter().map(|(k, v)| 1 + k.len() + v.size()).sum::<usize>()
            }
            AttributeValue::Ss(s) => s.iter().map(String::len).sum(),
            AttributeValue::Ns(s) => s.iter().map(Number::storage_size).sum(),
            AttributeValue::Bs(s) => s.iter().map(Vec::len).sum(),
        }
    }

    /// Checks the rules DynamoDB applies to every stored value: sets are
    /// never empty, names in maps are at most 64 KB and documents nest at
    /// most `MAX_NESTING_LEVELS` (32) deep.
    pub fn validate(&self) -> Result<(), String> {
        if self.document_depth() >= MAX_NESTING_LEVELS {
            return Err("Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit".into());
        }
        self.validate_contents()
    }

    /// How many documents (lists and maps) hold one another at the deepest
    /// point of this value: 0 for a scalar or a set.
    pub fn document_depth(&self) -> usize {
        match self {
            AttributeValue::L(l) => {
                1 + l
                    .iter()
                    .map(AttributeValue::document_depth)
                    .max()
                    .unwrap_or(0)
            }
            AttributeValue::M(m) => {
                1 + m
                    .values()
                    .map(AttributeValue::document_depth)
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    fn validate_contents(&self) -> Result<(), String> {
        match self {
            AttributeValue::Ss(s) if s.is_empty() => Err(
                "One or more parameter values were invalid: a string set may not be empty".into(),
            ),
            AttributeValue::Ns(s) if s.is_empty() => Err(
                "One or more parameter values were invalid: a number set may not be empty".into(),
            ),
            AttributeValue::Bs(s) if s.is_empty() => Err(
                "One or more parameter values were invalid: a binary set may not be empty".into(),
            ),
            AttributeValue::L(l) => l.iter().try_for_each(AttributeValue::validate_contents),
            AttributeValue::M(m) => m.iter().try_for_each(|(name, value)| {
                check_attribute_name(name)?;
                value.validate_contents()
            }),
            _ => Ok(()),
        }
    }
}

/// Checks an attribute name's length (64 KB at most; names are never empty).
fn check_attribute_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("One or more parameter values were invalid: An AttributeValue may not contain an empty attribute name".into());
    }
    if name.len() > MAX_ATTRIBUTE_NAME_BYTES {
        return Err(format!(
            "One or more parameter values were invalid: Attribute name is too large, must be less than {} bytes",
            MAX_ATTRIBUTE_NAME_BYTES + 1
        ));
    }
    Ok(())
}

/// Checks every rule DynamoDB applies to a stored item's attributes, other
/// than its key and its size: names, sets, nesting.
pub fn validate_attributes(item: &Item) -> Result<(), String> {
    item.iter().try_for_each(|(name, value)| {
        check_attribute_name(name)?;
        value.validate()
    })
}

/// Bytes DynamoDB charges for an item: names plus values.
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + v.size()).sum()
}

impl fmt::Debug for AttributeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttributeValue::S(s) => write!(f, "S({s:?})"),
            AttributeValue::N(n) => write!(f, "N({n})"),
            AttributeValue::B(b) => write!(f, "B({b:?})"),
            AttributeValue::Bool(b) => write!(f, "BOOL({b})"),
            AttributeValue::Null => write!(f, "NULL"),
            AttributeValue::L(l) => f.debug_tuple("L").field(l).finish(),
            AttributeValue::M(m) => f.debug_tuple("M").field(m).finish(),
            AttributeValue::Ss(s) => f.debug_tuple("SS").field(s).finish(),
            AttributeValue::Ns(s) => f.debug_tuple("NS").field(s).finish(),
            AttributeValue::Bs(s) => f.debug_tuple("BS").field(s).finish(),
        }
    }
}

impl From<&str> for AttributeValue {
    fn from(v: &str) -> AttributeValue {
        AttributeValue::S(v.to_owned())
    }
}

impl From<String> for AttributeValue {
    fn from(v: String) -> AttributeValue {
        AttributeValue::S(v)
    }
}

impl From<i64> for AttributeValue {
    fn from(v: i64) -> AttributeValue {
        AttributeValue::N(Number::from(v))
    }
}

impl From<Number> for AttributeValue {
    fn from(v: Number) -> AttributeValue {
        AttributeValue::N(v)
    }
}

impl From<bool> for AttributeValue {
    fn from(v: bool) -> AttributeValue {
        AttributeValue::Bool(v)
    }
}

/// Builds an [`Item`] from `name => value` pairs.
#[macro_export]
macro_rules! item {
    ($($name:expr => $value:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut item = $crate::Item::new();
        $(item.insert(::std::string::String::from($name), $crate::AttributeValue::from($value));)*
        item
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_documented_rules() {
        // "a" (1) + "hello" (5)
        assert_eq!(item_size(&item! {"a" => "hello"}), 6);
        // "n" (1) + 3 digits → 2 bytes + 1
        assert_eq!(item_size(&item! {"n" => 123i64}), 1 + 3);
        // Zero is one byte; a negative number pays one more for its sign.
        assert_eq!(item_size(&item! {"n" => 0i64}), 1 + 1);
        assert_eq!(item_size(&item! {"n" => -5i64}), 1 + 3);
        // "b" (1) + BOOL (1)
        assert_eq!(item_size(&item! {"b" => true}), 2);
        let list = AttributeValue::L(vec!["ab".into(), AttributeValue::Null]);
        // 3 overhead + (1 + 2) + (1 + 1)
        assert_eq!(list.size(), 8);
        let map = AttributeValue::M(item! {"k" => "v"});
        // 3 overhead + 1 per element + "k" + "v"
        assert_eq!(map.size(), 6);
        assert_eq!(AttributeValue::L(vec![]).size(), 3);
    }

    #[test]
    fn empty_sets_are_invalid_even_nested() {
        assert!(AttributeValue::Ss(BTreeSet::new()).validate().is_err());
        let nested = AttributeValue::M(item! {"x" => AttributeValue::Ns(BTreeSet::new())});
        assert!(nested.validate().is_err());
        assert!(AttributeValue::s("").validate().is_ok());
    }

    /// Wraps a string in `depth` maps, one inside the other.
    fn nested_maps(depth: usize) -> AttributeValue {
        (0..depth).fold(AttributeValue::s("leaf"), |inner, _| {
            AttributeValue::M(item! {"n" => inner})
        })
    }

    #[test]
    fn nesting_stops_at_thirty_two_levels_counting_the_attribute() {
        // 31 maps put the leaf at level 32: the deepest DynamoDB stores.
        assert_eq!(nested_maps(31).document_depth(), 31);
        assert!(validate_attributes(&item! {"data" => nested_maps(31)}).is_ok());
        let refused = validate_attributes(&item! {"data" => nested_maps(32)});
        assert!(
            refused.is_err_and(|e| e.starts_with("Nesting Levels have exceeded supported limits"))
        );
        let lists = (0..32).fold(AttributeValue::Null, |inner, _| {
            AttributeValue::L(vec![inner])
        });
        assert!(lists.validate().is_err());
    }

    #[test]
    fn attribute_names_are_at_most_64_kb_at_any_depth() {
        let longest = "a".repeat(MAX_ATTRIBUTE_NAME_BYTES);
        let too_long = "a".repeat(MAX_ATTRIBUTE_NAME_BYTES + 1);
        let mut item = Item::new();
        item.insert(longest.clone(), AttributeValue::Null);
        assert!(validate_attributes(&item).is_ok());
        item.insert(too_long.clone(), AttributeValue::Null);
        assert!(validate_attributes(&item).is_err());
        let nested = AttributeValue::M(BTreeMap::from([(too_long, AttributeValue::Null)]));
        assert!(nested.validate().is_err());
        assert!(validate_attributes(&item! {"" => 1i64}).is_err());
    }
}

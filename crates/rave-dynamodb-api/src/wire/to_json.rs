//! rave's attribute values written as DynamoDB JSON: [`ItemJson`] and
//! [`ValueJson`] serialise them straight into an answer's bytes (the
//! answers served most, GetItem's and Query's, are written so, with no
//! `serde_json::Value` tree built and dropped on the way), and
//! [`item_to_json`] and [`value_to_json`] build them as values for the
//! answers that are put together as `Value`s.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_store::{AttributeValue, Item};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// An item as DynamoDB JSON: `{"name": {"S": "..."}, ...}`, names in the
/// item's (sorted) order, as a `Value`'s map would write them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemJson<'a>(pub(crate) &'a Item);

/// One attribute value as DynamoDB JSON: `{"S": "..."}`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValueJson<'a>(pub(crate) &'a AttributeValue);

impl Serialize for ItemJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, &ValueJson(value))?;
        }
        map.end()
    }
}

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tagged = serializer.serialize_map(Some(1))?;
        match self.0 {
            AttributeValue::S(s) => tagged.serialize_entry("S", s)?,
            AttributeValue::N(n) => tagged.serialize_entry("N", &Displayed(n))?,
            AttributeValue::B(b) => tagged.serialize_entry("B", &STANDARD.encode(b))?,
            AttributeValue::Bool(b) => tagged.serialize_entry("BOOL", b)?,
            AttributeValue::Null => tagged.serialize_entry("NULL", &true)?,
            AttributeValue::L(values) => tagged.serialize_entry("L", &Values(values))?,
            AttributeValue::M(map) => tagged.serialize_entry("M", &ItemJson(map))?,
            AttributeValue::Ss(set) => tagged.serialize_entry("SS", set)?,
            AttributeValue::Ns(set) => tagged.serialize_entry("NS", &Numbers(set))?,
            AttributeValue::Bs(set) => tagged.serialize_entry("BS", &Binaries(set))?,
        }
        tagged.end()
    }
}

/// A value written as the string its `Display` gives (a number).
struct Displayed<'a, T>(&'a T);

impl<T: std::fmt::Display> Serialize for Displayed<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

struct Values<'a>(&'a [AttributeValue]);

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(ValueJson))
    }
}

struct Numbers<'a>(&'a std::collections::BTreeSet<rave_store::Number>);

impl Serialize for Numbers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for number in self.0 {
            seq.serialize_element(&Displayed(number))?;
        }
        seq.end()
    }
}

struct Binaries<'a>(&'a std::collections::BTreeSet<Vec<u8>>);

impl Serialize for Binaries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|b| STANDARD.encode(b)))
    }
}

pub(crate) fn item_to_json(item: &Item) -> Value {
    as_value(&ItemJson(item))
}

pub(crate) fn value_to_json(value: &AttributeValue) -> Value {
    as_value(&ValueJson(value))
}

/// Every map these write has string keys, and every leaf is a string or a
/// boolean: serialising them into a `Value` cannot fail.
fn as_value(json: &impl Serialize) -> Value {
    serde_json::to_value(json).unwrap_or(Value::Null)
}

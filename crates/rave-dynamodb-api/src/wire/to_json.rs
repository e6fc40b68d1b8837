//! rave's attribute values written as DynamoDB JSON.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_store::{AttributeValue, Item};
use serde_json::{Map, Value};

pub(crate) fn item_to_json(item: &Item) -> Value {
    Value::Object(
        item.iter()
            .map(|(name, value)| (name.clone(), value_to_json(value)))
            .collect(),
    )
}

pub(crate) fn value_to_json(value: &AttributeValue) -> Value {
    let (tag, inner) = match value {
        AttributeValue::S(s) => ("S", Value::String(s.clone())),
        AttributeValue::N(n) => ("N", Value::String(n.to_string())),
        AttributeValue::B(b) => ("B", Value::String(STANDARD.encode(b))),
        AttributeValue::Bool(b) => ("BOOL", Value::Bool(*b)),
        AttributeValue::Null => ("NULL", Value::Bool(true)),
        AttributeValue::L(values) => ("L", values.iter().map(value_to_json).collect()),
        AttributeValue::M(map) => ("M", item_to_json(map)),
        AttributeValue::Ss(set) => ("SS", set.iter().cloned().map(Value::String).collect()),
        AttributeValue::Ns(set) => (
            "NS",
            set.iter().map(|n| Value::String(n.to_string())).collect(),
        ),
        AttributeValue::Bs(set) => (
            "BS",
            set.iter()
                .map(|b| Value::String(STANDARD.encode(b)))
                .collect(),
        ),
    };
    let mut tagged = Map::new();
    tagged.insert(tag.to_owned(), inner);
    Value::Object(tagged)
}

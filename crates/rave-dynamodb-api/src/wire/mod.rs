//! DynamoDB JSON: attribute values as `{"S": "..."}`, `{"N": "12"}`,
//! `{"B": "<base64>"}`, ... read here with the validation errors DynamoDB
//! gives for malformed ones (empty values, two types in one value, empty
//! or duplicated sets, malformed numbers, nesting beyond 32 levels), and
//! written by `to_json`, which needs no error type (so that the error
//! envelope can show an item). A property test round-trips every type.
//! `answer` holds what an operation answers: a `Value`, or bytes written
//! straight from the store's items.

use std::collections::BTreeSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_store::{AttributeValue, Item, Number, NumberError};
use serde_json::Value;

use crate::error::ApiError;

mod answer;
mod to_json;

pub(crate) use answer::{Answer, AnswerWriter};
pub(crate) use to_json::{item_to_json, value_to_json, write_item, write_items};

/// The type tags DynamoDB JSON uses, in the order DynamoDB lists them.
const TYPE_TAGS: [&str; 10] = ["S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"];

/// Deepest level a value may reach, counting a top-level attribute as 1.
const MAX_NESTING: usize = 32;

/// An item (or a key) from DynamoDB JSON.
pub(crate) fn item_from_json(value: &Value) -> Result<Item, ApiError> {
    map_at(value, 1)
}

/// A Put's item as TransactWriteItems reads it, action by action: its
/// attribute names before any of its values, an empty one refused in that
/// operation's words, ahead of the item's depth, of any later action and of
/// the table's lookup (DynamoDB, every region captured in October 2026).
/// A map's empty key inside a value is left to the stored item's checks.
pub(crate) fn transacted_item_from_json(value: &Value) -> Result<Item, ApiError> {
    if value
        .as_object()
        .is_some_and(|attributes| attributes.contains_key(""))
    {
        return Err(ApiError::validation("Empty attribute name"));
    }
    item_from_json(value)
}

/// A map whose values sit at nesting level `depth`.
fn map_at(value: &Value, depth: usize) -> Result<Item, ApiError> {
    let Value::Object(attributes) = value else {
        return Err(ApiError::serialization(
            "Unexpected value type in payload: expected a map of attribute values",
        ));
    };
    attributes
        .iter()
        .map(|(name, value)| Ok((name.clone(), value_at(value, depth)?)))
        .collect()
}

/// One attribute value from DynamoDB JSON.
pub(crate) fn value_from_json(value: &Value) -> Result<AttributeValue, ApiError> {
    value_at(value, 1)
}

fn value_at(value: &Value, depth: usize) -> Result<AttributeValue, ApiError> {
    if depth > MAX_NESTING {
        return Err(ApiError::validation(
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
        ));
    }
    let Value::Object(tagged) = value else {
        return Err(ApiError::serialization(
            "Unexpected value type in payload: expected an attribute value object",
        ));
    };
    let mut present = TYPE_TAGS
        .iter()
        .filter_map(|tag| tagged.get(*tag).map(|v| (*tag, v)));
    let (tag, inner) = match (present.next(), present.next()) {
        (None, _) => {
            return Err(ApiError::validation(
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::validation(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ));
        }
        (Some(only), None) => only,
    };
    match tag {
        "S" => Ok(AttributeValue::S(string(inner, tag)?.to_owned())),
        "N" => Ok(AttributeValue::N(number(string(inner, tag)?)?)),
        "B" => Ok(AttributeValue::B(binary(inner, tag)?)),
        "BOOL" => match inner {
            Value::Bool(b) => Ok(AttributeValue::Bool(*b)),
            _ => Err(wrong_json_type(tag, "a boolean")),
        },
        "NULL" => match inner {
            Value::Bool(true) => Ok(AttributeValue::Null),
            Value::Bool(false) => Err(ApiError::validation(
                "One or more parameter values were invalid: Null attribute value types must have the value of true",
            )),
            _ => Err(wrong_json_type(tag, "a boolean")),
        },
        "L" => match inner {
            Value::Array(values) => Ok(AttributeValue::L(
                values
                    .iter()
                    .map(|v| value_at(v, depth + 1))
                    .collect::<Result<_, _>>()?,
            )),
            _ => Err(wrong_json_type(tag, "a list")),
        },
        "M" => match inner {
            Value::Object(_) => Ok(AttributeValue::M(map_at(inner, depth + 1)?)),
            _ => Err(wrong_json_type(tag, "a map")),
        },
        "SS" => {
            let members = set_members(inner, tag)?;
            let strings: Vec<&str> = members
                .iter()
                .map(|m| string(m, tag))
                .collect::<Result<_, _>>()?;
            if strings.is_empty() {
                return Err(ApiError::validation(
                    "One or more parameter values were invalid: An string set  may not be empty",
                ));
            }
            let set: BTreeSet<String> = strings.iter().map(|s| (*s).to_owned()).collect();
            if set.len() < strings.len() {
                let quoted: Vec<String> = sorted_to_first_repeat(&strings)
                    .iter()
                    .map(|s| format!("\"{s}\""))
                    .collect();
                return Err(ApiError::value_fault(
                    format!(
                        "One or more parameter values were invalid: Input collection [{}] contains duplicates.",
                        strings.join(", ")
                    ),
                    format!(
                        "One or more parameter values were invalid: Input collection [{}] contains duplicates.",
                        quoted.join(", ")
                    ),
                )
                .in_older_words_on_put_item());
            }
            Ok(AttributeValue::Ss(set))
        }
        "NS" => {
            let members = set_members(inner, tag)?;
            let numbers: Vec<Number> = members
                .iter()
                .map(|m| number(string(m, tag)?))
                .collect::<Result<_, _>>()?;
            if numbers.is_empty() {
                return Err(ApiError::validation(
                    "One or more parameter values were invalid: An number set  may not be empty",
                ));
            }
            let set: BTreeSet<Number> = numbers.iter().copied().collect();
            if set.len() < numbers.len() {
                return Err(ApiError::value_fault(
                    "Input collection contains duplicates",
                    "One or more parameter values were invalid: Input collection contains duplicates.",
                ));
            }
            Ok(AttributeValue::Ns(set))
        }
        _ => {
            let members = set_members(inner, tag)?;
            let binaries: Vec<Vec<u8>> = members
                .iter()
                .map(|m| binary(m, tag))
                .collect::<Result<_, _>>()?;
            if binaries.is_empty() {
                return Err(ApiError::validation(
                    "One or more parameter values were invalid: Binary sets should not be empty",
                ));
            }
            let set: BTreeSet<Vec<u8>> = binaries.iter().cloned().collect();
            if set.len() < binaries.len() {
                let encoded = |members: &[&Vec<u8>]| -> Vec<String> {
                    members.iter().map(|b| STANDARD.encode(b)).collect()
                };
                let given: Vec<&Vec<u8>> = binaries.iter().collect();
                let quoted: Vec<String> = encoded(&sorted_to_first_repeat(&given))
                    .iter()
                    .map(|b| format!("\"{b}\""))
                    .collect();
                return Err(ApiError::value_fault(
                    format!(
                        "One or more parameter values were invalid: Input collection [{}]of type BS contains duplicates.",
                        encoded(&given).join(", ")
                    ),
                    format!(
                        "One or more parameter values were invalid: Input collection [{}]of type BS contains duplicates.",
                        quoted.join(",")
                    ),
                ));
            }
            Ok(AttributeValue::Bs(set))
        }
    }
}

fn wrong_json_type(tag: &str, expected: &str) -> ApiError {
    ApiError::serialization(format!(
        "Unexpected value type in payload: {tag} must be {expected}"
    ))
}

fn string<'a>(value: &'a Value, tag: &str) -> Result<&'a str, ApiError> {
    value
        .as_str()
        .ok_or_else(|| wrong_json_type(tag, "a string"))
}

fn set_members<'a>(value: &'a Value, tag: &str) -> Result<&'a [Value], ApiError> {
    match value {
        Value::Array(members) => Ok(members),
        _ => Err(wrong_json_type(tag, "a list")),
    }
}

fn number(text: &str) -> Result<Number, ApiError> {
    text.parse().map_err(|error| {
        let message = match &error {
            NumberError::Syntax => {
                format!("The parameter cannot be converted to a numeric value: {text}")
            }
            other => other.to_string(),
        };
        let older = match error {
            // The older layer's 32-bit reading of the magnitude wraps.
            NumberError::Overflow if Number::wraps_in_older_reading(text) => {
                NumberError::Underflow.to_string()
            }
            // The older words drop a colon with nothing after it.
            _ if text.is_empty() => message.trim_end_matches(": ").to_owned(),
            _ => message.clone(),
        };
        ApiError::value_fault(older, message)
    })
}

/// A set's members as DynamoDB's current words list them when one repeats:
/// in order up to the first repeat, which closes the list.
fn sorted_to_first_repeat<T: Ord + Clone>(members: &[T]) -> Vec<T> {
    let mut sorted: Vec<T> = Vec::with_capacity(members.len());
    for member in members {
        match sorted.binary_search(member) {
            Ok(_) => {
                sorted.push(member.clone());
                break;
            }
            Err(at) => sorted.insert(at, member.clone()),
        }
    }
    sorted
}

fn binary(value: &Value, tag: &str) -> Result<Vec<u8>, ApiError> {
    STANDARD.decode(string(value, tag)?).map_err(|error| {
        ApiError::serialization(format!(
            "Base64 decoding of the {tag} value failed: {error}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::to_json::{value_to_json, write_item};
    use super::*;

    #[test]
    fn refused_values_carry_dynamodbs_current_words_too() {
        let current = |value: Value| error_of(value).current_wording.unwrap_or_default();
        assert_eq!(
            current(json!({"SS": ["b", "a", "b"]})),
            r#"One or more parameter values were invalid: Input collection ["a", "b", "b"] contains duplicates."#
        );
        // Binaries in byte order (AA== is 0x00, /w== 0xFF), without spaces.
        assert_eq!(
            current(json!({"BS": ["/w==", "AA==", "AA=="]})),
            r#"One or more parameter values were invalid: Input collection ["AA==","/w==","AA=="]of type BS contains duplicates."#
        );
        assert_eq!(
            current(json!({"NS": ["2", "1", "2"]})),
            "One or more parameter values were invalid: Input collection contains duplicates."
        );
        let empty = error_of(json!({"N": ""}));
        assert_eq!(
            empty.message.as_deref(),
            Some("The parameter cannot be converted to a numeric value")
        );
        assert_eq!(
            empty.current_wording.as_deref(),
            Some("The parameter cannot be converted to a numeric value: ")
        );
        // Past 32 bits the older words wrap to an underflow, the current
        // ones stay an overflow; a magnitude one short of it overflows in both.
        let wrapped = error_of(json!({"N": "1e2147483647"}));
        assert_eq!(
            wrapped.message.as_deref(),
            Some(NumberError::Underflow.to_string().as_str())
        );
        assert_eq!(
            wrapped.current_wording.as_deref(),
            Some(NumberError::Overflow.to_string().as_str())
        );
        let short = error_of(json!({"N": "1e2147483646"}));
        assert_eq!(
            short.message.as_deref(),
            Some(NumberError::Overflow.to_string().as_str())
        );
    }

    #[test]
    fn a_repeating_set_is_listed_in_order_up_to_its_first_repeat() {
        assert_eq!(sorted_to_first_repeat(&[3, 1, 2, 1, 0]), [1, 2, 3, 1]);
        assert_eq!(sorted_to_first_repeat(&[2, 2]), [2, 2]);
        assert_eq!(sorted_to_first_repeat(&[1, 2]), [1, 2]);
    }

    fn error_of(value: Value) -> ApiError {
        match value_from_json(&value) {
            Err(error) => error,
            Ok(parsed) => panic!("{value} parsed as {parsed:?}"),
        }
    }

    #[test]
    fn malformed_values_get_dynamodbs_messages() {
        let cases = [
            (
                json!({}),
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ),
            (
                json!({"X": "1"}),
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ),
            (
                json!({"S": "a", "N": "1"}),
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ),
            (
                json!({"SS": []}),
                "One or more parameter values were invalid: An string set  may not be empty",
            ),
            (
                json!({"NS": []}),
                "One or more parameter values were invalid: An number set  may not be empty",
            ),
            (
                json!({"BS": []}),
                "One or more parameter values were invalid: Binary sets should not be empty",
            ),
            (
                json!({"SS": ["a", "a"]}),
                "One or more parameter values were invalid: Input collection [a, a] contains duplicates.",
            ),
            (
                json!({"NS": ["1", "1.0"]}),
                "Input collection contains duplicates",
            ),
            (
                json!({"BS": ["Yg==", "Yg=="]}),
                "One or more parameter values were invalid: Input collection [Yg==, Yg==]of type BS contains duplicates.",
            ),
            (
                json!({"N": "b"}),
                "The parameter cannot be converted to a numeric value: b",
            ),
            (
                json!({"N": ""}),
                "The parameter cannot be converted to a numeric value",
            ),
            (
                json!({"NS": ["1", "x"]}),
                "The parameter cannot be converted to a numeric value: x",
            ),
            (
                json!({"N": "1e126"}),
                "Number overflow. Attempting to store a number with magnitude larger than supported range",
            ),
            (
                json!({"N": "1.23456789012345678901234567890123456789"}),
                "Attempting to store more than 38 significant digits in a Number",
            ),
            (
                json!({"L": [{"M": {"x": {}}}]}),
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ),
        ];
        for (value, message) in cases {
            let error = error_of(value.clone());
            assert_eq!(error.kind, crate::error::ErrorKind::Validation, "{value}");
            assert_eq!(error.message.as_deref(), Some(message), "{value}");
        }
        assert_eq!(
            value_from_json(&json!({"NULL": true})),
            Ok(AttributeValue::Null)
        );
        assert_eq!(
            error_of(json!({"NULL": false})).message.as_deref(),
            Some(
                "One or more parameter values were invalid: Null attribute value types must have the value of true"
            )
        );
    }

    #[test]
    fn values_nest_at_most_32_levels() {
        let nested = |levels: usize| {
            (0..levels).fold(json!({"S": "leaf"}), |inner, _| json!({"M": {"n": inner}}))
        };
        assert!(value_from_json(&nested(31)).is_ok(), "the leaf at level 32");
        assert_eq!(
            error_of(nested(32)).message.as_deref(),
            Some(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
            )
        );
        let listed = (0..32).fold(json!({"N": "1"}), |inner, _| json!({"L": [inner]}));
        assert!(value_from_json(&listed).is_err());
    }

    #[test]
    fn json_of_the_wrong_type_is_a_serialization_error() {
        for value in [
            json!("S"),
            json!({"S": 1}),
            json!({"B": "not base64!"}),
            json!({"BOOL": "true"}),
        ] {
            assert_eq!(error_of(value).kind, crate::error::ErrorKind::Serialization);
        }
    }

    #[test]
    fn numbers_come_back_in_plain_notation() {
        let parsed = value_from_json(&json!({"N": "1.50E2"})).expect("a valid number");
        assert_eq!(value_to_json(&parsed), json!({"N": "150"}));
        let binary = value_from_json(&json!({"B": "AAEC"})).expect("valid base64");
        assert_eq!(binary, AttributeValue::B(vec![0, 1, 2]));
    }

    fn number_strategy() -> impl Strategy<Value = Number> {
        (any::<i64>(), -20i32..20).prop_map(|(mantissa, exponent)| {
            format!("{mantissa}e{exponent}")
                .parse()
                .unwrap_or(Number::ZERO)
        })
    }

    fn value_strategy() -> impl Strategy<Value = AttributeValue> {
        let leaf = prop_oneof![
            ".*".prop_map(AttributeValue::S),
            number_strategy().prop_map(AttributeValue::N),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(AttributeValue::B),
            any::<bool>().prop_map(AttributeValue::Bool),
            Just(AttributeValue::Null),
            proptest::collection::btree_set(".*", 1..4).prop_map(AttributeValue::Ss),
            proptest::collection::btree_set(number_strategy(), 1..4).prop_map(AttributeValue::Ns),
            proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..4), 1..4)
                .prop_map(AttributeValue::Bs),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(AttributeValue::L),
                proptest::collection::btree_map("[a-z]{0,3}", inner, 0..4)
                    .prop_map(AttributeValue::M),
            ]
        })
    }

    proptest! {
        #[test]
        fn values_round_trip_through_dynamodb_json(value in value_strategy()) {
            let json = value_to_json(&value);
            let text = serde_json::to_string(&json).expect("JSON serialises");
            let reparsed: Value = serde_json::from_str(&text).expect("JSON parses");
            prop_assert_eq!(&value_from_json(&reparsed).expect("a rendered value is valid"), &value);
            let mut written = Vec::new();
            write_item(&mut written, &Item::from([("a".to_owned(), value)]));
            prop_assert_eq!(written, format!(r#"{{"a":{text}}}"#).into_bytes());
        }
    }
}

//! DynamoDB's legacy conditional parameters, which predate expressions and
//! which DynamoDB still serves: `Expected` (a write's condition),
//! `QueryFilter` / `ScanFilter` (a read's filter), each joined by
//! `ConditionalOperator`; `KeyConditions` (a Query's key condition) and
//! `AttributeUpdates` (UpdateItem's actions). Each is read into the same
//! typed tree its expression would give, so the engine evaluates both
//! alike. `AttributeUpdates` takes PUT, ADD (of a number, a set or a list)
//! and DELETE (of an attribute or of set members); `AttributesToGet` is
//! read as a projection in `expressions`. A request naming both styles is
//! refused with DynamoDB's "Can not use both expression and non-expression
//! parameters", listing each.

use rave_store::{
    AttributeValue, Comparator, Condition, KeyCondition, MAX_INDEX_KEY_ATTRIBUTES, Operand, Path,
    SetValue, SortOp, Update, UpdateOperand,
};
use serde_json::Value;

use crate::error::ApiError;
use crate::request::{Members, lower_first, validation_errors};
use crate::wire::value_from_json;

const INVALID: &str = "One or more parameter values were invalid: ";

/// `ConditionalOperator`'s values, in the order DynamoDB lists them.
pub(crate) const CONDITIONAL_OPERATORS: [&str; 2] = ["OR", "AND"];

/// `ConditionalOperator`'s values as DynamoDB's current validation layer
/// lists them when it refuses another (sic: ALL, not AND).
const CONDITIONAL_OPERATORS_LISTED: [&str; 2] = ["ALL", "OR"];

/// Refuses a request that names both legacy parameters and expression
/// parameters, with DynamoDB's message listing each kind it found.
pub(crate) fn refuse_mixed(
    members: Members<'_>,
    legacy: &[&str],
    expressions: &[&str],
) -> Result<(), ApiError> {
    let present = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .filter(|name| members.0.get(**name).is_some_and(|v| !v.is_null()))
            .map(|name| (*name).to_owned())
            .collect()
    };
    let (legacy, expressions) = (present(legacy), present(expressions));
    if legacy.is_empty() || expressions.is_empty() {
        return Ok(());
    }
    Err(ApiError::validation(format!(
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
        legacy.join(", "),
        expressions.join(", ")
    )))
}

/// `Expected`, joined by `ConditionalOperator`: the write's condition.
/// The operator is checked before the conditions, as DynamoDB checks it
/// ahead of their values (one nested past its limits included), and its
/// refusal carries the current validation layer's words, which the item
/// writes answer with.
pub(crate) fn expected(members: Members<'_>) -> Result<Option<Condition>, ApiError> {
    let Some(expected) = members.object("Expected")? else {
        return Ok(None);
    };
    let operator = members.choice_in_both_words(
        "ConditionalOperator",
        &CONDITIONAL_OPERATORS,
        &CONDITIONAL_OPERATORS_LISTED,
    )?;
    let mut conditions = Vec::new();
    for (name, entry) in expected.0 {
        let entry = entry_members(entry, "Expected")?;
        conditions.push(expected_condition(name, entry)?);
    }
    Ok(join(conditions, conditional_operator(operator, true)?))
}

/// `QueryFilter` or `ScanFilter` (`member`), joined by `ConditionalOperator`,
/// whose refusal the reads in DynamoDB's current validation layer (Query)
/// answer in its words.
pub(crate) fn filter(members: Members<'_>, member: &str) -> Result<Option<Condition>, ApiError> {
    let Some(filter) = members.object(member)? else {
        return Ok(None);
    };
    let mut conditions = Vec::new();
    for (name, entry) in filter.0 {
        let entry = entry_members(entry, member)?;
        let operator = comparison_operator(entry, &format!("{}.{name}", lower_first(member)))?;
        let values = attribute_value_list(entry)?.unwrap_or_default();
        conditions.push(comparison(name, operator, values)?);
    }
    let operator = members.choice_in_both_words(
        "ConditionalOperator",
        &CONDITIONAL_OPERATORS,
        &CONDITIONAL_OPERATORS_LISTED,
    )?;
    Ok(join(conditions, conditional_operator(operator, true)?))
}

/// `KeyConditions`: the partition key's equality and at most one sort key
/// condition, or for a global secondary index keyed on several attributes
/// one condition on each of up to eight. Which attribute is which is the
/// table's to say: the engine holds the condition to the key schema it
/// reads.
pub(crate) fn key_conditions(members: Members<'_>) -> Result<Option<KeyCondition>, ApiError> {
    let Some(conditions) = members.object("KeyConditions")? else {
        return Ok(None);
    };
    if !(1..=2 * MAX_INDEX_KEY_ATTRIBUTES).contains(&conditions.0.len()) {
        return Err(ApiError::validation(
            "Conditions can be of length 1 or 2 only",
        ));
    }
    let mut parts = Vec::new();
    for (name, entry) in conditions.0 {
        let entry = entry_members(entry, "KeyConditions")?;
        let operator = comparison_operator(entry, &format!("keyConditions.{name}"))?;
        let values = attribute_value_list(entry)?.unwrap_or_default();
        check_arguments(operator, &values)?;
        let mut values = values.into_iter();
        let mut next = || values.next().unwrap_or(AttributeValue::Null);
        let op = match operator {
            "EQ" => SortOp::Eq(next()),
            "LT" => SortOp::Lt(next()),
            "LE" => SortOp::Le(next()),
            "GT" => SortOp::Gt(next()),
            "GE" => SortOp::Ge(next()),
            "BEGINS_WITH" => SortOp::BeginsWith(next()),
            "BETWEEN" => SortOp::Between(next(), next()),
            _ => {
                return Err(ApiError::validation(
                    "Attempted conditional constraint is not an indexable operation",
                ));
            }
        };
        parts.push((name.clone(), op));
    }
    // The partition key can only be tested for equality.
    let not_supported = || ApiError::validation("Query key condition not supported");
    let equality = parts
        .iter()
        .position(|(_, op)| matches!(op, SortOp::Eq(_)))
        .ok_or_else(not_supported)?;
    let (partition_name, partition_op) = parts.remove(equality);
    let SortOp::Eq(partition_value) = partition_op else {
        return Err(not_supported());
    };
    let condition = KeyCondition::partition(partition_name, partition_value);
    Ok(Some(
        parts
            .into_iter()
            .fold(condition, |condition, (name, op)| condition.and(name, op)),
    ))
}

/// `AttributeUpdates`: each attribute's `Action` (PUT when absent) and
/// `Value`, as the update expression that does the same.
pub(crate) fn attribute_updates(members: Members<'_>) -> Result<Option<Update>, ApiError> {
    let Some(updates) = members.object("AttributeUpdates")? else {
        return Ok(None);
    };
    let mut update = Update::new();
    for (name, entry) in updates.0 {
        let entry = entry_members(entry, "AttributeUpdates")?;
        let action = entry
            .choice_at(
                "Action",
                &format!("attributeUpdates.{name}.member.action"),
                &["ADD", "PUT", "DELETE"],
            )?
            .unwrap_or("PUT");
        let value = entry.0.get("Value").filter(|v| !v.is_null());
        let value = value.map(value_from_json).transpose()?;
        let path = Path::attr(name.clone());
        update = match (action, value) {
            ("DELETE", None) => update.remove(name.clone()),
            ("DELETE", Some(value)) if is_set(&value) => {
                update.delete.push((path, value));
                update
            }
            ("DELETE", Some(value)) => {
                return Err(ApiError::validation(format!(
                    "{INVALID}DELETE action with value is not supported for the type {}",
                    value.attribute_type().as_str()
                )));
            }
            (_, None) => {
                return Err(ApiError::validation(format!(
                    "{INVALID}Only DELETE action is allowed when no attribute value is specified"
                )));
            }
            ("PUT", Some(value)) => update.set_value(name.clone(), value),
            ("ADD", Some(value @ AttributeValue::L(_))) => {
                // A legacy ADD of a list appends to it, as list_append does.
                let existing = UpdateOperand::IfNotExists(
                    path,
                    Box::new(UpdateOperand::Value(AttributeValue::L(Vec::new()))),
                );
                update.set(
                    name.clone(),
                    SetValue::Operand(UpdateOperand::ListAppend(
                        Box::new(existing),
                        Box::new(UpdateOperand::Value(value)),
                    )),
                )
            }
            ("ADD", Some(value)) if is_set(&value) || matches!(value, AttributeValue::N(_)) => {
                update.add(name.clone(), value)
            }
            (_, Some(value)) => {
                return Err(ApiError::validation(format!(
                    "{INVALID}ADD action is not supported for the type {}",
                    value.attribute_type().as_str()
                )));
            }
        };
    }
    Ok(Some(update))
}

fn entry_members<'a>(entry: &'a Value, member: &str) -> Result<Members<'a>, ApiError> {
    match entry {
        Value::Object(members) => Ok(Members(members)),
        _ => Err(ApiError::serialization(format!(
            "{member} values must be structures"
        ))),
    }
}

fn attribute_value_list(entry: Members<'_>) -> Result<Option<Vec<AttributeValue>>, ApiError> {
    entry
        .list("AttributeValueList")?
        .map(|values| values.iter().map(value_from_json).collect())
        .transpose()
}

/// `ConditionalOperator` (`operator`, one of its values), which needs
/// conditions to join (`joins`).
fn conditional_operator(operator: Option<&str>, joins: bool) -> Result<Comparison, ApiError> {
    if operator.is_some() && !joins {
        return Err(ApiError::validation(
            "ConditionalOperator cannot be used without Filter or Expected",
        ));
    }
    Ok(match operator {
        Some("OR") => Comparison::Or,
        _ => Comparison::And,
    })
}

/// Refuses a `ConditionalOperator` with no legacy conditions to join.
pub(crate) fn refuse_lone_operator(members: Members<'_>) -> Result<(), ApiError> {
    let operator = members.choice("ConditionalOperator", &CONDITIONAL_OPERATORS)?;
    conditional_operator(operator, false).map(|_| ())
}

/// An entry's `ComparisonOperator`, which DynamoDB requires and places by
/// the entry's path (`scanFilter.NAME`) when it is missing or unknown.
fn comparison_operator<'a>(entry: Members<'a>, at: &str) -> Result<&'a str, ApiError> {
    entry
        .choice_at(
            "ComparisonOperator",
            &format!("{at}.member.comparisonOperator"),
            &COMPARISON_OPERATORS,
        )?
        .ok_or_else(|| {
            validation_errors(&[format!(
                "Value null at '{at}.member.comparisonOperator' failed to satisfy constraint: Member must not be null"
            )])
        })
}

/// DynamoDB's comparison operators, in the order its messages list them.
const COMPARISON_OPERATORS: [&str; 13] = [
    "IN",
    "NULL",
    "BETWEEN",
    "LT",
    "NOT_CONTAINS",
    "EQ",
    "GT",
    "NOT_NULL",
    "NE",
    "LE",
    "BEGINS_WITH",
    "GE",
    "CONTAINS",
];

/// How the conditions of one legacy map are joined.
#[derive(Clone, Copy)]
enum Comparison {
    And,
    Or,
}

fn join(conditions: Vec<Condition>, operator: Comparison) -> Option<Condition> {
    conditions
        .into_iter()
        .reduce(|joined, next| match operator {
            Comparison::And => joined.and(next),
            Comparison::Or => joined.or(next),
        })
}

/// One entry of `Expected`: `Exists` and `Value`, or a comparison.
fn expected_condition(name: &str, entry: Members<'_>) -> Result<Condition, ApiError> {
    let value = entry.0.get("Value").filter(|v| !v.is_null());
    let value = value.map(value_from_json).transpose()?;
    let list = attribute_value_list(entry)?;
    let exists = match entry.0.get("Exists") {
        None | Some(Value::Null) => None,
        Some(_) => Some(entry.bool("Exists")?),
    };
    let operator = match entry.0.get("ComparisonOperator") {
        None | Some(Value::Null) => None,
        Some(_) => Some(comparison_operator(entry, &format!("expected.{name}"))?),
    };
    if let Some(operator) = operator {
        let values = match (value, list) {
            (Some(_), Some(_)) => {
                return Err(ApiError::request_fault(format!(
                    "{INVALID}Value and AttributeValueList cannot be used together for Attribute: {name}"
                )));
            }
            (Some(value), None) => vec![value],
            (None, Some(list)) => list,
            (None, None) if !matches!(operator, "NULL" | "NOT_NULL") => {
                return Err(ApiError::request_fault(format!(
                    "{INVALID}Value or AttributeValueList must be used with ComparisonOperator: {operator} for Attribute: {name}"
                )));
            }
            (None, None) => Vec::new(),
        };
        if exists.is_some() {
            return Err(ApiError::request_fault(format!(
                "{INVALID}Exists and ComparisonOperator cannot be used together for Attribute: {name}"
            )));
        }
        return comparison(name, operator, values);
    }
    if list.is_some() {
        return Err(ApiError::request_fault(format!(
            "{INVALID}AttributeValueList can only be used with a ComparisonOperator for Attribute: {name}"
        )));
    }
    match (exists, value) {
        (Some(false), Some(_)) => Err(ApiError::request_fault(format!(
            "{INVALID}Value cannot be used when Exists is false for Attribute: {name}"
        ))),
        (Some(false), None) => Ok(Condition::AttributeNotExists(Path::attr(name))),
        (Some(true), None) => Err(ApiError::request_fault(format!(
            "{INVALID}Value must be provided when Exists is true for Attribute: {name}"
        ))),
        (None, None) => Err(ApiError::request_fault(format!(
            "{INVALID}Value must be provided when Exists is null for Attribute: {name}"
        ))),
        (_, Some(value)) => comparison(name, "EQ", vec![value]),
    }
}

/// The number of values each comparison operator takes.
fn check_arguments(operator: &str, values: &[AttributeValue]) -> Result<(), ApiError> {
    let fits = match operator {
        "NULL" | "NOT_NULL" => values.is_empty(),
        "BETWEEN" => values.len() == 2,
        "IN" => !values.is_empty(),
        "EQ" | "NE" | "LT" | "LE" | "GT" | "GE" | "CONTAINS" | "NOT_CONTAINS" | "BEGINS_WITH" => {
            values.len() == 1
        }
        // Every operator is read through `comparison_operator`.
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(ApiError::request_fault(format!(
            "{INVALID}Invalid number of argument(s) for the {operator} ComparisonOperator"
        )))
    }
}

/// The types each comparison operator takes: ordering and containment
/// only scalars (begins_with only strings and binaries), equality any.
fn check_types(operator: &str, values: &[AttributeValue]) -> Result<(), ApiError> {
    let allowed = |value: &AttributeValue| match operator {
        "EQ" | "NE" => true,
        "BEGINS_WITH" => matches!(value, AttributeValue::S(_) | AttributeValue::B(_)),
        _ => matches!(
            value,
            AttributeValue::S(_) | AttributeValue::N(_) | AttributeValue::B(_)
        ),
    };
    match values.iter().find(|value| !allowed(value)) {
        Some(value) => Err(ApiError::validation(format!(
            "{INVALID}ComparisonOperator {operator} is not valid for {} AttributeValue type",
            value.attribute_type().as_str()
        ))),
        None => Ok(()),
    }
}

/// One legacy comparison of attribute `name` as the condition expression
/// that means the same.
fn comparison(
    name: &str,
    operator: &str,
    values: Vec<AttributeValue>,
) -> Result<Condition, ApiError> {
    check_arguments(operator, &values)?;
    check_types(operator, &values)?;
    let path = Path::attr(name);
    let attribute = || Operand::Path(path.clone());
    let mut operands: Vec<Operand> = values.into_iter().map(Operand::Value).collect();
    if operator == "IN" {
        return Ok(Condition::In(attribute(), operands));
    }
    // The argument count is checked: one value, or two for BETWEEN.
    let high = (operands.len() == 2).then(|| operands.remove(1));
    let value = operands
        .pop()
        .unwrap_or(Operand::Value(AttributeValue::Null));
    let compare = |comparator| Condition::compare(attribute(), comparator, value.clone());
    Ok(match operator {
        "EQ" => compare(Comparator::Eq),
        "NE" => compare(Comparator::Ne),
        "LT" => compare(Comparator::Lt),
        "LE" => compare(Comparator::Le),
        "GT" => compare(Comparator::Gt),
        "GE" => compare(Comparator::Ge),
        "NULL" => Condition::AttributeNotExists(path),
        "NOT_NULL" => Condition::AttributeExists(path),
        "CONTAINS" => Condition::Contains(path, value),
        // A missing attribute contains nothing, and fails NOT_CONTAINS too.
        "NOT_CONTAINS" => {
            Condition::AttributeExists(path.clone()).and(Condition::Contains(path, value).not())
        }
        "BEGINS_WITH" => Condition::BeginsWith(path, value),
        _ => Condition::Between(
            attribute(),
            value,
            high.unwrap_or(Operand::Value(AttributeValue::Null)),
        ),
    })
}

fn is_set(value: &AttributeValue) -> bool {
    matches!(
        value,
        AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
    )
}

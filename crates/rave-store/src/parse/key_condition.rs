//! KeyConditionExpression: read as a condition, then held to Query's rules,
//! comparisons joined by `AND`, each between one top-level attribute and
//! values (one or two for most keys, up to eight for a global secondary
//! index's key of several attributes):
//!
//! ```text
//! key = :v [AND sort (= | < | <= | > | >=) :v | sort BETWEEN :a AND :b | begins_with(sort, :v)]...
//! ```
//!
//! The parts may come in any order, and a value may stand left of its key
//! (`:v < sort` reads as `sort > :v`). The parser does not know the table's
//! key names: the first equality is taken as the partition key, the other
//! parts follow as written, and [`KeyCondition::bind`] holds them to the
//! schema.

use crate::{
    AttributeValue, Comparator, Condition, KeyCondition, MAX_INDEX_KEY_ATTRIBUTES, Operand,
    PathElement, SortKeyCondition, SortOp,
};

use super::error::ExpressionError;

/// One comparison of a key attribute with values.
struct KeyPart {
    name: String,
    op: SortOp,
}

pub(super) fn key_condition(condition: Condition) -> Result<KeyCondition, ExpressionError> {
    let mut parts = Vec::new();
    collect(condition, &mut parts)?;
    if parts.len() > 2 * MAX_INDEX_KEY_ATTRIBUTES {
        return Err(ExpressionError::KeyConditionLength);
    }
    let partition = parts
        .iter()
        .position(|part| matches!(part.op, SortOp::Eq(_)))
        .ok_or(ExpressionError::KeyConditionUnsupported)?;
    let partition = parts.remove(partition);
    let SortOp::Eq(partition_value) = partition.op else {
        return Err(ExpressionError::KeyConditionUnsupported);
    };
    let mut others = parts.into_iter().map(|part| SortKeyCondition {
        name: part.name,
        op: part.op,
    });
    Ok(KeyCondition {
        partition_name: partition.name,
        partition_value,
        sort: others.next(),
        more: others.collect(),
    })
}

fn invalid_operator(operator: &str) -> ExpressionError {
    ExpressionError::KeyConditionOperator {
        operator: operator.to_owned(),
    }
}

fn invalid(reason: &str) -> ExpressionError {
    ExpressionError::KeyConditionInvalid {
        reason: reason.to_owned(),
    }
}

fn collect(condition: Condition, parts: &mut Vec<KeyPart>) -> Result<(), ExpressionError> {
    let part = match condition {
        Condition::And(a, b) => {
            collect(*a, parts)?;
            return collect(*b, parts);
        }
        Condition::Or(..) => return Err(invalid_operator("OR")),
        Condition::Not(_) => return Err(invalid_operator("NOT")),
        Condition::In(..) => return Err(invalid_operator("IN")),
        Condition::Compare(_, Comparator::Ne, _) => return Err(invalid_operator("<>")),
        Condition::AttributeExists(_) => return Err(invalid_operator("attribute_exists")),
        Condition::AttributeNotExists(_) => return Err(invalid_operator("attribute_not_exists")),
        Condition::AttributeType(..) => return Err(invalid_operator("attribute_type")),
        Condition::Contains(..) => return Err(invalid_operator("contains")),
        Condition::Compare(left, comparator, right) => {
            let (name, mut values, key_first) = split_key([left, right])?;
            let value = values
                .pop()
                .ok_or_else(|| invalid("No key attribute specified"))?;
            let op = match (comparator, key_first) {
                (Comparator::Eq, _) => SortOp::Eq(value),
                (Comparator::Lt, true) | (Comparator::Gt, false) => SortOp::Lt(value),
                (Comparator::Le, true) | (Comparator::Ge, false) => SortOp::Le(value),
                (Comparator::Gt, true) | (Comparator::Lt, false) => SortOp::Gt(value),
                (Comparator::Ge, true) | (Comparator::Le, false) => SortOp::Ge(value),
                (Comparator::Ne, _) => return Err(invalid_operator("<>")),
            };
            KeyPart { name, op }
        }
        Condition::Between(key, low, high) => {
            if !matches!(key, Operand::Path(_)) {
                return Err(invalid(
                    "BETWEEN operator must have the key attribute as its first operand",
                ));
            }
            let (name, values, _) = split_key([key, low, high])?;
            let [low, high]: [_; 2] = values
                .try_into()
                .map_err(|_| invalid("No key attribute specified"))?;
            KeyPart {
                name,
                op: SortOp::Between(low, high),
            }
        }
        Condition::BeginsWith(path, prefix) => {
            let (name, mut values, _) = split_key([Operand::Path(path), prefix])?;
            let prefix = values
                .pop()
                .ok_or_else(|| invalid("No key attribute specified"))?;
            KeyPart {
                name,
                op: SortOp::BeginsWith(prefix),
            }
        }
    };
    if parts.iter().any(|p| p.name == part.name) {
        return Err(ExpressionError::KeyConditionRepeatedKey);
    }
    parts.push(part);
    Ok(())
}

/// The one key attribute among a comparison's operands, the values, and
/// whether the key came first.
fn split_key<const N: usize>(
    operands: [Operand; N],
) -> Result<(String, Vec<AttributeValue>, bool), ExpressionError> {
    let mut key = None;
    let mut values = Vec::new();
    for (i, operand) in operands.into_iter().enumerate() {
        match operand {
            Operand::Path(path) => {
                if key.is_some() {
                    return Err(invalid("Multiple attribute names used in one condition"));
                }
                let [PathElement::Attr(name)] = <[_; 1]>::try_from(path.0)
                    .map_err(|_| ExpressionError::KeyConditionNestedAttribute)?
                else {
                    return Err(ExpressionError::KeyConditionNestedAttribute);
                };
                key = Some((name, i == 0));
            }
            Operand::Size(_) => return Err(ExpressionError::KeyConditionNestedOperation),
            Operand::Value(value) => values.push(value),
        }
    }
    let (name, key_first) = key.ok_or_else(|| invalid("No key attribute specified"))?;
    Ok((name, values, key_first))
}

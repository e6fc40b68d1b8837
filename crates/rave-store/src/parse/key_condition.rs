//! KeyConditionExpression: read as a condition, then held to Query's rules,
//! one or two comparisons joined by `AND`, each between one top-level
//! attribute and values:
//!
//! ```text
//! key = :v [AND sort (= | < | <= | > | >=) :v | sort BETWEEN :a AND :b | begins_with(sort, :v)]
//! ```
//!
//! Either part may come first, and a value may stand left of its key
//! (`:v < sort` reads as `sort > :v`). The parser does not know the table's
//! key names: the equality is taken as the partition key, and where both
//! parts are equalities the first is, until the caller names the partition
//! key with [`KeyCondition::with_partition_key`].

use crate::{
    AttributeValue, Comparator, Condition, KeyCondition, Operand, PathElement, SortKeyCondition,
    SortOp,
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
    let mut parts = parts.into_iter();
    let (first, second) = (parts.next(), parts.next());
    if parts.next().is_some() {
        return Err(ExpressionError::KeyConditionLength);
    }
    let (partition, sort) = match (first, second) {
        (Some(first), None) => (first, None),
        (Some(first), Some(second)) if matches!(first.op, SortOp::Eq(_)) => (first, Some(second)),
        (Some(first), Some(second)) if matches!(second.op, SortOp::Eq(_)) => (second, Some(first)),
        _ => return Err(ExpressionError::KeyConditionUnsupported),
    };
    let SortOp::Eq(partition_value) = partition.op else {
        return Err(ExpressionError::KeyConditionUnsupported);
    };
    Ok(KeyCondition {
        partition_name: partition.name,
        partition_value,
        sort: sort.map(|part| SortKeyCondition {
            name: part.name,
            op: part.op,
        }),
    })
}

impl KeyCondition {
    /// Makes `partition_key` the partition part, for a condition whose two
    /// parts are both equalities (the parser takes the first as the
    /// partition key, not knowing the table's schema).
    pub fn with_partition_key(self, partition_key: &str) -> KeyCondition {
        match self.sort {
            Some(SortKeyCondition {
                name,
                op: SortOp::Eq(value),
            }) if name == partition_key && self.partition_name != partition_key => KeyCondition {
                partition_name: name,
                partition_value: value,
                sort: Some(SortKeyCondition {
                    name: self.partition_name,
                    op: SortOp::Eq(self.partition_value),
                }),
            },
            sort => KeyCondition { sort, ..self },
        }
    }
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

//! A Query's key condition held to the key schema it reads: equalities on
//! every partition attribute and on a prefix of the sort attributes, then
//! at most one comparison on the next sort attribute. That is what makes a
//! Query one contiguous range of keys, and DynamoDB refuses anything else.

use std::cmp::Ordering;

use crate::expr::{KeyCondition, SortOp, order};
use crate::schema::{
    KeyAttribute, KeySchema, KeyType, MAX_SORT_KEY_BYTES, SORT_KEY_TOO_LONG, empty_key_value,
    key_value_bytes,
};
use crate::value::{AttributeValue, Item};

/// A key condition bound to a key schema (see [`KeyCondition::bind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundKeyCondition<'a> {
    /// An equality on each partition attribute, then on a prefix of the
    /// sort attributes, in key order.
    pub equalities: Vec<(&'a KeyAttribute, &'a AttributeValue)>,
    /// A comparison other than equality on the sort attribute after that
    /// prefix.
    pub range: Option<(&'a KeyAttribute, &'a SortOp)>,
}

impl BoundKeyCondition<'_> {
    /// Whether the key attributes of `item` meet the condition.
    pub fn matches(&self, item: &Item) -> bool {
        self.equalities
            .iter()
            .all(|(attribute, value)| item.get(&attribute.name) == Some(*value))
            && self.range.is_none_or(|(attribute, op)| {
                item.get(&attribute.name).is_some_and(|v| op.matches(v))
            })
    }
}

const TYPE_MISMATCH: &str = "One or more parameter values were invalid: Condition parameter type does not match schema type";

impl KeyCondition {
    /// What this condition asks of each attribute of `schema` (the key of
    /// secondary index `index`, or of the table without one), checked the
    /// way DynamoDB checks a Query: the error is its message.
    pub fn bind<'a>(
        &'a self,
        schema: &'a KeySchema,
        index: Option<&str>,
    ) -> Result<BoundKeyCondition<'a>, String> {
        if !schema.is_multi_attribute() && !self.more.is_empty() {
            return Err(format!(
                "The number of query conditions ({}) exceeds the number of key attributes defined in the schema ({})",
                1 + usize::from(self.sort.is_some()) + self.more.len(),
                schema.attributes().count()
            ));
        }
        // A key of several attributes names every partition attribute
        // without an equality, a key of one the partition key.
        if schema.is_multi_attribute() {
            let unequal: Vec<&str> = schema
                .partition_attributes()
                .filter(|a| !matches!(self.on(&a.name), Some(Clause::Equal(_))))
                .map(|a| a.name.as_str())
                .collect();
            if !unequal.is_empty() {
                return Err(format!(
                    "HASH key attributes {} must have equality conditions specified in the query",
                    unequal.join(", ")
                ));
            }
        }
        let mut equalities = Vec::new();
        for attribute in schema.partition_attributes() {
            let Some(Clause::Equal(value)) = self.on(&attribute.name) else {
                return Err(format!(
                    "Query condition missed key schema element: {}",
                    attribute.name
                ));
            };
            if !attribute.key_type.matches(value) {
                return Err(TYPE_MISMATCH.into());
            }
            if let Some(refusal) = empty_key_value(value, &attribute.name, index) {
                return Err(refusal);
            }
            equalities.push((attribute, value));
        }
        if self
            .names()
            .any(|name| !schema.attributes().any(|a| a.name == name))
        {
            return Err("Query key condition not supported".into());
        }
        let sort: Vec<&KeyAttribute> = schema.sort_attributes().collect();
        let Some(last) = sort.iter().rposition(|a| self.on(&a.name).is_some()) else {
            return Ok(BoundKeyCondition {
                equalities,
                range: None,
            });
        };
        let gaps: Vec<&str> = sort[..last]
            .iter()
            .filter(|a| !matches!(self.on(&a.name), Some(Clause::Equal(_))))
            .map(|a| a.name.as_str())
            .collect();
        if !gaps.is_empty() {
            return Err(format!(
                "RANGE key attributes {} must have equality conditions specified in the query because a condition is present on key attribute {}",
                gaps.join(", "),
                sort[last].name
            ));
        }
        let mut range = None;
        for attribute in &sort[..=last] {
            let values = match self.on(&attribute.name) {
                None => continue,
                Some(Clause::Equal(value)) => {
                    equalities.push((*attribute, value));
                    vec![value]
                }
                Some(Clause::Compare(op)) => {
                    range = Some((*attribute, op));
                    op.values()
                }
            };
            if values.iter().any(|v| !attribute.key_type.matches(v)) {
                return Err(TYPE_MISMATCH.into());
            }
            // A sort key's values are held to what an item's may be.
            for value in values {
                if let Some(refusal) = empty_key_value(value, &attribute.name, index) {
                    return Err(refusal);
                }
                if key_value_bytes(value).is_some_and(|bytes| bytes > MAX_SORT_KEY_BYTES) {
                    return Err(SORT_KEY_TOO_LONG.into());
                }
            }
        }
        if let Some((attribute, op)) = range {
            if matches!(op, SortOp::BeginsWith(_)) && attribute.key_type == KeyType::N {
                return Err(
                    "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N".into(),
                );
            }
            if let SortOp::Between(low, high) = op
                && order(low, high) == Some(Ordering::Greater)
            {
                return Err(
                    "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound".into(),
                );
            }
        }
        Ok(BoundKeyCondition { equalities, range })
    }

    /// The condition on the attribute `name`.
    fn on(&self, name: &str) -> Option<Clause<'_>> {
        if self.partition_name == name {
            return Some(Clause::Equal(&self.partition_value));
        }
        let op = &self
            .sort
            .iter()
            .chain(&self.more)
            .find(|c| c.name == name)?
            .op;
        Some(match op {
            SortOp::Eq(value) => Clause::Equal(value),
            op => Clause::Compare(op),
        })
    }

    /// The attributes the condition names.
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.partition_name.as_str())
            .chain(self.sort.iter().chain(&self.more).map(|c| c.name.as_str()))
    }
}

/// The condition on one attribute.
enum Clause<'a> {
    Equal(&'a AttributeValue),
    /// Any comparison but equality.
    Compare(&'a SortOp),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> KeySchema {
        let s = |name: &str| KeyAttribute::new(name, KeyType::S);
        KeySchema::of(vec![s("h"), s("g")], vec![s("a"), s("b"), s("c")]).expect("a partition")
    }

    fn condition(clauses: &[(&str, SortOp)]) -> KeyCondition {
        let (first, rest) = clauses.split_first().expect("a clause");
        let SortOp::Eq(value) = &first.1 else {
            panic!("the first clause is an equality")
        };
        rest.iter().fold(
            KeyCondition::partition(first.0, value.clone()),
            |c, (n, op)| c.and(*n, op.clone()),
        )
    }

    fn eq(value: &str) -> SortOp {
        SortOp::Eq(AttributeValue::s(value))
    }

    #[test]
    fn equalities_on_every_partition_attribute_and_a_sort_prefix_bind_in_key_order() {
        let schema = schema();
        let bound = condition(&[
            ("g", eq("2")),
            ("b", SortOp::Gt(AttributeValue::s("m"))),
            ("a", eq("x")),
            ("h", eq("1")),
        ]);
        let bound = bound.bind(&schema, None).expect("a valid condition");
        let names: Vec<&str> = bound
            .equalities
            .iter()
            .map(|(a, _)| a.name.as_str())
            .collect();
        assert_eq!(names, ["h", "g", "a"]);
        assert_eq!(
            bound.range.map(|(a, op)| (a.name.as_str(), op.clone())),
            Some(("b", SortOp::Gt(AttributeValue::s("m"))))
        );
    }

    #[test]
    fn refusals_name_what_is_missing() {
        let schema = schema();
        let gt = || SortOp::Gt(AttributeValue::s("m"));
        let gap = |missing: &str, present: &str| {
            format!(
                "RANGE key attributes {missing} must have equality conditions specified in the query because a condition is present on key attribute {present}"
            )
        };
        for (clauses, message) in [
            (
                vec![("a", eq("x"))],
                "HASH key attributes h, g must have equality conditions specified in the query"
                    .to_owned(),
            ),
            (
                vec![("h", eq("1")), ("g", gt())],
                "HASH key attributes g must have equality conditions specified in the query"
                    .to_owned(),
            ),
            (
                vec![("h", eq("1")), ("g", eq("2")), ("z", eq("x"))],
                "Query key condition not supported".to_owned(),
            ),
            (
                vec![("h", eq("1")), ("g", eq("2")), ("a", eq("x")), ("c", eq("x"))],
                gap("b", "c"),
            ),
            (
                vec![("h", eq("1")), ("g", eq("2")), ("a", gt()), ("b", eq("x")), ("c", eq("y"))],
                gap("a", "c"),
            ),
            (
                vec![("h", eq("1")), ("g", eq("2")), ("c", eq("y"))],
                gap("a, b", "c"),
            ),
            (
                vec![("h", eq("1")), ("g", eq("")), ("a", eq("x"))],
                "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: g".to_owned(),
            ),
            (
                vec![("h", eq("1")), ("g", eq("2")), ("a", SortOp::Eq(AttributeValue::N("1".parse().expect("a number"))))],
                TYPE_MISMATCH.to_owned(),
            ),
        ] {
            assert_eq!(condition(&clauses).bind(&schema, None), Err(message), "{clauses:?}");
        }
        // A key of one attribute of each kind takes two conditions at most,
        // and names its partition key when it lacks it.
        let single = KeySchema::new(
            KeyAttribute::new("h", KeyType::S),
            Some(KeyAttribute::new("a", KeyType::S)),
        );
        assert_eq!(
            condition(&[("h", eq("1")), ("a", eq("x")), ("b", eq("y"))]).bind(&single, None),
            Err(
                "The number of query conditions (3) exceeds the number of key attributes defined in the schema (2)"
                    .to_owned()
            )
        );
        assert_eq!(
            condition(&[("a", eq("x"))]).bind(&single, None),
            Err("Query condition missed key schema element: h".to_owned())
        );
    }

    /// A sort key's condition values are held to what an item's sort key
    /// may be: not empty, at most 1,024 bytes (UTF-8); an index's key is
    /// named with its index.
    #[test]
    fn sort_key_values_are_refused_where_no_item_could_hold_them() {
        let single = KeySchema::new(
            KeyAttribute::new("h", KeyType::S),
            Some(KeyAttribute::new("a", KeyType::S)),
        );
        let on_sort = |op: SortOp, index: Option<&str>| {
            condition(&[("h", eq("1")), ("a", op)])
                .bind(&single, index)
                .map(|_| ())
        };
        let empty = "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: a";
        assert_eq!(on_sort(eq(""), None), Err(empty.to_owned()));
        assert_eq!(
            on_sort(SortOp::BeginsWith(AttributeValue::s("")), None),
            Err(empty.to_owned())
        );
        assert_eq!(
            on_sort(
                SortOp::Between(AttributeValue::s(""), AttributeValue::s("b")),
                None
            ),
            Err(empty.to_owned())
        );
        assert_eq!(
            on_sort(eq(""), Some("byA")),
            Err("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: byA, IndexKey: a".to_owned())
        );
        // 1,024 bytes pass, 1,025 do not, whichever the comparison.
        assert_eq!(on_sort(eq(&"é".repeat(512)), None), Ok(()));
        assert_eq!(
            on_sort(SortOp::Gt(AttributeValue::s("x".repeat(1025))), None),
            Err(SORT_KEY_TOO_LONG.to_owned())
        );
        assert_eq!(
            on_sort(
                SortOp::Between(AttributeValue::s("a"), AttributeValue::s("é".repeat(513))),
                None
            ),
            Err(SORT_KEY_TOO_LONG.to_owned())
        );
        // An empty partition key is named as the index's too.
        assert_eq!(
            condition(&[("h", eq(""))]).bind(&single, Some("byA")).map(|_| ()),
            Err("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: byA, IndexKey: h".to_owned())
        );
    }
}

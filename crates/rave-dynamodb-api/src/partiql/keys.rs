//! What a WHERE says about a table's (or an index's) key: the one item it
//! names by an equality on every key attribute, or, for a SELECT, whether
//! it fixes the partition key (a Query, its sort key condition taken too
//! where it has one) or not (a Scan of the whole table).
//!
//! Only the WHERE's top-level `AND`ed conditions count: `pk = 'a' OR pk =
//! 'b'` fixes nothing, and is a Scan's filter. A Query's filter may not
//! name a key attribute (DynamoDB's rule, which the engine holds it to), so
//! a WHERE that says more about the key than one key condition can carry
//! (two bounds on the sort key, an `OR` over it) reads as a Scan, whose
//! filter may.

use rave_store::{
    AttributeValue, Comparator, Condition, Item, KeyCondition, KeySchema, Operand, Path,
    PathElement, SortOp,
};

/// The item a WHERE names, and what the rest of the WHERE asks of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NamedItem {
    pub(crate) key: Item,
    pub(crate) rest: Option<Condition>,
}

/// How a SELECT reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Read {
    Query {
        key_condition: Box<KeyCondition>,
        filter: Option<Condition>,
    },
    Scan {
        filter: Option<Condition>,
    },
}

/// The item `condition` names by an equality on each of `schema`'s
/// attributes, if it does.
pub(crate) fn named_item(schema: &KeySchema, condition: Option<&Condition>) -> Option<NamedItem> {
    let conjuncts = conjuncts(condition);
    let mut key = Item::new();
    let mut used = Vec::new();
    for attribute in schema.attributes() {
        let (at, value) = equality_on(&conjuncts, &attribute.name)?;
        key.insert(attribute.name.clone(), value.clone());
        used.push(at);
    }
    Some(NamedItem {
        key,
        rest: and_all(without(&conjuncts, &used)),
    })
}

/// A Query when `condition` fixes every partition key attribute of
/// `schema`, otherwise a Scan.
pub(crate) fn read(schema: &KeySchema, condition: Option<&Condition>) -> Read {
    let scan = || Read::Scan {
        filter: condition.cloned(),
    };
    let conjuncts = conjuncts(condition);
    let mut used = Vec::new();
    let mut partition = Vec::new();
    for attribute in schema.partition_attributes() {
        let Some((at, value)) = equality_on(&conjuncts, &attribute.name) else {
            return scan();
        };
        used.push(at);
        partition.push((attribute.name.clone(), value.clone()));
    }
    let mut sort = None;
    if let (Some(attribute), true) = (&schema.sort, schema.more_sort.is_empty()) {
        let on_sort: Vec<usize> = (0..conjuncts.len())
            .filter(|&at| !used.contains(&at) && names(conjuncts[at], &attribute.name))
            .collect();
        match on_sort.as_slice() {
            [] => {}
            [at] => match sort_op(conjuncts[*at], &attribute.name) {
                Some(op) => {
                    used.push(*at);
                    sort = Some((attribute.name.clone(), op));
                }
                None => return scan(),
            },
            _ => return scan(),
        }
    }
    let rest = without(&conjuncts, &used);
    let names_a_key = rest.iter().any(|condition| {
        schema
            .attributes()
            .any(|attribute| names(condition, &attribute.name))
    });
    if names_a_key {
        return scan();
    }
    let mut partition = partition.into_iter();
    let Some((name, value)) = partition.next() else {
        return scan();
    };
    let mut key_condition = KeyCondition::partition(name, value);
    for (name, value) in partition {
        key_condition = key_condition.and(name, SortOp::Eq(value));
    }
    if let Some((name, op)) = sort {
        key_condition = key_condition.and(name, op);
    }
    Read::Query {
        key_condition: Box::new(key_condition),
        filter: and_all(rest),
    }
}

/// The top-level `AND`ed conditions.
fn conjuncts(condition: Option<&Condition>) -> Vec<&Condition> {
    fn split<'c>(condition: &'c Condition, out: &mut Vec<&'c Condition>) {
        match condition {
            Condition::And(left, right) => {
                split(left, out);
                split(right, out);
            }
            other => out.push(other),
        }
    }
    let mut out = Vec::new();
    if let Some(condition) = condition {
        split(condition, &mut out);
    }
    out
}

fn without(conjuncts: &[&Condition], used: &[usize]) -> Vec<Condition> {
    conjuncts
        .iter()
        .enumerate()
        .filter(|(at, _)| !used.contains(at))
        .map(|(_, condition)| (*condition).clone())
        .collect()
}

fn and_all(conditions: Vec<Condition>) -> Option<Condition> {
    conditions.into_iter().reduce(Condition::and)
}

/// The first `name = value` among `conjuncts`, and where it is.
fn equality_on<'c>(conjuncts: &[&'c Condition], name: &str) -> Option<(usize, &'c AttributeValue)> {
    conjuncts
        .iter()
        .enumerate()
        .find_map(|(at, condition)| match condition {
            Condition::Compare(Operand::Path(path), Comparator::Eq, Operand::Value(value))
            | Condition::Compare(Operand::Value(value), Comparator::Eq, Operand::Path(path))
                if is_attribute(path, name) =>
            {
                Some((at, value))
            }
            _ => None,
        })
}

/// `condition` as a sort key condition on `name`, if it is one.
fn sort_op(condition: &Condition, name: &str) -> Option<SortOp> {
    let compared = |comparator: Comparator, value: &AttributeValue| {
        let value = value.clone();
        Some(match comparator {
            Comparator::Eq => SortOp::Eq(value),
            Comparator::Lt => SortOp::Lt(value),
            Comparator::Le => SortOp::Le(value),
            Comparator::Gt => SortOp::Gt(value),
            Comparator::Ge => SortOp::Ge(value),
            Comparator::Ne => return None,
        })
    };
    match condition {
        Condition::Compare(Operand::Path(path), comparator, Operand::Value(value))
            if is_attribute(path, name) =>
        {
            compared(*comparator, value)
        }
        // `5 < sk` is `sk > 5`.
        Condition::Compare(Operand::Value(value), comparator, Operand::Path(path))
            if is_attribute(path, name) =>
        {
            let flipped = match comparator {
                Comparator::Lt => Comparator::Gt,
                Comparator::Le => Comparator::Ge,
                Comparator::Gt => Comparator::Lt,
                Comparator::Ge => Comparator::Le,
                other => *other,
            };
            compared(flipped, value)
        }
        Condition::Between(Operand::Path(path), Operand::Value(low), Operand::Value(high))
            if is_attribute(path, name) =>
        {
            Some(SortOp::Between(low.clone(), high.clone()))
        }
        Condition::BeginsWith(path, Operand::Value(prefix)) if is_attribute(path, name) => {
            Some(SortOp::BeginsWith(prefix.clone()))
        }
        _ => None,
    }
}

fn is_attribute(path: &Path, name: &str) -> bool {
    matches!(path.0.as_slice(), [PathElement::Attr(top)] if top == name)
}

/// Whether `condition` reads attribute `name`.
fn names(condition: &Condition, name: &str) -> bool {
    condition
        .paths()
        .iter()
        .any(|path| path.top() == Some(name))
}

#[cfg(test)]
mod tests {
    use rave_store::{KeyAttribute, KeyType, Number};

    use super::*;

    fn schema() -> KeySchema {
        KeySchema::new(
            KeyAttribute::new("pk", KeyType::S),
            Some(KeyAttribute::new("sk", KeyType::N)),
        )
    }

    fn number(n: &str) -> AttributeValue {
        AttributeValue::N(n.parse::<Number>().unwrap())
    }

    fn compare(name: &str, comparator: Comparator, value: AttributeValue) -> Condition {
        Condition::Compare(
            Operand::Path(Path::attr(name)),
            comparator,
            Operand::Value(value),
        )
    }

    #[test]
    fn an_equality_on_each_key_attribute_names_an_item() {
        let condition = Condition::eq("pk", "a")
            .and(compare("sk", Comparator::Eq, number("1")))
            .and(Condition::exists("n"));
        let named = named_item(&schema(), Some(&condition)).unwrap();
        assert_eq!(named.key["pk"], AttributeValue::S("a".into()));
        assert_eq!(named.key["sk"], number("1"));
        assert_eq!(named.rest, Some(Condition::exists("n")));
        assert_eq!(named_item(&schema(), Some(&Condition::eq("pk", "a"))), None);
        let either = Condition::eq("pk", "a").or(compare("sk", Comparator::Eq, number("1")));
        assert_eq!(named_item(&schema(), Some(&either)), None);
    }

    #[test]
    fn a_fixed_partition_key_is_a_query_and_anything_else_a_scan() {
        let condition = Condition::eq("pk", "a")
            .and(compare("sk", Comparator::Gt, number("1")))
            .and(Condition::exists("n"));
        assert_eq!(
            read(&schema(), Some(&condition)),
            Read::Query {
                key_condition: Box::new(
                    KeyCondition::partition("pk", "a").with_sort("sk", SortOp::Gt(number("1")))
                ),
                filter: Some(Condition::exists("n")),
            }
        );
        let two_bounds = Condition::eq("pk", "a")
            .and(compare("sk", Comparator::Gt, number("1")))
            .and(compare("sk", Comparator::Lt, number("5")));
        assert!(matches!(
            read(&schema(), Some(&two_bounds)),
            Read::Scan { .. }
        ));
        assert!(matches!(
            read(&schema(), Some(&compare("sk", Comparator::Eq, number("1")))),
            Read::Scan { .. }
        ));
        assert_eq!(read(&schema(), None), Read::Scan { filter: None });
    }
}

//! Typed condition, update and key-condition expressions, and how they
//! evaluate against an item.
//!
//! These are the trees DynamoDB's expression strings parse into. The
//! embedded engine evaluates them directly; the DynamoDB backend renders them
//! back to expression strings with placeholders. Evaluation follows
//! DynamoDB's rules: a comparison with a missing attribute is false except
//! `<>`, which is true; values of different types are never ordered.
//! `size()` measures a string in UTF-16 code units, as DynamoDB does, not in
//! the UTF-8 bytes that size an item.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::number::Number;
use crate::value::{AttributeType, AttributeValue, Item};

/// One step of a document path: a map key or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PathElement {
    Attr(String),
    Index(usize),
}

/// A document path such as `a.b[2]`; the first element names a top-level attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A top-level attribute.
    pub fn attr(name: impl Into<String>) -> Path {
        Path(vec![PathElement::Attr(name.into())])
    }

    pub fn key(mut self, name: impl Into<String>) -> Path {
        self.0.push(PathElement::Attr(name.into()));
        self
    }

    pub fn index(mut self, index: usize) -> Path {
        self.0.push(PathElement::Index(index));
        self
    }

    /// The top-level attribute this path starts from.
    pub fn top(&self) -> Option<&str> {
        match self.0.first() {
            Some(PathElement::Attr(name)) => Some(name),
            _ => None,
        }
    }

    /// Resolves the path in `item`.
    pub fn resolve<'a>(&self, item: &'a Item) -> Option<&'a AttributeValue> {
        let (first, rest) = self.0.split_first()?;
        let PathElement::Attr(name) = first else {
            return None;
        };
        let mut current = item.get(name)?;
        for element in rest {
            current = match (element, current) {
                (PathElement::Attr(k), AttributeValue::M(m)) => m.get(k)?,
                (PathElement::Index(i), AttributeValue::L(l)) => l.get(*i)?,
                _ => return None,
            };
        }
        Some(current)
    }

    /// Whether one path is a prefix of the other (DynamoDB rejects an update
    /// whose actions touch overlapping paths).
    fn overlaps(&self, other: &Path) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }
}

/// The parts of `item` a ProjectionExpression names, as DynamoDB returns
/// them: each path keeps its place in the document (`a.b` gives
/// `{a: {b: ..}}`), list elements picked by index come back in index order
/// with the others left out (`l[2], l[0]` of `[x, y, z]` gives `[x, z]`),
/// and a path that resolves to nothing adds nothing.
pub fn project(item: &Item, paths: &[Path]) -> Item {
    let mut wanted = Selection::Fields(BTreeMap::new());
    for path in paths {
        wanted.insert(&path.0);
    }
    let Selection::Fields(top) = wanted else {
        return item.clone();
    };
    top.iter()
        .filter_map(|(name, selection)| {
            let value = item.get(name)?;
            Some((name.clone(), selection.apply(value)?))
        })
        .collect()
}

/// Which parts of a value a projection keeps.
enum Selection {
    /// The whole value.
    Whole,
    /// Some entries of a map (or the attributes of the item).
    Fields(BTreeMap<String, Selection>),
    /// Some elements of a list.
    Elements(BTreeMap<usize, Selection>),
}

impl Selection {
    fn insert(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else {
            *self = Selection::Whole;
            return;
        };
        let child = match (&mut *self, first) {
            (Selection::Whole, _) => return,
            (Selection::Fields(fields), PathElement::Attr(name)) => fields
                .entry(name.clone())
                .or_insert_with(|| Selection::empty_for(rest)),
            (Selection::Elements(elements), PathElement::Index(i)) => elements
                .entry(*i)
                .or_insert_with(|| Selection::empty_for(rest)),
            // A map and a list at the same place cannot both match: the
            // parser refuses such conflicting paths, so keep the first.
            _ => return,
        };
        child.insert(rest);
    }

    fn empty_for(rest: &[PathElement]) -> Selection {
        match rest.first() {
            None => Selection::Whole,
            Some(PathElement::Attr(_)) => Selection::Fields(BTreeMap::new()),
            Some(PathElement::Index(_)) => Selection::Elements(BTreeMap::new()),
        }
    }

    fn apply(&self, value: &AttributeValue) -> Option<AttributeValue> {
        match (self, value) {
            (Selection::Whole, v) => Some(v.clone()),
            (Selection::Fields(fields), AttributeValue::M(map)) => {
                let kept: BTreeMap<String, AttributeValue> = fields
                    .iter()
                    .filter_map(|(name, s)| Some((name.clone(), s.apply(map.get(name)?)?)))
                    .collect();
                (!kept.is_empty()).then_some(AttributeValue::M(kept))
            }
            (Selection::Elements(elements), AttributeValue::L(list)) => {
                let kept: Vec<AttributeValue> = elements
                    .iter()
                    .filter_map(|(i, s)| s.apply(list.get(*i)?))
                    .collect();
                (!kept.is_empty()).then_some(AttributeValue::L(kept))
            }
            _ => None,
        }
    }
}

/// A value in a condition: an attribute, a literal, or `size(path)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    Path(Path),
    Value(AttributeValue),
    Size(Path),
}

impl Operand {
    pub fn attr(name: impl Into<String>) -> Operand {
        Operand::Path(Path::attr(name))
    }

    pub fn value(v: impl Into<AttributeValue>) -> Operand {
        Operand::Value(v.into())
    }

    fn resolve(&self, item: &Item) -> Option<AttributeValue> {
        match self {
            Operand::Path(p) => p.resolve(item).cloned(),
            Operand::Value(v) => Some(v.clone()),
            Operand::Size(p) => {
                let size = size_of(p.resolve(item)?)?;
                Some(AttributeValue::N(Number::from(size as u64)))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Comparator {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A condition expression (also used as a filter expression).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Condition {
    Compare(Operand, Comparator, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    AttributeExists(Path),
    AttributeNotExists(Path),
    AttributeType(Path, AttributeType),
    BeginsWith(Path, Operand),
    Contains(Path, Operand),
    And(Box<Condition>, Box<Condition>),
    Or(Box<Condition>, Box<Condition>),
    Not(Box<Condition>),
}

impl Condition {
    pub fn compare(left: Operand, op: Comparator, right: Operand) -> Condition {
        Condition::Compare(left, op, right)
    }

    /// `attribute = value`.
    pub fn eq(attribute: impl Into<String>, value: impl Into<AttributeValue>) -> Condition {
        Condition::Compare(
            Operand::attr(attribute),
            Comparator::Eq,
            Operand::value(value),
        )
    }

    pub fn exists(attribute: impl Into<String>) -> Condition {
        Condition::AttributeExists(Path::attr(attribute))
    }

    pub fn not_exists(attribute: impl Into<String>) -> Condition {
        Condition::AttributeNotExists(Path::attr(attribute))
    }

    pub fn and(self, other: Condition) -> Condition {
        Condition::And(Box::new(self), Box::new(other))
    }

    pub fn or(self, other: Condition) -> Condition {
        Condition::Or(Box::new(self), Box::new(other))
    }

    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Condition {
        Condition::Not(Box::new(self))
    }

    /// Every attribute path the condition reads, in the order written.
    pub fn paths(&self) -> Vec<&Path> {
        let mut paths = Vec::new();
        self.collect_paths(&mut paths);
        paths
    }

    fn collect_paths<'a>(&'a self, paths: &mut Vec<&'a Path>) {
        let operand = |o: &'a Operand, paths: &mut Vec<&'a Path>| match o {
            Operand::Path(p) | Operand::Size(p) => paths.push(p),
            Operand::Value(_) => {}
        };
        match self {
            Condition::Compare(l, _, r) => {
                operand(l, paths);
                operand(r, paths);
            }
            Condition::Between(v, lo, hi) => {
                for o in [v, lo, hi] {
                    operand(o, paths);
                }
            }
            Condition::In(v, list) => {
                operand(v, paths);
                for o in list {
                    operand(o, paths);
                }
            }
            Condition::AttributeExists(p)
            | Condition::AttributeNotExists(p)
            | Condition::AttributeType(p, _) => paths.push(p),
            Condition::BeginsWith(p, o) | Condition::Contains(p, o) => {
                paths.push(p);
                operand(o, paths);
            }
            Condition::And(a, b) | Condition::Or(a, b) => {
                a.collect_paths(paths);
                b.collect_paths(paths);
            }
            Condition::Not(c) => c.collect_paths(paths),
        }
    }

    /// Evaluates the condition against `item` (an empty item when there is none).
    pub fn evaluate(&self, item: &Item) -> bool {
        match self {
            Condition::Compare(l, op, r) => compare(l.resolve(item), *op, r.resolve(item)),
            Condition::Between(v, lo, hi) => {
                match (v.resolve(item), lo.resolve(item), hi.resolve(item)) {
                    (Some(v), Some(lo), Some(hi)) => {
                        order(&lo, &v).is_some_and(Ordering::is_le)
                            && order(&v, &hi).is_some_and(Ordering::is_le)
                    }
                    _ => false,
                }
            }
            Condition::In(v, list) => v
                .resolve(item)
                .is_some_and(|v| list.iter().any(|o| o.resolve(item).as_ref() == Some(&v))),
            Condition::AttributeExists(p) => p.resolve(item).is_some(),
            Condition::AttributeNotExists(p) => p.resolve(item).is_none(),
            Condition::AttributeType(p, t) => {
                p.resolve(item).is_some_and(|v| v.attribute_type() == *t)
            }
            Condition::BeginsWith(p, prefix) => match (p.resolve(item), prefix.resolve(item)) {
                (Some(AttributeValue::S(s)), Some(AttributeValue::S(pre))) => s.starts_with(&pre),
                (Some(AttributeValue::B(b)), Some(AttributeValue::B(pre))) => b.starts_with(&pre),
                _ => false,
            },
            Condition::Contains(p, needle) => match (p.resolve(item), needle.resolve(item)) {
                (Some(AttributeValue::S(s)), Some(AttributeValue::S(n))) => s.contains(n.as_str()),
                (Some(AttributeValue::B(b)), Some(AttributeValue::B(n))) => {
                    n.is_empty() || b.windows(n.len()).any(|w| w == n.as_slice())
                }
                (Some(AttributeValue::Ss(s)), Some(AttributeValue::S(n))) => s.contains(&n),
                (Some(AttributeValue::Ns(s)), Some(AttributeValue::N(n))) => s.contains(&n),
                (Some(AttributeValue::Bs(s)), Some(AttributeValue::B(n))) => s.contains(&n),
                (Some(AttributeValue::L(l)), Some(n)) => l.contains(&n),
                _ => false,
            },
            Condition::And(a, b) => a.evaluate(item) && b.evaluate(item),
            Condition::Or(a, b) => a.evaluate(item) || b.evaluate(item),
            Condition::Not(c) => !c.evaluate(item),
        }
    }
}

/// Orders two scalars of the same orderable type (S, N, B); `None` otherwise.
pub fn order(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    match (a, b) {
        (AttributeValue::S(a), AttributeValue::S(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        (AttributeValue::N(a), AttributeValue::N(b)) => Some(a.cmp(b)),
        (AttributeValue::B(a), AttributeValue::B(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

fn compare(left: Option<AttributeValue>, op: Comparator, right: Option<AttributeValue>) -> bool {
    let (Some(l), Some(r)) = (left, right) else {
        // A missing value equals nothing, so only `<>` holds.
        return op == Comparator::Ne;
    };
    match op {
        Comparator::Eq => l == r,
        Comparator::Ne => l != r,
        Comparator::Lt => order(&l, &r) == Some(Ordering::Less),
        Comparator::Le => order(&l, &r).is_some_and(Ordering::is_le),
        Comparator::Gt => order(&l, &r) == Some(Ordering::Greater),
        Comparator::Ge => order(&l, &r).is_some_and(Ordering::is_ge),
    }
}

/// What `size()` gives for a value: a string's length, a binary's bytes, a
/// collection's number of elements; nothing for the other types. DynamoDB
/// measures a string in UTF-16 code units (its Java length), not in the
/// UTF-8 bytes that size an item: `é` is 1, a character past U+FFFF is 2.
pub(crate) fn size_of(value: &AttributeValue) -> Option<usize> {
    Some(match value {
        AttributeValue::S(s) => s.encode_utf16().count(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::L(l) => l.len(),
        AttributeValue::M(m) => m.len(),
        AttributeValue::Ss(s) => s.len(),
        AttributeValue::Ns(s) => s.len(),
        AttributeValue::Bs(s) => s.len(),
        _ => return None,
    })
}

/// A key condition for Query: partition key equality and an optional
/// sort-key condition; on a key of several attributes (a global secondary
/// index's), the conditions on its other attributes too. The parser does
/// not know which attribute is which: the key schema sorts them out
/// ([`KeyCondition::bind`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyCondition {
    pub partition_name: String,
    pub partition_value: AttributeValue,
    pub sort: Option<SortKeyCondition>,
    /// The conditions after the first two, as written (empty for a key of
    /// one partition and one sort attribute).
    pub more: Vec<SortKeyCondition>,
}

impl KeyCondition {
    pub fn partition(name: impl Into<String>, value: impl Into<AttributeValue>) -> KeyCondition {
        KeyCondition {
            partition_name: name.into(),
            partition_value: value.into(),
            sort: None,
            more: Vec::new(),
        }
    }

    pub fn with_sort(mut self, name: impl Into<String>, op: SortOp) -> KeyCondition {
        self.sort = Some(SortKeyCondition {
            name: name.into(),
            op,
        });
        self
    }

    /// Adds a condition on one more attribute of a key of several.
    pub fn and(mut self, name: impl Into<String>, op: SortOp) -> KeyCondition {
        let condition = SortKeyCondition {
            name: name.into(),
            op,
        };
        match self.sort {
            None => self.sort = Some(condition),
            Some(_) => self.more.push(condition),
        }
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SortKeyCondition {
    pub name: String,
    pub op: SortOp,
}

/// The sort-key comparisons Query allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SortOp {
    Eq(AttributeValue),
    Lt(AttributeValue),
    Le(AttributeValue),
    Gt(AttributeValue),
    Ge(AttributeValue),
    Between(AttributeValue, AttributeValue),
    BeginsWith(AttributeValue),
}

impl SortOp {
    /// The literal values the condition uses.
    pub fn values(&self) -> Vec<&AttributeValue> {
        match self {
            SortOp::Eq(v)
            | SortOp::Lt(v)
            | SortOp::Le(v)
            | SortOp::Gt(v)
            | SortOp::Ge(v)
            | SortOp::BeginsWith(v) => {
                vec![v]
            }
            SortOp::Between(a, b) => vec![a, b],
        }
    }

    /// Whether a sort-key value satisfies the condition.
    pub fn matches(&self, value: &AttributeValue) -> bool {
        let cmp = |bound: &AttributeValue| order(value, bound);
        match self {
            SortOp::Eq(v) => cmp(v) == Some(Ordering::Equal),
            SortOp::Lt(v) => cmp(v) == Some(Ordering::Less),
            SortOp::Le(v) => cmp(v).is_some_and(Ordering::is_le),
            SortOp::Gt(v) => cmp(v) == Some(Ordering::Greater),
            SortOp::Ge(v) => cmp(v).is_some_and(Ordering::is_ge),
            SortOp::Between(lo, hi) => {
                cmp(lo).is_some_and(Ordering::is_ge) && cmp(hi).is_some_and(Ordering::is_le)
            }
            SortOp::BeginsWith(prefix) => match (value, prefix) {
                (AttributeValue::S(s), AttributeValue::S(p)) => s.starts_with(p.as_str()),
                (AttributeValue::B(b), AttributeValue::B(p)) => b.starts_with(p),
                _ => false,
            },
        }
    }
}

/// An operand on the right of `SET path = ...`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UpdateOperand {
    Path(Path),
    Value(AttributeValue),
    /// `if_not_exists(path, operand)`: the attribute if present, else the operand.
    IfNotExists(Path, Box<UpdateOperand>),
    /// `list_append(a, b)`.
    ListAppend(Box<UpdateOperand>, Box<UpdateOperand>),
}

/// The value assigned by a `SET` action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SetValue {
    Operand(UpdateOperand),
    Plus(UpdateOperand, UpdateOperand),
    Minus(UpdateOperand, UpdateOperand),
}

impl SetValue {
    pub fn value(v: impl Into<AttributeValue>) -> SetValue {
        SetValue::Operand(UpdateOperand::Value(v.into()))
    }
}

/// An update expression: `SET ... REMOVE ... ADD ... DELETE ...`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Update {
    pub set: Vec<(Path, SetValue)>,
    pub remove: Vec<Path>,
    pub add: Vec<(Path, AttributeValue)>,
    pub delete: Vec<(Path, AttributeValue)>,
}

/// Why an update expression cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UpdateError(pub String);

fn update_error(msg: impl Into<String>) -> UpdateError {
    UpdateError(msg.into())
}

impl Update {
    pub fn new() -> Update {
        Update::default()
    }

    pub fn set(mut self, attribute: impl Into<String>, value: SetValue) -> Update {
        self.set.push((Path::attr(attribute), value));
        self
    }

    pub fn set_value(
        self,
        attribute: impl Into<String>,
        value: impl Into<AttributeValue>,
    ) -> Update {
        self.set(attribute, SetValue::value(value))
    }

    pub fn remove(mut self, attribute: impl Into<String>) -> Update {
        self.remove.push(Path::attr(attribute));
        self
    }

    pub fn add(mut self, attribute: impl Into<String>, value: impl Into<AttributeValue>) -> Update {
        self.add.push((Path::attr(attribute), value.into()));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
            && self.remove.is_empty()
            && self.add.is_empty()
            && self.delete.is_empty()
    }

    /// Every path the update writes.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.set
            .iter()
            .map(|(p, _)| p)
            .chain(&self.remove)
            .chain(self.add.iter().map(|(p, _)| p))
            .chain(self.delete.iter().map(|(p, _)| p))
    }

    /// Checks the expression itself, independent of any item.
    pub fn validate(&self) -> Result<(), UpdateError> {
        if self.is_empty() {
            return Err(update_error("the update expression has no actions"));
        }
        let paths: Vec<&Path> = self.paths().collect();
        for (i, a) in paths.iter().enumerate() {
            if a.top().is_none() {
                return Err(update_error(
                    "a document path must start with an attribute name",
                ));
            }
            if paths[i + 1..].iter().any(|b| a.overlaps(b)) {
                return Err(update_error(format!(
                    "Two document paths overlap with each other; must remove or rewrite one of these paths: {a:?}"
                )));
            }
        }
        for (_, v) in &self.add {
            if !matches!(
                v,
                AttributeValue::N(_)
                    | AttributeValue::Ss(_)
                    | AttributeValue::Ns(_)
                    | AttributeValue::Bs(_)
            ) {
                return Err(update_error(
                    "Incorrect operand type for operator or function; operator: ADD, operand type: must be a number or a set",
                ));
            }
        }
        for (_, v) in &self.delete {
            if !matches!(
                v,
                AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
            ) {
                return Err(update_error(
                    "Incorrect operand type for operator or function; operator: DELETE, operand type: must be a set",
                ));
            }
        }
        Ok(())
    }

    /// Applies the update to `old` (an empty item when the item does not
    /// exist yet). Every right-hand side reads the old item, as in DynamoDB.
    pub fn apply(&self, old: &Item) -> Result<Item, UpdateError> {
        self.validate()?;
        let mut new = old.clone();
        // A path that cannot be written is reported before a value that
        // cannot be read, as DynamoDB does. Checking against the old item is
        // enough: no other path of the expression may create its parent.
        for (path, _) in &self.set {
            check_writable(old, path)?;
        }
        let assignments = self
            .set
            .iter()
            .map(|(path, value)| Ok((path, eval_set(value, old)?)))
            .collect::<Result<Vec<_>, UpdateError>>()?;
        for (path, value) in assignments {
            assign(&mut new, path, value)?;
        }
        for (path, value) in &self.add {
            let updated = match path.resolve(old) {
                None => value.clone(),
                Some(current) => add_values(current, value)?,
            };
            assign(&mut new, path, updated)?;
        }
        for (path, value) in &self.delete {
            let Some(current) = path.resolve(old) else {
                continue;
            };
            match subtract_set(current, value)? {
                Some(rest) => assign(&mut new, path, rest)?,
                None => remove(&mut new, path),
            }
        }
        // Remove list elements from the highest index down so earlier
        // removals do not shift later ones.
        let mut removals: Vec<&Path> = self.remove.iter().collect();
        removals.sort_by(|a, b| b.0.cmp_elements(&a.0));
        for path in removals {
            remove(&mut new, path);
        }
        Ok(new)
    }
}

trait ElementOrder {
    fn cmp_elements(&self, other: &Self) -> Ordering;
}

impl ElementOrder for Vec<PathElement> {
    fn cmp_elements(&self, other: &Self) -> Ordering {
        for (a, b) in self.iter().zip(other) {
            let o = match (a, b) {
                (PathElement::Index(x), PathElement::Index(y)) => x.cmp(y),
                (PathElement::Attr(x), PathElement::Attr(y)) => x.cmp(y),
                (PathElement::Attr(_), PathElement::Index(_)) => Ordering::Less,
                (PathElement::Index(_), PathElement::Attr(_)) => Ordering::Greater,
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        self.len().cmp(&other.len())
    }
}

fn eval_operand(op: &UpdateOperand, item: &Item) -> Result<AttributeValue, UpdateError> {
    match op {
        UpdateOperand::Value(v) => Ok(v.clone()),
        UpdateOperand::Path(p) => p.resolve(item).cloned().ok_or_else(|| {
            update_error(
                "The provided expression refers to an attribute that does not exist in the item",
            )
        }),
        UpdateOperand::IfNotExists(p, fallback) => match p.resolve(item) {
            Some(v) => Ok(v.clone()),
            None => eval_operand(fallback, item),
        },
        UpdateOperand::ListAppend(a, b) => match (eval_operand(a, item)?, eval_operand(b, item)?) {
            (AttributeValue::L(mut a), AttributeValue::L(b)) => {
                a.extend(b);
                Ok(AttributeValue::L(a))
            }
            _ => Err(update_error(
                "Incorrect operand type for operator or function; operator or function: list_append",
            )),
        },
    }
}

fn eval_set(value: &SetValue, item: &Item) -> Result<AttributeValue, UpdateError> {
    let numbers =
        |a: &UpdateOperand, b: &UpdateOperand, op: &str| -> Result<(Number, Number), UpdateError> {
            match (eval_operand(a, item)?, eval_operand(b, item)?) {
                (AttributeValue::N(a), AttributeValue::N(b)) => Ok((a, b)),
                _ => Err(update_error(format!(
                    "An operand in the update expression has an incorrect data type; operator: {op}"
                ))),
            }
        };
    match value {
        SetValue::Operand(op) => eval_operand(op, item),
        SetValue::Plus(a, b) => {
            let (a, b) = numbers(a, b, "+")?;
            a.checked_add(&b)
                .map(AttributeValue::N)
                .map_err(|e| update_error(e.to_string()))
        }
        SetValue::Minus(a, b) => {
            let (a, b) = numbers(a, b, "-")?;
            a.checked_sub(&b)
                .map(AttributeValue::N)
                .map_err(|e| update_error(e.to_string()))
        }
    }
}

fn add_values(
    current: &AttributeValue,
    value: &AttributeValue,
) -> Result<AttributeValue, UpdateError> {
    fn union<T: Ord + Clone>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> BTreeSet<T> {
        a.union(b).cloned().collect()
    }
    match (current, value) {
        (AttributeValue::N(a), AttributeValue::N(b)) => a
            .checked_add(b)
            .map(AttributeValue::N)
            .map_err(|e| update_error(e.to_string())),
        (AttributeValue::Ss(a), AttributeValue::Ss(b)) => Ok(AttributeValue::Ss(union(a, b))),
        (AttributeValue::Ns(a), AttributeValue::Ns(b)) => Ok(AttributeValue::Ns(union(a, b))),
        (AttributeValue::Bs(a), AttributeValue::Bs(b)) => Ok(AttributeValue::Bs(union(a, b))),
        _ => Err(update_error(
            "An operand in the update expression has an incorrect data type; operator: ADD",
        )),
    }
}

/// `current - value` for sets; `None` when nothing is left.
fn subtract_set(
    current: &AttributeValue,
    value: &AttributeValue,
) -> Result<Option<AttributeValue>, UpdateError> {
    fn diff<T: Ord + Clone>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> BTreeSet<T> {
        a.difference(b).cloned().collect()
    }
    let rest = match (current, value) {
        (AttributeValue::Ss(a), AttributeValue::Ss(b)) => AttributeValue::Ss(diff(a, b)),
        (AttributeValue::Ns(a), AttributeValue::Ns(b)) => AttributeValue::Ns(diff(a, b)),
        (AttributeValue::Bs(a), AttributeValue::Bs(b)) => AttributeValue::Bs(diff(a, b)),
        _ => {
            return Err(update_error(
                "An operand in the update expression has an incorrect data type; operator: DELETE",
            ));
        }
    };
    Ok(match &rest {
        AttributeValue::Ss(s) if s.is_empty() => None,
        AttributeValue::Ns(s) if s.is_empty() => None,
        AttributeValue::Bs(s) if s.is_empty() => None,
        _ => Some(rest),
    })
}

/// Whether `assign` can write `path` in `item`: a top-level attribute, or
/// a member of a map or an element of a list that exists.
fn check_writable(item: &Item, path: &Path) -> Result<(), UpdateError> {
    let writable = match path.0.split_last() {
        Some((PathElement::Attr(_), [])) => true,
        Some((last, parent)) => matches!(
            (last, Path(parent.to_vec()).resolve(item)),
            (PathElement::Attr(_), Some(AttributeValue::M(_)))
                | (PathElement::Index(_), Some(AttributeValue::L(_)))
        ),
        None => false,
    };
    if writable {
        Ok(())
    } else {
        Err(unwritable_path())
    }
}

fn unwritable_path() -> UpdateError {
    update_error("The document path provided in the update expression is invalid for update")
}

fn assign(item: &mut Item, path: &Path, value: AttributeValue) -> Result<(), UpdateError> {
    let invalid = unwritable_path;
    let Some((PathElement::Attr(first), rest)) = path.0.split_first() else {
        return Err(invalid());
    };
    let Some((last, middle)) = rest.split_last() else {
        item.insert(first.clone(), value);
        return Ok(());
    };
    let mut current = item.get_mut(first).ok_or_else(invalid)?;
    for element in middle {
        current = match (element, current) {
            (PathElement::Attr(k), AttributeValue::M(m)) => m.get_mut(k).ok_or_else(invalid)?,
            (PathElement::Index(i), AttributeValue::L(l)) => l.get_mut(*i).ok_or_else(invalid)?,
            _ => return Err(invalid()),
        };
    }
    match (last, current) {
        (PathElement::Attr(k), AttributeValue::M(m)) => {
            m.insert(k.clone(), value);
        }
        (PathElement::Index(i), AttributeValue::L(l)) => {
            // DynamoDB appends when the index is past the end.
            if *i < l.len() {
                l[*i] = value;
            } else {
                l.push(value);
            }
        }
        _ => return Err(invalid()),
    }
    Ok(())
}

fn remove(item: &mut Item, path: &Path) {
    let Some((PathElement::Attr(first), rest)) = path.0.split_first() else {
        return;
    };
    let Some((last, middle)) = rest.split_last() else {
        item.remove(first);
        return;
    };
    let Some(mut current) = item.get_mut(first) else {
        return;
    };
    for element in middle {
        let next = match (element, current) {
            (PathElement::Attr(k), AttributeValue::M(m)) => m.get_mut(k),
            (PathElement::Index(i), AttributeValue::L(l)) => l.get_mut(*i),
            _ => None,
        };
        let Some(next) = next else {
            return;
        };
        current = next;
    }
    match (last, current) {
        (PathElement::Attr(k), AttributeValue::M(m)) => {
            m.remove(k);
        }
        (PathElement::Index(i), AttributeValue::L(l)) if *i < l.len() => {
            l.remove(*i);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item;

    #[test]
    fn projection_keeps_nested_paths_in_place_and_compacts_lists() {
        let item = item! {
            "a" => AttributeValue::M(item! {"b" => 1i64, "c" => 2i64}),
            "l" => AttributeValue::L(vec!["x".into(), "y".into(), "z".into()]),
            "s" => "kept",
            "gone" => "not asked for",
        };
        let paths = [
            Path::attr("a").key("b"),
            Path::attr("l").index(2),
            Path::attr("l").index(0),
            Path::attr("s"),
            Path::attr("missing").key("x"),
            Path::attr("a").key("nothing"),
        ];
        assert_eq!(
            project(&item, &paths),
            item! {
                "a" => AttributeValue::M(item! {"b" => 1i64}),
                "l" => AttributeValue::L(vec!["x".into(), "z".into()]),
                "s" => "kept",
            }
        );
        // A path into a scalar, or past the end of a list, adds nothing.
        let nothing = [Path::attr("s").key("x"), Path::attr("l").index(9)];
        assert_eq!(project(&item, &nothing), Item::new());
        // A whole attribute wins over a path inside it, in either order.
        let whole = [Path::attr("a").key("b"), Path::attr("a")];
        assert_eq!(project(&item, &whole)["a"], item["a"]);
    }

    #[test]
    fn a_condition_lists_every_path_it_reads() {
        let condition = Condition::eq("a", 1i64)
            .and(Condition::exists("b").or(Condition::BeginsWith(
                Path::attr("c").key("d"),
                Operand::Size(Path::attr("e")),
            )))
            .not();
        let tops: Vec<_> = condition.paths().iter().filter_map(|p| p.top()).collect();
        assert_eq!(tops, ["a", "b", "c", "e"]);
    }

    #[test]
    fn missing_attributes_fail_every_comparison_but_not_equal() {
        let it = item! {"a" => 1i64};
        for (op, expected) in [
            (Comparator::Eq, false),
            (Comparator::Ne, true),
            (Comparator::Lt, false),
            (Comparator::Le, false),
            (Comparator::Gt, false),
            (Comparator::Ge, false),
        ] {
            let c = Condition::compare(Operand::attr("missing"), op, Operand::value(1i64));
            assert_eq!(c.evaluate(&it), expected, "{op:?}");
        }
        let both_missing =
            Condition::compare(Operand::attr("x"), Comparator::Ne, Operand::attr("y"));
        assert!(both_missing.evaluate(&it));
    }

    #[test]
    fn a_strings_size_counts_utf16_code_units_not_bytes() {
        // "é" is 2 UTF-8 bytes and 1 code unit; U+1D11E is 4 bytes and 2 code units.
        let it = item! {"s" => "\u{e9}\u{1d11e}", "ascii" => "rave"};
        let size_is = |name: &str, n: i64| {
            Condition::compare(
                Operand::Size(Path::attr(name)),
                Comparator::Eq,
                Operand::value(n),
            )
            .evaluate(&it)
        };
        assert!(size_is("s", 3));
        assert!(!size_is("s", 6));
        assert!(size_is("ascii", 4));
        assert_eq!(size_of(&AttributeValue::B(vec![0xc3, 0xa9])), Some(2));
    }

    #[test]
    fn different_types_are_never_ordered() {
        let it = item! {"a" => "10"};
        let c = Condition::compare(Operand::attr("a"), Comparator::Lt, Operand::value(20i64));
        assert!(!c.evaluate(&it));
        let c = Condition::compare(Operand::attr("a"), Comparator::Ne, Operand::value(10i64));
        assert!(c.evaluate(&it));
    }

    #[test]
    fn functions_and_logic() {
        let it = item! {"name" => "rave", "tags" => AttributeValue::Ss(["a".to_string()].into()), "n" => 5i64};
        assert!(Condition::BeginsWith(Path::attr("name"), Operand::value("ra")).evaluate(&it));
        assert!(Condition::Contains(Path::attr("tags"), Operand::value("a")).evaluate(&it));
        assert!(
            Condition::Between(
                Operand::attr("n"),
                Operand::value(1i64),
                Operand::value(5i64)
            )
            .evaluate(&it)
        );
        assert!(
            Condition::In(
                Operand::attr("n"),
                vec![Operand::value(4i64), Operand::value(5i64)]
            )
            .evaluate(&it)
        );
        assert!(
            Condition::compare(
                Operand::Size(Path::attr("name")),
                Comparator::Eq,
                Operand::value(4i64)
            )
            .evaluate(&it)
        );
        assert!(
            Condition::exists("n")
                .and(Condition::not_exists("zz"))
                .evaluate(&it)
        );
        assert!(
            !Condition::exists("zz")
                .or(Condition::exists("n").not())
                .evaluate(&it)
        );
        assert!(Condition::AttributeType(Path::attr("tags"), AttributeType::Ss).evaluate(&it));
    }

    #[test]
    fn update_reads_old_values_and_adds() {
        let old = item! {"a" => 1i64, "b" => 2i64, "gone" => "x"};
        let update = Update::new()
            .set("a", SetValue::Operand(UpdateOperand::Path(Path::attr("b"))))
            .set(
                "b",
                SetValue::Plus(
                    UpdateOperand::Path(Path::attr("a")),
                    UpdateOperand::Value(10i64.into()),
                ),
            )
            .set(
                "c",
                SetValue::Operand(UpdateOperand::IfNotExists(
                    Path::attr("c"),
                    Box::new(UpdateOperand::Value("init".into())),
                )),
            )
            .add("counter", 3i64)
            .remove("gone");
        let new = update.apply(&old).unwrap();
        assert_eq!(
            new,
            item! {"a" => 2i64, "b" => 11i64, "c" => "init", "counter" => 3i64}
        );
        let again = Update::new().add("counter", -1i64).apply(&new).unwrap();
        assert_eq!(again["counter"], AttributeValue::from(2i64));
    }

    #[test]
    fn update_rejects_overlaps_and_bad_types() {
        let overlapping = Update::new().set_value("a", 1i64).remove("a");
        assert!(overlapping.apply(&Item::new()).is_err());
        let bad_add = Update::new().add("a", "text");
        assert!(bad_add.apply(&Item::new()).is_err());
        let plus_on_string = Update::new().set(
            "a",
            SetValue::Plus(
                UpdateOperand::Value("x".into()),
                UpdateOperand::Value(1i64.into()),
            ),
        );
        assert!(plus_on_string.apply(&Item::new()).is_err());
        let missing_rhs = Update::new().set(
            "a",
            SetValue::Operand(UpdateOperand::Path(Path::attr("nope"))),
        );
        assert!(missing_rhs.apply(&Item::new()).is_err());
    }

    #[test]
    fn nested_paths_and_set_delete() {
        let old = item! {
            "m" => AttributeValue::M(item! {"x" => 1i64}),
            "l" => AttributeValue::L(vec!["a".into(), "b".into(), "c".into()]),
            "s" => AttributeValue::Ss(["p".to_string(), "q".to_string()].into()),
        };
        let mut update = Update::new();
        update
            .set
            .push((Path::attr("m").key("y"), SetValue::value(2i64)));
        update.remove.push(Path::attr("l").index(0));
        update.remove.push(Path::attr("l").index(2));
        update.delete.push((
            Path::attr("s"),
            AttributeValue::Ss(["p".to_string(), "q".to_string()].into()),
        ));
        let new = update.apply(&old).unwrap();
        assert_eq!(
            new["m"],
            AttributeValue::M(item! {"x" => 1i64, "y" => 2i64})
        );
        assert_eq!(new["l"], AttributeValue::L(vec!["b".into()]));
        assert!(!new.contains_key("s"), "an emptied set is removed");
    }

    #[test]
    fn sort_key_conditions() {
        let v = AttributeValue::from("2026-11-21");
        assert!(SortOp::BeginsWith("2026-11".into()).matches(&v));
        assert!(SortOp::Between("2026".into(), "2027".into()).matches(&v));
        assert!(!SortOp::Lt("2026".into()).matches(&v));
        assert!(!SortOp::Eq(AttributeValue::from(5i64)).matches(&v));
    }
}

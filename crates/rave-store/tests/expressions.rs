//! The parser against the renderer: any typed tree DynamoDB would accept,
//! rendered to an expression string with placeholders and parsed back with
//! the placeholder maps the renderer produced, is the same tree, and every
//! placeholder counts as used. And no string, however malformed, panics the
//! parser.
//!
//! No normalisation is needed: the renderer parenthesises every operand of
//! `AND`, `OR` and `NOT` and writes the partition key first, so precedence
//! and order come back as they went in. The generated trees keep to the
//! rules DynamoDB checks before it reads an item (see `acceptable`), since a
//! tree that breaks one renders to a string DynamoDB, and so the parser,
//! refuses.

use std::collections::HashMap;

use proptest::prelude::*;
use rave_store::{
    AttributeType, AttributeValue, Comparator, Condition, ExpressionParser, KeyCondition, Number,
    Operand, Path, PathElement, Renderer, SetValue, SortOp, Update, UpdateOperand, order,
};

/// Attribute names of every kind: reserved words, characters that need a
/// placeholder, and names shared between branches (so placeholders repeat).
fn name() -> BoxedStrategy<String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("status".to_owned()),
        Just("PK".to_owned()),
        "[a-z]{1,4}",
        "[ -~]{1,6}",
        "\\PC{1,4}",
    ]
    .boxed()
}

fn path() -> BoxedStrategy<Path> {
    let element = prop_oneof![
        name().prop_map(PathElement::Attr),
        (0usize..20).prop_map(PathElement::Index),
    ];
    (name(), prop::collection::vec(element, 0..3))
        .prop_map(|(top, rest)| {
            let mut elements = vec![PathElement::Attr(top)];
            elements.extend(rest);
            Path(elements)
        })
        .boxed()
}

fn scalar() -> BoxedStrategy<AttributeValue> {
    prop_oneof![
        "[a-z]{0,4}".prop_map(AttributeValue::S),
        any::<i64>().prop_map(|n| AttributeValue::N(Number::from(n))),
        prop::collection::vec(any::<u8>(), 0..4).prop_map(AttributeValue::B),
    ]
    .boxed()
}

fn value() -> BoxedStrategy<AttributeValue> {
    prop_oneof![
        4 => scalar(),
        1 => any::<bool>().prop_map(AttributeValue::Bool),
        1 => Just(AttributeValue::Null),
        1 => prop::collection::vec(scalar(), 0..3).prop_map(AttributeValue::L),
        1 => prop::collection::btree_set("[a-z]{1,3}", 1..3).prop_map(AttributeValue::Ss),
        1 => prop::collection::btree_set(any::<i32>().prop_map(|n| Number::from(i64::from(n))), 1..3)
            .prop_map(AttributeValue::Ns),
    ]
    .boxed()
}

fn operand() -> BoxedStrategy<Operand> {
    prop_oneof![
        path().prop_map(Operand::Path),
        value().prop_map(Operand::Value),
        path().prop_map(Operand::Size),
    ]
    .boxed()
}

fn attribute_type() -> BoxedStrategy<AttributeType> {
    prop::sample::select(vec![
        AttributeType::S,
        AttributeType::N,
        AttributeType::B,
        AttributeType::Bool,
        AttributeType::Null,
        AttributeType::L,
        AttributeType::M,
        AttributeType::Ss,
        AttributeType::Ns,
        AttributeType::Bs,
    ])
    .boxed()
}

fn comparator() -> BoxedStrategy<Comparator> {
    prop::sample::select(vec![
        Comparator::Eq,
        Comparator::Ne,
        Comparator::Lt,
        Comparator::Le,
        Comparator::Gt,
        Comparator::Ge,
    ])
    .boxed()
}

fn leaf() -> BoxedStrategy<Condition> {
    prop_oneof![
        (operand(), comparator(), operand())
            .prop_map(|(l, c, r)| Condition::Compare(l, c, r))
            .boxed(),
        (operand(), operand(), operand())
            .prop_map(|(v, lo, hi)| Condition::Between(v, lo, hi))
            .boxed(),
        (operand(), prop::collection::vec(operand(), 1..5))
            .prop_map(|(v, l)| Condition::In(v, l))
            .boxed(),
        path().prop_map(Condition::AttributeExists).boxed(),
        path().prop_map(Condition::AttributeNotExists).boxed(),
        (path(), attribute_type())
            .prop_map(|(p, t)| Condition::AttributeType(p, t))
            .boxed(),
        (path(), operand())
            .prop_map(|(p, o)| Condition::BeginsWith(p, o))
            .boxed(),
        (path(), operand())
            .prop_map(|(p, o)| Condition::Contains(p, o))
            .boxed(),
    ]
    .prop_filter("DynamoDB refuses it", acceptable)
    .boxed()
}

/// The rules DynamoDB checks on the expression itself: a function's or
/// comparison's operands are not one and the same path; the literals an
/// ordering (`<`, `BETWEEN`...) compares are strings, numbers or binaries;
/// literal BETWEEN bounds share a type and are in order; a literal
/// `begins_with` prefix is a string or binary.
fn acceptable(condition: &Condition) -> bool {
    let distinct = |a: &Operand, b: &Operand| !matches!((a, b), (Operand::Path(x), Operand::Path(y)) if x == y);
    let ordered = |operands: &[&Operand]| {
        operands.iter().all(|operand| match operand {
            Operand::Value(v) => matches!(
                v,
                AttributeValue::S(_) | AttributeValue::N(_) | AttributeValue::B(_)
            ),
            _ => true,
        })
    };
    match condition {
        Condition::Compare(l, Comparator::Eq | Comparator::Ne, r) => distinct(l, r),
        Condition::Compare(l, _, r) => distinct(l, r) && ordered(&[l, r]),
        Condition::Between(v, lo, hi) if !ordered(&[v, lo, hi]) => false,
        Condition::Between(_, Operand::Value(lo), Operand::Value(hi)) => {
            lo.attribute_type() == hi.attribute_type() && order(lo, hi).is_none_or(|o| o.is_le())
        }
        Condition::BeginsWith(p, o) => {
            distinct(&Operand::Path(p.clone()), o)
                && match o {
                    Operand::Value(v) => matches!(v, AttributeValue::S(_) | AttributeValue::B(_)),
                    _ => true,
                }
        }
        Condition::Contains(p, o) => distinct(&Operand::Path(p.clone()), o),
        _ => true,
    }
}

fn condition() -> impl Strategy<Value = Condition> {
    leaf().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.or(b)),
            inner.prop_map(Condition::not),
        ]
    })
}

/// Two values of one orderable type, in order.
fn ordered_bounds() -> impl Strategy<Value = (AttributeValue, AttributeValue)> {
    (scalar(), scalar())
        .prop_filter("same type", |(a, b)| {
            a.attribute_type() == b.attribute_type()
        })
        .prop_map(|(a, b)| match order(&a, &b) {
            Some(o) if o.is_gt() => (b, a),
            _ => (a, b),
        })
}

fn sort_op() -> BoxedStrategy<SortOp> {
    prop_oneof![
        scalar().prop_map(SortOp::Eq),
        scalar().prop_map(SortOp::Lt),
        scalar().prop_map(SortOp::Le),
        scalar().prop_map(SortOp::Gt),
        scalar().prop_map(SortOp::Ge),
        ordered_bounds().prop_map(|(lo, hi)| SortOp::Between(lo, hi)),
        prop_oneof![
            "[a-z]{0,4}".prop_map(AttributeValue::S),
            prop::collection::vec(any::<u8>(), 0..4).prop_map(AttributeValue::B),
        ]
        .prop_map(SortOp::BeginsWith),
    ]
    .boxed()
}

fn key_condition() -> impl Strategy<Value = KeyCondition> {
    (name(), scalar(), prop::option::of((name(), sort_op())))
        .prop_filter("two different keys", |(partition, _, sort)| {
            sort.as_ref().is_none_or(|(name, _)| name != partition)
        })
        .prop_map(|(partition, value, sort)| {
            let condition = KeyCondition::partition(partition, value);
            match sort {
                Some((name, op)) => condition.with_sort(name, op),
                None => condition,
            }
        })
}

/// An operand of SET, of any shape.
fn update_operand() -> BoxedStrategy<UpdateOperand> {
    let leaf = prop_oneof![
        path().prop_map(UpdateOperand::Path),
        value().prop_map(UpdateOperand::Value),
    ];
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (path(), inner.clone())
                .prop_map(|(p, fallback)| UpdateOperand::IfNotExists(p, Box::new(fallback))),
            (inner.clone(), inner)
                .prop_map(|(a, b)| UpdateOperand::ListAppend(Box::new(a), Box::new(b))),
        ]
    })
    .prop_filter("list_append takes lists", lists_appended)
    .boxed()
}

/// DynamoDB refuses a literal that is not a list in `list_append`.
fn lists_appended(operand: &UpdateOperand) -> bool {
    match operand {
        UpdateOperand::Path(_) | UpdateOperand::Value(_) => true,
        UpdateOperand::IfNotExists(_, fallback) => lists_appended(fallback),
        UpdateOperand::ListAppend(a, b) => [a, b]
            .into_iter()
            .all(|o| literal_of(o, AttributeType::L) && lists_appended(o)),
    }
}

/// Whether `operand`, if a literal, is of type `wanted`.
fn literal_of(operand: &UpdateOperand, wanted: AttributeType) -> bool {
    match operand {
        UpdateOperand::Value(v) => v.attribute_type() == wanted,
        _ => true,
    }
}

fn set_value() -> BoxedStrategy<SetValue> {
    // DynamoDB refuses a literal that is not a number beside `+` or `-`.
    let number = || update_operand().prop_filter("a number", |o| literal_of(o, AttributeType::N));
    prop_oneof![
        update_operand().prop_map(SetValue::Operand),
        (number(), number()).prop_map(|(a, b)| SetValue::Plus(a, b)),
        (number(), number()).prop_map(|(a, b)| SetValue::Minus(a, b)),
    ]
    .boxed()
}

fn set_value_literal() -> BoxedStrategy<AttributeValue> {
    value()
        .prop_filter("a set", |v| {
            matches!(
                v,
                AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
            )
        })
        .boxed()
}

/// Paths that cannot overlap: each starts from its own top-level name.
fn target(index: usize) -> impl Strategy<Value = Path> {
    path().prop_map(move |mut p| {
        p.0[0] = PathElement::Attr(format!("t{index}"));
        p
    })
}

fn update() -> impl Strategy<Value = Update> {
    (0usize..3, 0usize..3, 0usize..3, 0usize..3)
        .prop_filter("at least one action", |(s, r, a, d)| s + r + a + d > 0)
        .prop_flat_map(|(sets, removes, adds, deletes)| {
            let mut next = 0..;
            let mut targets = |n: usize| next.by_ref().take(n).map(target).collect::<Vec<_>>();
            let set = targets(sets)
                .into_iter()
                .map(|t| (t, set_value()))
                .collect::<Vec<_>>();
            let remove = targets(removes);
            let add_value = prop_oneof![
                any::<i64>().prop_map(|n| AttributeValue::N(Number::from(n))),
                set_value_literal(),
            ];
            let add = targets(adds)
                .into_iter()
                .map(|t| (t, add_value.clone()))
                .collect::<Vec<_>>();
            let delete = targets(deletes)
                .into_iter()
                .map(|t| (t, set_value_literal()))
                .collect::<Vec<_>>();
            (set, remove, add, delete).prop_map(|(set, remove, add, delete)| Update {
                set,
                remove,
                add,
                delete,
            })
        })
}

fn projection() -> impl Strategy<Value = Vec<Path>> {
    (1usize..5).prop_flat_map(|n| (0..n).map(target).collect::<Vec<_>>())
}

/// Renders with `render`, then parses the text with `parse` against the
/// placeholders the renderer produced; every placeholder must count as used.
/// The text is also parsed with its keywords in lower case and its spaces
/// stretched to newlines and tabs, which must not change the tree.
fn round_trip<T: PartialEq + std::fmt::Debug>(
    render: impl FnOnce(&mut Renderer) -> String,
    parse: impl Fn(&mut ExpressionParser<'_>, &str) -> Result<T, rave_store::ExpressionError>,
) -> Result<T, TestCaseError> {
    let mut renderer = Renderer::default();
    let text = render(&mut renderer);
    let (names, values) = renderer.finish();
    // Placeholders (`#n0`, `:v0`) and function names are lower case already,
    // so lower-casing the text changes only the keywords.
    let variants = [text.to_lowercase(), text.replace(' ', "\n\t ")];
    let mut parsed = None;
    for variant in std::iter::once(&text).chain(&variants) {
        let mut parser = ExpressionParser::new(names.as_ref(), values.as_ref())
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let tree = parse(&mut parser, variant)
            .map_err(|e| TestCaseError::fail(format!("{variant:?} refused: {e}")))?;
        parser
            .finish()
            .map_err(|e| TestCaseError::fail(format!("{variant:?}: {e}")))?;
        match &parsed {
            None => parsed = Some(tree),
            Some(first) => prop_assert_eq!(first, &tree, "{:?}", variant),
        }
    }
    parsed.ok_or_else(|| TestCaseError::fail("nothing parsed"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn conditions_come_back_as_they_were_rendered(condition in condition()) {
        let parsed = round_trip(|r| r.condition(&condition), |p, text| p.condition(text))?;
        prop_assert_eq!(parsed, condition);
    }

    #[test]
    fn key_conditions_come_back_as_they_were_rendered(condition in key_condition()) {
        let parsed = round_trip(|r| r.key_condition(&condition), |p, text| p.key_condition(text))?;
        prop_assert_eq!(parsed, condition);
    }

    #[test]
    fn updates_come_back_as_they_were_rendered(update in update()) {
        let parsed = round_trip(|r| r.update(&update), |p, text| p.update(text))?;
        prop_assert_eq!(parsed, update);
    }

    #[test]
    fn projections_come_back_as_they_were_rendered(paths in projection()) {
        let parsed = round_trip(|r| r.projection(&paths), |p, text| p.projection(text))?;
        prop_assert_eq!(parsed, paths);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        parse_everything(&text);
    }

    /// Strings of real tokens reach deeper into the grammars than random text.
    #[test]
    fn arbitrary_token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(vec![
        "a", "status", "#n", "#undefined", ":v", ":s", ":l", ":undefined", "(", ")", "[", "]", "1",
        "99999999999999999999999", ".", ",", "=", "<>", "<", "<=", ">", ">=", "+", "-", "AND", "or",
        "NOT", "BETWEEN", "IN", "SET", "remove", "ADD", "DELETE", "size", "attribute_exists",
        "attribute_type", "begins_with", "contains", "if_not_exists", "list_append", "foo", "!",
    ]), 0..30), spaced in any::<bool>()) {
        parse_everything(&tokens.join(if spaced { " " } else { "" }));
    }
}

fn parse_everything(text: &str) {
    let names = HashMap::from([("#n".to_owned(), "name".to_owned())]);
    let values = HashMap::from([
        (":v".to_owned(), AttributeValue::N(Number::from(1i64))),
        (":s".to_owned(), AttributeValue::S("x".to_owned())),
        (":l".to_owned(), AttributeValue::L(vec![])),
    ]);
    let Ok(mut parser) = ExpressionParser::new(Some(&names), Some(&values)) else {
        panic!("the maps are valid");
    };
    // Only the absence of a panic matters here; refusals are expected.
    let _ = parser.condition(text);
    let _ = parser.filter(text);
    let _ = parser.key_condition(text);
    let _ = parser.update(text);
    let _ = parser.projection(text);
    let _ = parser.finish();
}

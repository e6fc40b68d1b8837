use std::collections::HashMap;

use crate::{
    AttributeType, AttributeValue, Comparator, Condition, KeyCondition, Operand, Path, SetValue,
    SortOp, Update, UpdateOperand,
};

use super::{ExpressionError, ExpressionParser};

/// Placeholders every test may use: `#n` → `name`, `#s` → `status`,
/// `:s`/`:t` strings, `:one`/`:five` numbers, `:ss`/`:l`/`:b`/`:yes` others.
fn names() -> HashMap<String, String> {
    [("#n", "name"), ("#s", "status"), ("#k", "key")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn values() -> HashMap<String, AttributeValue> {
    [
        (":s", AttributeValue::from("s")),
        (":t", AttributeValue::from("t")),
        (":one", AttributeValue::from(1i64)),
        (":five", AttributeValue::from(5i64)),
        (":ss", AttributeValue::Ss(["x".to_owned()].into())),
        (":l", AttributeValue::L(vec![AttributeValue::from(1i64)])),
        (":b", AttributeValue::B(vec![1, 2])),
        (":yes", AttributeValue::Bool(true)),
        (":typeS", AttributeValue::from("S")),
        (":typeSS", AttributeValue::from("SS")),
        (":typeX", AttributeValue::from("X")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn condition(text: &str) -> Result<Condition, ExpressionError> {
    let (names, values) = (names(), values());
    ExpressionParser::new(Some(&names), Some(&values))?.condition(text)
}

fn key_condition(text: &str) -> Result<KeyCondition, ExpressionError> {
    let (names, values) = (names(), values());
    ExpressionParser::new(Some(&names), Some(&values))?.key_condition(text)
}

fn update(text: &str) -> Result<Update, ExpressionError> {
    let (names, values) = (names(), values());
    ExpressionParser::new(Some(&names), Some(&values))?.update(text)
}

fn projection(text: &str) -> Result<Vec<Path>, ExpressionError> {
    let names = names();
    ExpressionParser::new(Some(&names), None)?.projection(text)
}

/// The message DynamoDB would send for a refused expression.
fn refusal<T: std::fmt::Debug>(result: Result<T, ExpressionError>) -> String {
    match result {
        Ok(parsed) => panic!("expected a refusal, parsed {parsed:?}"),
        Err(error) => error.to_string(),
    }
}

fn compare(left: &str, comparator: Comparator, value: impl Into<AttributeValue>) -> Condition {
    Condition::compare(Operand::attr(left), comparator, Operand::value(value))
}

// ---- conditions ----

#[test]
fn every_comparator() {
    for (symbol, comparator) in [
        ("=", Comparator::Eq),
        ("<>", Comparator::Ne),
        ("<", Comparator::Lt),
        ("<=", Comparator::Le),
        (">", Comparator::Gt),
        (">=", Comparator::Ge),
    ] {
        assert_eq!(
            condition(&format!("a {symbol} :one")).unwrap(),
            compare("a", comparator, 1i64),
            "{symbol}"
        );
    }
    assert_eq!(
        condition("#n<>#s").unwrap(),
        Condition::compare(
            Operand::attr("name"),
            Comparator::Ne,
            Operand::attr("status")
        )
    );
}

#[test]
fn not_binds_tighter_than_and_which_binds_tighter_than_or() {
    let a = || compare("a", Comparator::Eq, 1i64);
    let b = || compare("b", Comparator::Eq, 1i64);
    let c = || compare("c", Comparator::Eq, 1i64);
    assert_eq!(
        condition("a = :one OR b = :one AND NOT c = :one").unwrap(),
        a().or(b().and(c().not()))
    );
    assert_eq!(
        condition("NOT a = :one AND b = :one OR c = :one").unwrap(),
        a().not().and(b()).or(c())
    );
    assert_eq!(
        condition("(a = :one OR b = :one) AND c = :one").unwrap(),
        a().or(b()).and(c())
    );
    assert_eq!(
        condition("a = :one AND b = :one AND c = :one").unwrap(),
        a().and(b()).and(c()),
        "AND associates to the left"
    );
    assert_eq!(
        condition("NOT (a = :one OR b = :one)").unwrap(),
        a().or(b()).not()
    );
    assert_eq!(
        condition("NOT NOT a = :one AND b = :one").unwrap(),
        a().not().not().and(b()),
        "NOT negates a condition, a NOT among them"
    );
}

#[test]
fn keywords_are_case_insensitive() {
    assert_eq!(
        condition("a between :one and :five or not b in (:s, :t)").unwrap(),
        Condition::Between(
            Operand::attr("a"),
            Operand::value(1i64),
            Operand::value(5i64)
        )
        .or(Condition::In(
            Operand::attr("b"),
            vec![Operand::value("s"), Operand::value("t")]
        )
        .not())
    );
}

#[test]
fn functions_and_size() {
    assert_eq!(
        condition("attribute_exists(a) AND attribute_not_exists(#n)").unwrap(),
        Condition::exists("a").and(Condition::not_exists("name"))
    );
    assert_eq!(
        condition("attribute_type(a, :typeSS)").unwrap(),
        Condition::AttributeType(Path::attr("a"), AttributeType::Ss)
    );
    assert_eq!(
        condition("begins_with(a.b, :s) OR contains(#n, :t)").unwrap(),
        Condition::BeginsWith(Path::attr("a").key("b"), Operand::value("s"))
            .or(Condition::Contains(Path::attr("name"), Operand::value("t")))
    );
    assert_eq!(
        condition("size(a[1]) > :one").unwrap(),
        Condition::compare(
            Operand::Size(Path::attr("a").index(1)),
            Comparator::Gt,
            Operand::value(1i64)
        )
    );
    assert_eq!(
        condition("b IN (size(a), :one)").unwrap(),
        Condition::In(
            Operand::attr("b"),
            vec![Operand::Size(Path::attr("a")), Operand::value(1i64)]
        )
    );
}

#[test]
fn paths_nest_through_maps_and_lists() {
    assert_eq!(
        condition("a.b[2].#n[0][10] = :s").unwrap(),
        Condition::compare(
            Operand::Path(
                Path::attr("a")
                    .key("b")
                    .index(2)
                    .key("name")
                    .index(0)
                    .index(10)
            ),
            Comparator::Eq,
            Operand::value("s")
        )
    );
}

#[test]
fn an_operand_may_stand_in_parentheses() {
    assert_eq!(
        condition("(a) = :one").unwrap(),
        compare("a", Comparator::Eq, 1i64)
    );
    assert_eq!(
        condition("(size(a)) > :one AND (attribute_exists(b))").unwrap(),
        Condition::compare(
            Operand::Size(Path::attr("a")),
            Comparator::Gt,
            Operand::value(1i64)
        )
        .and(Condition::exists("b"))
    );
    assert_eq!(
        condition("a IN ((:one), :five) AND (#n) BETWEEN (:one) AND :five").unwrap(),
        Condition::In(
            Operand::attr("a"),
            vec![Operand::value(1i64), Operand::value(5i64)]
        )
        .and(Condition::Between(
            Operand::attr("name"),
            Operand::value(1i64),
            Operand::value(5i64)
        ))
    );
    assert_eq!(
        condition("((a = :one) AND (b = :one))").unwrap(),
        compare("a", Comparator::Eq, 1i64).and(compare("b", Comparator::Eq, 1i64))
    );
}

#[test]
fn empty_and_syntax_errors_quote_the_text_around_the_token() {
    assert_eq!(
        refusal(condition("")),
        "Invalid ConditionExpression: The expression can not be empty;"
    );
    for (text, token, near) in [
        (" ", "<EOF>", ""),
        ("a-b", "-", "a-b"),
        ("()", ")", "()"),
        ("attribute_exists(a) AND NOT #n", "<EOF>", "#n"),
        ("a = :one AND", "<EOF>", "AND"),
        ("a = :one!", "!", ":one!"),
        ("a = :one b = :one", "b", ":one b ="),
        (
            "a[99999999999999999999999] = :one",
            "99999999999999999999999",
            "[99999999999999999999999]",
        ),
        ("a[x] = :one", "x", "[x]"),
        ("a = :one AND (b = :one", "<EOF>", ":one"),
        ("a IN ()", ")", "()"),
        ("a = AND", "AND", "= AND"),
    ] {
        assert_eq!(
            refusal(condition(text)),
            format!(
                "Invalid ConditionExpression: Syntax error; token: \"{token}\", near: \"{near}\""
            ),
            "{text:?}"
        );
    }
}

#[test]
fn refusals_are_validation_errors() {
    let error = crate::StoreError::from(condition("").unwrap_err());
    assert_eq!(
        error,
        crate::StoreError::Validation(
            "Invalid ConditionExpression: The expression can not be empty;".to_owned()
        )
    );
}

#[test]
fn filters_are_named_in_their_messages() {
    let (names, values) = (names(), values());
    let mut parser = ExpressionParser::new(Some(&names), Some(&values)).unwrap();
    assert_eq!(
        parser.filter("status = :s").unwrap_err().to_string(),
        "Invalid FilterExpression: Attribute name is a reserved keyword; reserved keyword: status"
    );
    assert_eq!(
        parser.filter("#s = :s").unwrap(),
        compare("status", Comparator::Eq, "s")
    );
}

#[test]
fn reserved_words_are_refused_unless_behind_a_placeholder() {
    assert_eq!(
        refusal(condition("a.Status = :s")),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: Status"
    );
    assert!(condition("#s = :s AND statuses = :s").is_ok());
    // A syntax error anywhere is reported before a reserved word.
    assert!(matches!(
        condition("status = :s AND"),
        Err(ExpressionError::Syntax { .. })
    ));
}

#[test]
fn undefined_placeholders() {
    assert_eq!(
        refusal(condition("#x = :s")),
        "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"
    );
    assert_eq!(
        refusal(condition("a = :nope")),
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"
    );
    let mut no_maps = ExpressionParser::new(None, None).unwrap();
    assert!(matches!(
        no_maps.condition("#n = :s"),
        Err(ExpressionError::UndefinedName { .. })
    ));
}

#[test]
fn redundant_parentheses() {
    let redundant = "Invalid ConditionExpression: The expression has redundant parentheses;";
    assert_eq!(refusal(condition("((a = :one))")), redundant);
    assert_eq!(refusal(condition("((a)) = :one")), redundant);
    assert_eq!(refusal(condition("b = :one AND ((a = :one))")), redundant);
    assert!(condition("(a = :one)").is_ok());
    assert!(condition("(NOT (a = :one))").is_ok());
}

#[test]
fn function_errors() {
    for (text, message) in [
        ("foo(a)", "Invalid function name; function: foo"),
        (
            "Attribute_Exists(a)",
            "Invalid function name; function: Attribute_Exists",
        ),
        (
            "attribute_exists(a, b)",
            "Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2",
        ),
        (
            "size(a)",
            "The function is not allowed to be used this way in an expression; function: size",
        ),
        (
            "attribute_exists(a) = :one",
            "The function is not allowed to be used this way in an expression; function: attribute_exists",
        ),
        (
            "attribute_exists(:one)",
            "Operator or function requires a document path; operator or function: attribute_exists",
        ),
        (
            "size(:one) = :one",
            "Incorrect operand type for operator or function; operator or function: size, operand type: N",
        ),
        (
            "size(:yes) > :one",
            "Incorrect operand type for operator or function; operator or function: size, operand type: BOOL",
        ),
        (
            "attribute_type(a, :typeX)",
            "Invalid attribute type name found; type: X, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}",
        ),
        (
            "attribute_type(a, :one)",
            "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N",
        ),
        (
            "begins_with(a, :one)",
            "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
        ),
        (
            "contains(a.b, a.b)",
            "The first operand must be distinct from the remaining operands for this operator or function; operator: contains, first operand: [a, b]",
        ),
        (
            "a[1] = a[1]",
            "The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a, [1]]",
        ),
    ] {
        assert_eq!(
            refusal(condition(text)),
            format!("Invalid ConditionExpression: {message}"),
            "{text}"
        );
    }
    assert!(condition("begins_with(a, :b)").is_ok(), "binary prefixes");
}

#[test]
fn between_bounds_must_share_a_type_and_be_in_order() {
    assert_eq!(
        refusal(condition("a BETWEEN :five AND :one")),
        "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound operand: AttributeValue: {N:1}"
    );
    assert_eq!(
        refusal(condition("a BETWEEN :one AND :s")),
        "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:s}"
    );
    assert!(condition("a BETWEEN :one AND :one").is_ok());
}

#[test]
fn orderings_take_strings_numbers_and_binaries_only() {
    for (text, message) in [
        (
            ":yes >= a",
            "Incorrect operand type for operator or function; operator or function: >=, operand type: BOOL",
        ),
        (
            "a < :l",
            "Incorrect operand type for operator or function; operator or function: <, operand type: L",
        ),
        (
            // The first operand of a type without order is reported, before the bounds' types.
            "a BETWEEN :ss AND :yes",
            "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: SS",
        ),
        (
            ":yes BETWEEN :l AND :one",
            "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: BOOL",
        ),
    ] {
        assert_eq!(
            refusal(condition(text)),
            format!("Invalid ConditionExpression: {message}"),
            "{text}"
        );
    }
    assert!(condition("a = :yes AND b <> :l AND c > :b AND d <= :s").is_ok());
}

#[test]
fn in_takes_at_most_a_hundred_values() {
    let list = |n: usize| vec![":one"; n].join(", ");
    assert!(condition(&format!("a IN ({})", list(100))).is_ok());
    assert_eq!(
        refusal(condition(&format!("a IN ({})", list(101)))),
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101"
    );
}

#[test]
fn errors_are_reported_in_dynamodbs_order() {
    // An unknown function outranks a reserved word that comes first.
    assert!(matches!(
        condition("status = :s AND foo(a)"),
        Err(ExpressionError::UnknownFunction { .. })
    ));
    // A literal of the wrong type and an undefined placeholder: the first written.
    assert!(matches!(
        condition("begins_with(a, :one) AND b = :nowhere"),
        Err(ExpressionError::OperandType { .. })
    ));
    assert!(matches!(
        condition("b = :nowhere AND begins_with(a, :one)"),
        Err(ExpressionError::UndefinedValue { .. })
    ));
    // Redundant parentheses outrank everything but syntax.
    assert!(matches!(
        condition("foo(a) AND ((b = :one))"),
        Err(ExpressionError::RedundantParentheses { .. })
    ));
}

// ---- key conditions ----

#[test]
fn key_conditions_every_sort_comparison() {
    let partition = || KeyCondition::partition("pk", "s");
    assert_eq!(key_condition("pk = :s").unwrap(), partition());
    for (text, op) in [
        ("sk = :one", SortOp::Eq(1i64.into())),
        ("sk < :one", SortOp::Lt(1i64.into())),
        ("sk <= :one", SortOp::Le(1i64.into())),
        ("sk > :one", SortOp::Gt(1i64.into())),
        ("sk >= :one", SortOp::Ge(1i64.into())),
        (
            "sk BETWEEN :one AND :five",
            SortOp::Between(1i64.into(), 5i64.into()),
        ),
        ("begins_with(sk, :t)", SortOp::BeginsWith("t".into())),
        // A value on the left turns the comparison around.
        (":one < sk", SortOp::Gt(1i64.into())),
        (":one >= sk", SortOp::Le(1i64.into())),
    ] {
        let expected = partition().with_sort("sk", op);
        assert_eq!(
            key_condition(&format!("pk = :s AND {text}")).unwrap(),
            expected,
            "{text}"
        );
        // Two equalities are told apart by the schema.
        let schema = crate::KeySchema::new(
            crate::KeyAttribute::new("pk", crate::KeyType::S),
            Some(crate::KeyAttribute::new("sk", crate::KeyType::N)),
        );
        assert_eq!(
            key_condition(&format!("{text} and pk = :s"))
                .unwrap()
                .bind(&schema, None),
            expected.bind(&schema, None),
            "{text}, sort key first"
        );
    }
    assert_eq!(
        key_condition("(#k = :s) AND (begins_with(#n, :t))").unwrap(),
        KeyCondition::partition("key", "s").with_sort("name", SortOp::BeginsWith("t".into()))
    );
}

#[test]
fn conditions_past_the_first_equality_wait_for_the_schema_in_written_order() {
    assert_eq!(
        key_condition("sk = :one AND pk = :s").unwrap(),
        KeyCondition::partition("sk", 1i64).with_sort("pk", SortOp::Eq("s".into()))
    );
    assert_eq!(
        key_condition("b > :s AND h = :s AND a = :one AND begins_with(c, :t)").unwrap(),
        KeyCondition::partition("h", "s")
            .and("b", SortOp::Gt("s".into()))
            .and("a", SortOp::Eq(1i64.into()))
            .and("c", SortOp::BeginsWith("t".into()))
    );
}

#[test]
fn key_condition_errors() {
    for (text, message) in [
        (
            "pk = :s OR sk = :one",
            "Invalid operator used in KeyConditionExpression: OR",
        ),
        (
            "pk = :s AND NOT sk = :one",
            "Invalid operator used in KeyConditionExpression: NOT",
        ),
        (
            "pk IN (:s, :t)",
            "Invalid operator used in KeyConditionExpression: IN",
        ),
        (
            "pk <> :s",
            "Invalid operator used in KeyConditionExpression: <>",
        ),
        (
            "attribute_exists(pk)",
            "Invalid operator used in KeyConditionExpression: attribute_exists",
        ),
        (
            "pk = :s AND contains(sk, :t)",
            "Invalid operator used in KeyConditionExpression: contains",
        ),
        (
            "size(pk) = :one",
            "KeyConditionExpressions cannot contain nested operations",
        ),
        (
            "pk.a = :s",
            "KeyConditionExpressions cannot have conditions on nested attributes",
        ),
        (
            "pk = sk",
            "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition",
        ),
        (
            ":s = :t",
            "Invalid condition in KeyConditionExpression: No key attribute specified",
        ),
        (
            "pk = :s AND begins_with(:t, sk)",
            "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand",
        ),
        (
            ":one BETWEEN sk AND :five",
            "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand",
        ),
        (
            "pk = :s AND pk = :t",
            "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key",
        ),
        ("sk > :one", "Query key condition not supported"),
        ("pk > :s AND sk > :one", "Query key condition not supported"),
        (
            "a = :s AND b = :s AND c = :s AND d = :s AND e = :s AND f = :s AND g = :s AND h = :s AND i = :s",
            "Conditions can be of length 1 or 2 only",
        ),
        (
            "pk = :s AND begins_with(sk, :one)",
            "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
        ),
        (
            "pk = ",
            "Invalid KeyConditionExpression: Syntax error; token: \"<EOF>\", near: \"= \"",
        ),
        (
            "",
            "Invalid KeyConditionExpression: The expression can not be empty;",
        ),
    ] {
        assert_eq!(refusal(key_condition(text)), message, "{text}");
    }
}

// ---- updates ----

#[test]
fn set_forms() {
    let parsed = update(
        "SET a = :one, b = c, d = e + :one, f = :five - g, h = if_not_exists(h, :one), \
         i = list_append(if_not_exists(i, :l), :l), j = (k + :one), #n[2] = (:s)",
    )
    .unwrap();
    let path = |name: &str| UpdateOperand::Path(Path::attr(name));
    let value = |v: AttributeValue| UpdateOperand::Value(v);
    assert_eq!(
        parsed.set,
        vec![
            (Path::attr("a"), SetValue::value(1i64)),
            (Path::attr("b"), SetValue::Operand(path("c"))),
            (
                Path::attr("d"),
                SetValue::Plus(path("e"), value(1i64.into()))
            ),
            (
                Path::attr("f"),
                SetValue::Minus(value(5i64.into()), path("g"))
            ),
            (
                Path::attr("h"),
                SetValue::Operand(UpdateOperand::IfNotExists(
                    Path::attr("h"),
                    Box::new(value(1i64.into()))
                ))
            ),
            (
                Path::attr("i"),
                SetValue::Operand(UpdateOperand::ListAppend(
                    Box::new(UpdateOperand::IfNotExists(
                        Path::attr("i"),
                        Box::new(value(values()[":l"].clone()))
                    )),
                    Box::new(value(values()[":l"].clone()))
                ))
            ),
            (
                Path::attr("j"),
                SetValue::Plus(path("k"), value(1i64.into()))
            ),
            (Path::attr("name").index(2), SetValue::value("s")),
        ]
    );
    assert!(parsed.remove.is_empty() && parsed.add.is_empty() && parsed.delete.is_empty());
}

#[test]
fn clauses_in_any_order_and_any_case() {
    let parsed = update("delete s :ss ADD n :one, m :ss remove r, q.x[1] Set a = :s").unwrap();
    assert_eq!(parsed.set, vec![(Path::attr("a"), SetValue::value("s"))]);
    assert_eq!(
        parsed.remove,
        vec![Path::attr("r"), Path::attr("q").key("x").index(1)]
    );
    assert_eq!(
        parsed.add,
        vec![
            (Path::attr("n"), 1i64.into()),
            (Path::attr("m"), values()[":ss"].clone())
        ]
    );
    assert_eq!(
        parsed.delete,
        vec![(Path::attr("s"), values()[":ss"].clone())]
    );
}

#[test]
fn update_errors() {
    for (text, message) in [
        ("", "The expression can not be empty;"),
        (
            "SET a = :one SET b = :one",
            "The \"SET\" section can only be used once in an update expression;",
        ),
        (
            "REMOVE a remove b",
            "The \"REMOVE\" section can only be used once in an update expression;",
        ),
        (
            "SET a = :one REMOVE a.b",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]",
        ),
        (
            "SET #s = :one ADD #s :one",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [status], path two: [status]",
        ),
        (
            "SET a.b = :one REMOVE a[0]",
            "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a, [0]]",
        ),
        (
            "ADD a :s",
            "Incorrect operand type for operator or function; operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND",
        ),
        (
            "DELETE a :one",
            "Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND",
        ),
        (
            "ADD a :l",
            "Incorrect operand type for operator or function; operator: ADD, operand type: LIST, typeSet: ALLOWED_FOR_ADD_OPERAND",
        ),
        (
            "SET a = b + :s",
            "Incorrect operand type for operator or function; operator or function: +, operand type: S",
        ),
        (
            "SET a = list_append(a, :one)",
            "Incorrect operand type for operator or function; operator or function: list_append, operand type: N",
        ),
        (
            "SET a = size(b)",
            "The function is not allowed in an update expression; function: size",
        ),
        ("SET a = sizes(b)", "Invalid function name; function: sizes"),
        (
            "SET a = size(b.key)",
            "The function is not allowed in an update expression; function: size",
        ),
        (
            "SET b.key = size(a)",
            "Attribute name is a reserved keyword; reserved keyword: key",
        ),
        (
            "SET a = if_not_exists(:one, :one)",
            "Operator or function requires a document path; operator or function: if_not_exists",
        ),
        (
            "SET a = list_append(b, c, d)",
            "Incorrect number of operands for operator or function; operator or function: list_append, number of operands: 3",
        ),
        (
            "SET status = :one",
            "Attribute name is a reserved keyword; reserved keyword: status",
        ),
        (
            "SET a = :nope",
            "An expression attribute value used in expression is not defined; attribute value: :nope",
        ),
        (
            "SET a :one",
            "Syntax error; token: \":one\", near: \"a :one\"",
        ),
        (
            "UPDATE a = :one",
            "Syntax error; token: \"UPDATE\", near: \"UPDATE a\"",
        ),
        (
            "SET a = :one,",
            "Syntax error; token: \"<EOF>\", near: \",\"",
        ),
        (
            "SET a = b + c + d",
            "Syntax error; token: \"+\", near: \"c + d\"",
        ),
        ("ADD a b", "Syntax error; token: \"b\", near: \"a b\""),
        (
            "SET a = :one AND b = :one",
            "Syntax error; token: \"AND\", near: \":one AND b\"",
        ),
    ] {
        assert_eq!(
            refusal(update(text)),
            format!("Invalid UpdateExpression: {message}"),
            "{text}"
        );
    }
    // Updates rank a reserved word before an unknown function.
    assert!(matches!(
        update("SET a = foo(b), status = :one"),
        Err(ExpressionError::ReservedKeyword { .. })
    ));
}

// ---- projections ----

#[test]
fn projections() {
    assert_eq!(
        projection("a, b.c, #n[1], #s").unwrap(),
        vec![
            Path::attr("a"),
            Path::attr("b").key("c"),
            Path::attr("name").index(1),
            Path::attr("status"),
        ]
    );
    for (text, message) in [
        (
            "a, a.b",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]",
        ),
        (
            "a[1], a.b",
            "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [1]], path two: [a, b]",
        ),
        (
            "year",
            "Attribute name is a reserved keyword; reserved keyword: year",
        ),
        ("a,", "Syntax error; token: \"<EOF>\", near: \",\""),
        (":s", "Syntax error; token: \":s\", near: \":s\""),
        ("", "The expression can not be empty;"),
    ] {
        assert_eq!(
            refusal(projection(text)),
            format!("Invalid ProjectionExpression: {message}"),
            "{text}"
        );
    }
}

// ---- placeholder maps ----

#[test]
fn usage_is_checked_across_every_expression_of_a_request() {
    let (names, values) = (names(), values());
    let mut parser = ExpressionParser::new(Some(&names), Some(&values)).unwrap();
    parser.condition("attribute_exists(#n)").unwrap();
    parser.update("SET #s = :s").unwrap();
    assert_eq!(
        parser.finish().unwrap_err().to_string(),
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#k}"
    );

    let names = HashMap::from([("#a".to_owned(), "a".to_owned())]);
    let values = HashMap::from([
        (":x".to_owned(), AttributeValue::from(1i64)),
        (":y".to_owned(), AttributeValue::from(2i64)),
        (":z".to_owned(), AttributeValue::from(3i64)),
    ]);
    let mut parser = ExpressionParser::new(Some(&names), Some(&values)).unwrap();
    parser.projection("#a").unwrap();
    parser.key_condition("pk = :y").unwrap();
    assert_eq!(
        parser.finish().unwrap_err().to_string(),
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x, :z}"
    );

    let mut parser = ExpressionParser::new(Some(&names), Some(&values)).unwrap();
    parser.filter("#a IN (:x, :y)").unwrap();
    parser.update("SET b = :z").unwrap();
    assert_eq!(parser.finish(), Ok(()));
}

#[test]
fn placeholder_maps_are_checked_themselves() {
    let bad_name = HashMap::from([("a".to_owned(), "a".to_owned())]);
    assert_eq!(
        ExpressionParser::new(Some(&bad_name), None)
            .unwrap_err()
            .to_string(),
        "ExpressionAttributeNames contains invalid key: Syntax error; key: \"a\""
    );
    let bad_value = HashMap::from([(":a-b".to_owned(), AttributeValue::Null)]);
    assert_eq!(
        ExpressionParser::new(None, Some(&bad_value))
            .unwrap_err()
            .to_string(),
        "ExpressionAttributeValues contains invalid key: Syntax error; key: \":a-b\""
    );
    let empty = HashMap::new();
    assert_eq!(
        ExpressionParser::new(Some(&empty), None)
            .unwrap_err()
            .to_string(),
        "ExpressionAttributeNames must not be empty"
    );
    let values = values();
    let unused = ExpressionParser::new(None, Some(&values)).unwrap();
    assert_eq!(
        unused.finish().unwrap_err().to_string(),
        "ExpressionAttributeValues can only be specified when using expressions"
    );
    let mut projection_only = ExpressionParser::new(None, Some(&values)).unwrap();
    projection_only.projection("a").unwrap();
    assert_eq!(
        projection_only.finish().unwrap_err().to_string(),
        "ExpressionAttributeValues can only be specified when using expressions"
    );
    let empty_set = HashMap::from([(":e".to_owned(), AttributeValue::Ss(Default::default()))]);
    assert_eq!(
        ExpressionParser::new(None, Some(&empty_set))
            .unwrap_err()
            .to_string(),
        "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: a string set may not be empty for key :e"
    );
    assert_eq!(ExpressionParser::new(None, None).unwrap().finish(), Ok(()));
}

#[test]
fn length_and_nesting_are_bounded() {
    let long = format!("a IN ({})", vec![":one"; 820].join(","));
    assert_eq!(
        refusal(condition(&long)),
        format!(
            "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: {}",
            long.len()
        )
    );
    let long_update = format!("SET {}", vec!["a = :one"; 600].join(", "));
    assert_eq!(
        refusal(update(&long_update)),
        "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size;"
    );
    let nested = |depth: usize| format!("{}a = :one{}", "(".repeat(depth), ")".repeat(depth));
    assert!(matches!(
        condition(&nested(65)),
        Err(ExpressionError::TooDeep { .. })
    ));
    // Sixty-four levels parse (and are refused as redundant, as DynamoDB does).
    assert!(matches!(
        condition(&nested(64)),
        Err(ExpressionError::RedundantParentheses { .. })
    ));
    let calls = |depth: usize| {
        format!(
            "SET a = {}:one{}",
            "if_not_exists(a, ".repeat(depth),
            ")".repeat(depth)
        )
    };
    assert!(update(&calls(64)).is_ok());
    assert!(matches!(
        update(&calls(65)),
        Err(ExpressionError::TooDeep { .. })
    ));
}

#[test]
fn the_size_of_a_value_is_known_as_it_is_parsed() {
    assert_eq!(
        condition("size(:s) = :one"),
        Ok(Condition::compare(
            Operand::value(1i64),
            Comparator::Eq,
            Operand::value(1i64)
        ))
    );
    assert_eq!(
        condition("size(:ss) < size(a)"),
        Ok(Condition::compare(
            Operand::value(1i64),
            Comparator::Lt,
            Operand::Size(Path::attr("a"))
        ))
    );
}

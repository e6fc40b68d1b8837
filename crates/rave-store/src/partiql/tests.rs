use super::*;
use crate::{Comparator, Number, Operand, SetValue, UpdateOperand};

fn parse(text: &str) -> Statement {
    Statement::parse(text, &[]).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

fn n(text: &str) -> AttributeValue {
    AttributeValue::N(text.parse::<Number>().unwrap())
}

fn eq(name: &str, value: AttributeValue) -> Condition {
    Condition::Compare(
        Operand::Path(Path::attr(name)),
        Comparator::Eq,
        Operand::Value(value),
    )
}

#[test]
fn selects_read_their_table_index_projection_and_condition() {
    let statement = parse(
        r#"select "name", m.l[1] FROM "Orders"."byDate" WHERE pk = 'a' AND n >= -1.5 ORDER BY sk DESC"#,
    );
    assert_eq!(statement.table, "Orders");
    assert_eq!(
        statement.kind,
        StatementKind::Select {
            index: Some("byDate".to_owned()),
            projection: Some(vec![Path::attr("name"), Path::attr("m").key("l").index(1)]),
            descending: Some(true),
        }
    );
    assert_eq!(
        statement.condition,
        Some(eq("pk", s("a")).and(Condition::Compare(
            Operand::Path(Path::attr("n")),
            Comparator::Ge,
            Operand::Value(n("-1.5")),
        )))
    );
    assert_eq!(parse("SELECT * FROM t").condition, None);
}

#[test]
fn where_clauses_take_every_form_partiql_for_dynamodb_has() {
    let condition = |text: &str| {
        parse(&format!("SELECT * FROM t WHERE {text}"))
            .condition
            .unwrap()
    };
    assert_eq!(
        condition("a IS MISSING"),
        Condition::AttributeNotExists(Path::attr("a"))
    );
    assert_eq!(
        condition("a.b IS NOT MISSING"),
        Condition::AttributeExists(Path::attr("a").key("b"))
    );
    assert_eq!(
        condition("x IN ['a', 'b']"),
        Condition::In(
            Operand::Path(Path::attr("x")),
            vec![Operand::Value(s("a")), Operand::Value(s("b"))]
        )
    );
    assert_eq!(
        condition("x BETWEEN 1 AND 3 OR NOT begins_with(\"y\", 'p')"),
        Condition::Between(
            Operand::Path(Path::attr("x")),
            Operand::Value(n("1")),
            Operand::Value(n("3"))
        )
        .or(Condition::BeginsWith(Path::attr("y"), Operand::Value(s("p"))).not())
    );
    assert_eq!(
        condition("size(l) != 2 AND contains(l, 'z') AND attribute_exists(\"count\")"),
        Condition::Compare(
            Operand::Size(Path::attr("l")),
            Comparator::Ne,
            Operand::Value(n("2"))
        )
        .and(Condition::Contains(Path::attr("l"), Operand::Value(s("z"))))
        .and(Condition::AttributeExists(Path::attr("count")))
    );
    assert_eq!(
        condition("ATTRIBUTE_EXISTS(ss) = true"),
        Condition::AttributeExists(Path::attr("ss"))
    );
    assert_eq!(
        condition("attribute_exists(ss) = false AND n = 1"),
        Condition::AttributeExists(Path::attr("ss"))
            .not()
            .and(eq("n", n("1")))
    );
    assert_eq!(
        condition("nul IS NULL"),
        Condition::AttributeType(Path::attr("nul"), crate::AttributeType::Null)
    );
    assert_eq!(
        condition("s IS NOT STRING"),
        Condition::AttributeType(Path::attr("s"), crate::AttributeType::S).not()
    );
    // Reserved words of DynamoDB's expressions are names in PartiQL.
    assert_eq!(condition("name = 'x'"), eq("name", s("x")));
}

#[test]
fn literals_are_typed_values_and_parameters_fill_the_question_marks() {
    let statement = Statement::parse(
        "INSERT INTO t VALUE {'pk': ?, 'n': 5, 'ok': true, 'no': null, 'l': [1, 'two'], 's': <<'x', 'y'>>, 'm': {'in': <<1, 2>>}, 'q': 'it''s'}",
        &[s("key")],
    )
    .unwrap();
    let StatementKind::Insert { item } = statement.kind else {
        panic!("not an insert");
    };
    assert_eq!(item["pk"], s("key"));
    assert_eq!(item["n"], n("5"));
    assert_eq!(item["ok"], AttributeValue::Bool(true));
    assert_eq!(item["no"], AttributeValue::Null);
    assert_eq!(item["l"], AttributeValue::L(vec![n("1"), s("two")]));
    assert_eq!(
        item["s"],
        AttributeValue::Ss(["x".to_owned(), "y".to_owned()].into())
    );
    assert_eq!(item["q"], s("it's"));
    assert!(matches!(&item["m"], AttributeValue::M(m) if matches!(m["in"], AttributeValue::Ns(_))));
    let select =
        Statement::parse("SELECT * FROM t WHERE pk = ? AND sk = ?", &[s("a"), n("1")]).unwrap();
    assert_eq!(
        select.condition,
        Some(eq("pk", s("a")).and(eq("sk", n("1"))))
    );
}

#[test]
fn number_literals_take_every_form_they_are_written_in() {
    for literal in ["7.31e6", "7.31E6", "7.31e+6", "731e4", "73100000e-1"] {
        let statement = parse(&format!("SELECT * FROM t WHERE pk = {literal}"));
        assert_eq!(
            statement.condition,
            Some(eq("pk", n("7310000"))),
            "{literal}"
        );
    }
    let negative = parse("SELECT * FROM t WHERE pk = -.73e1");
    assert_eq!(negative.condition, Some(eq("pk", n("-7.3"))));
}

#[test]
fn updates_become_one_update_with_its_actions_and_returning() {
    let statement = parse(
        "UPDATE t SET a = a + 1, b = list_append(b, [2]) SET c = 'x' REMOVE d, e[0] SET s = set_add(s, <<'n'>>) WHERE pk = 'k' RETURNING MODIFIED NEW *",
    );
    let StatementKind::Update { update, returning } = statement.kind else {
        panic!("not an update");
    };
    assert_eq!(returning, ReturnValues::UpdatedNew);
    assert_eq!(update.set.len(), 3);
    assert_eq!(
        update.set[0],
        (
            Path::attr("a"),
            SetValue::Plus(
                UpdateOperand::Path(Path::attr("a")),
                UpdateOperand::Value(n("1"))
            )
        )
    );
    assert_eq!(
        update.remove,
        vec![Path::attr("d"), Path::attr("e").index(0)]
    );
    assert_eq!(
        update.add,
        vec![(Path::attr("s"), AttributeValue::Ss(["n".to_owned()].into()))]
    );
    assert_eq!(statement.condition, Some(eq("pk", s("k"))));
    let from_first = parse(
        "from t where pk = ? set c = 1 remove d returning all new *"
            .replace('?', "'k'")
            .as_str(),
    );
    assert_eq!(from_first.condition, Some(eq("pk", s("k"))));
    assert!(matches!(
        from_first.kind,
        StatementKind::Update { ref update, returning: ReturnValues::AllNew }
            if update.set.len() == 1 && update.remove == vec![Path::attr("d")]
    ));
    let delete = parse("DELETE FROM t WHERE pk = 'k' RETURNING ALL OLD *");
    assert_eq!(
        delete.kind,
        StatementKind::Delete {
            returning: ReturnValues::AllOld
        }
    );
}

#[test]
fn refusals_are_worded_as_dynamodb_words_them() {
    let refused = |text: &str, parameters: &[AttributeValue]| {
        Statement::parse(text, parameters).unwrap_err().to_string()
    };
    assert_eq!(
        refused("SELEC * FROM t", &[]),
        "Statement wasn't well formed, can't be processed: Expected data manipulation"
    );
    assert_eq!(
        refused("SELECT * FROM t WHERE n = 'x' t", &[]),
        "Statement wasn't well formed, can't be processed: SELECT * FROM t WHERE n = 'x' t"
    );
    assert_eq!(
        refused("", &[]),
        "Statement wasn't well formed, can't be processed: "
    );
    assert_eq!(
        refused("SELECT * FROM t WHERE foo(n)", &[]),
        "Unrecognized function: foo"
    );
    assert_eq!(
        refused("SELECT * FROM t WHERE pk = ?", &[]),
        "Number of parameters in request and statement don't match."
    );
    assert_eq!(
        refused("SELECT * FROM t WHERE pk = 'a'", &[s("b")]),
        "Number of parameters in request and statement don't match."
    );
    assert_eq!(
        refused("SELECT * FROM t ORDER BY sk", &[]),
        "Must have WHERE clause in the statement when using ORDER BY clause."
    );
    assert_eq!(
        refused("INSERT INTO t VALUE {'s': <<'a', 'a'>>}", &[]),
        "Input collection contains duplicates"
    );
    assert!(refused("SELECT * FROM t WHERE a = 'x' AND", &[]).starts_with("Statement wasn't"));
    assert_eq!(
        refused("SELECT * FROM t WHERE", &[]),
        "Statement wasn't well formed, can't be processed: Unexpected term"
    );
    assert_eq!(
        refused("SELECT * FROM t WHERE n = 1e99999999999", &[]),
        "Statement wasn't well formed, can't be processed: "
    );
    assert_eq!(
        refused(r#"SELECT * FROM "t"."i"."x""#, &[]),
        "A path may contain at most 2 components in the FROM clause"
    );
    assert_eq!(
        refused(r#"SELECT * FROM "" WHERE pk = 'a'"#, &[]),
        "Path component cannot be an empty string"
    );
    assert_eq!(
        refused("DELETE FROM t WHERE pk = 'a' RETURNING MODIFIED OLD *", &[]),
        "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is allowed in DELETE statements."
    );
    assert_eq!(
        refused(
            "SELECT * FROM t WHERE pk = 'a' AND val < ?",
            &[AttributeValue::Bool(true)]
        ),
        "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL"
    );
    assert!(refused("UPDATE t WHERE pk = 'a'", &[]).starts_with("Statement wasn't"));
    assert!(
        refused("DELETE FROM t WHERE pk = 'a' RETURNING ALL", &[]).starts_with("Statement wasn't")
    );
}

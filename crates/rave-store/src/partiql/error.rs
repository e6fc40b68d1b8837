//! Why a statement is refused, in DynamoDB's words where it has them.

use crate::ExpressionError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartiqlError {
    /// The statement does not parse: the statement quoted, as DynamoDB
    /// Local quotes it (DynamoDB names what its parser met instead, in words
    /// of its own).
    #[error("Statement wasn't well formed, can't be processed: {0}")]
    Malformed(String),
    /// The statement starts with none of the statements' keywords.
    #[error("Statement wasn't well formed, can't be processed: Expected data manipulation")]
    NotDataManipulation,
    /// The statement ends where a term (a value, a name) should come.
    #[error("Statement wasn't well formed, can't be processed: Unexpected term")]
    UnexpectedTerm,
    /// The statement is empty, or a number literal cannot be a number.
    #[error("Statement wasn't well formed, can't be processed: ")]
    Empty,
    /// `FROM a.b.c`.
    #[error("A path may contain at most 2 components in the FROM clause")]
    LongPath,
    /// `FROM ""`.
    #[error("Path component cannot be an empty string")]
    EmptyPathComponent,
    /// DELETE's `RETURNING` other than ALL OLD.
    #[error(
        "Invalid returning clause: RETURNING {0} *. Only RETURNING ALL OLD * is allowed in DELETE statements."
    )]
    DeleteReturning(String),
    /// A function PartiQL for DynamoDB does not have.
    #[error("Unrecognized function: {0}")]
    UnknownFunction(String),
    /// More or fewer `?` than the request's `Parameters`.
    #[error("Number of parameters in request and statement don't match.")]
    ParameterCount,
    /// `ORDER BY` needs a `WHERE`.
    #[error("Must have WHERE clause in the statement when using ORDER BY clause.")]
    OrderWithoutWhere,
    /// A set literal repeating a member.
    #[error("Input collection contains duplicates")]
    DuplicateSetMember,
    /// A value no item could hold (an empty set, a set of mixed types, a
    /// number out of range), as DynamoDB words it.
    #[error("{0}")]
    InvalidValue(String),
    /// What the expression rules refuse of a WHERE, SET or projection, in
    /// their words without the expression's name (no PartiQL user wrote a
    /// ConditionExpression).
    #[error("{}", without_expression_name(.0))]
    Expression(#[from] ExpressionError),
}

impl PartiqlError {
    pub(super) fn malformed(statement: &str) -> PartiqlError {
        PartiqlError::Malformed(statement.to_owned())
    }
}

/// `Invalid ConditionExpression: Incorrect operand type...` as
/// `Incorrect operand type...`.
fn without_expression_name(error: &ExpressionError) -> String {
    let message = error.to_string();
    match message
        .strip_prefix("Invalid ")
        .and_then(|rest| rest.split_once("Expression: "))
    {
        Some((name, detail)) if !name.contains(' ') => detail.to_owned(),
        _ => message,
    }
}

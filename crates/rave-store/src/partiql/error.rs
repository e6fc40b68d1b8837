//! Why a statement is refused, in DynamoDB's words where it has them.

use crate::ExpressionError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartiqlError {
    /// The statement does not parse. DynamoDB quotes the statement.
    #[error("Statement wasn't well formed, can't be processed: {0}")]
    Malformed(String),
    /// The statement is empty.
    #[error("Statement wasn't well formed, can't be processed: ")]
    Empty,
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
    /// What the expression rules refuse of a WHERE, SET or projection.
    #[error("{0}")]
    Expression(#[from] ExpressionError),
}

impl PartiqlError {
    pub(super) fn malformed(statement: &str) -> PartiqlError {
        PartiqlError::Malformed(statement.to_owned())
    }
}

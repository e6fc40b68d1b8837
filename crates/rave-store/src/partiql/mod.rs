//! PartiQL for DynamoDB (ExecuteStatement, BatchExecuteStatement,
//! ExecuteTransaction): a statement and its `?` parameters parsed into the
//! typed trees the expression parser builds, for the endpoint to run as the
//! operations they stand for (its translation holds them to a table's key
//! schema: which WHERE is a Query, which names an item).
//!
//! One set of expression rules serves both languages. `lexer` and
//! `cursor` read PartiQL's own tokens and literals (`'text'`, numbers,
//! `{'k': v}`, `[..]`, `<<..>>`, `?`); `statement` reads the four
//! statements; `rewrite` writes each WHERE, SET value and projection again
//! as a DynamoDB expression over generated placeholders, which
//! [`ExpressionParser`] then parses with DynamoDB's rules (operand types,
//! functions, BETWEEN, IN, size, overlapping paths) into [`Condition`],
//! [`Update`] and [`Path`]s.
//!
//! Served (the developer guide's "PartiQL - a SQL-compatible query language
//! for Amazon DynamoDB", statements and functions): `SELECT` with `*` or
//! document paths, `FROM "table"` or `"table"."index"`, `WHERE` with
//! comparisons, `BETWEEN`, `IN`, `begins_with`, `contains`,
//! `attribute_exists`, `attribute_not_exists`, `attribute_type`, `size`,
//! `IS [NOT] MISSING`, `IS [NOT] NULL` or a type, a condition function
//! compared with `true` or `false`, `AND`, `OR`, `NOT`, and `ORDER BY` one
//! key; `INSERT
//! INTO .. VALUE {..}`; `UPDATE .. SET | REMOVE .. WHERE .. [RETURNING ..]`
//! with `list_append`, `if_not_exists`, `set_add`, `set_delete`, `+`, `-`;
//! `DELETE FROM .. WHERE .. [RETURNING ALL OLD *]`; the FROM-first UPDATE;
//! comments. Anything else (`EXISTS`, arithmetic in a WHERE, functions
//! PartiQL for DynamoDB lacks) is refused, never guessed at.

mod cursor;
mod error;
mod lexer;
mod rewrite;
mod statement;

use crate::{
    AttributeValue, Condition, ExpressionError, ExpressionParser, Item, Path, ReturnValues, Update,
};

use cursor::Cursor;
pub use error::PartiqlError;
use statement::Form;

/// A statement, its expressions parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The table named after FROM, INTO or UPDATE.
    pub table: String,
    /// The WHERE, if any.
    pub condition: Option<Condition>,
    pub kind: StatementKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    Select {
        /// `"table"."index"`'s index.
        index: Option<String>,
        /// The paths listed, `None` for `*`.
        projection: Option<Vec<Path>>,
        /// `ORDER BY ... DESC` (true) or `ASC` (false), if written.
        descending: Option<bool>,
    },
    Insert {
        item: Item,
    },
    Update {
        update: Update,
        returning: ReturnValues,
    },
    Delete {
        returning: ReturnValues,
    },
}

impl Statement {
    /// Parses `statement` with `parameters` standing for its `?`s, in order.
    pub fn parse(
        statement: &str,
        parameters: &[AttributeValue],
    ) -> Result<Statement, PartiqlError> {
        if statement.trim().is_empty() {
            return Err(PartiqlError::Empty);
        }
        let tokens = lexer::tokenize(statement)?;
        let mut cursor = Cursor::new(statement, tokens, parameters);
        let written = cursor.statement()?;
        Statement::typed(written).map_err(|error| match error {
            // What PartiQL's grammar lets through and the expression
            // grammar does not (`a = 'x' AND`) is as malformed.
            PartiqlError::Expression(
                ExpressionError::Syntax { .. } | ExpressionError::TooDeep { .. },
            ) => PartiqlError::malformed(statement),
            error => error,
        })
    }

    /// The statement's expressions parsed into their trees.
    fn typed(written: statement::Written) -> Result<Statement, PartiqlError> {
        let placeholders = &written.placeholders;
        let names = (!placeholders.names.is_empty()).then_some(&placeholders.names);
        let values = (!placeholders.values.is_empty()).then_some(&placeholders.values);
        let mut parser = ExpressionParser::new(names, values)?;
        let condition = written
            .condition
            .as_deref()
            .map(|text| parser.condition(text))
            .transpose()?;
        let kind = match written.form {
            Form::Select {
                index,
                projection,
                descending,
            } => StatementKind::Select {
                index,
                projection: projection
                    .as_deref()
                    .map(|text| parser.projection(text))
                    .transpose()?,
                descending,
            },
            Form::Insert { item } => StatementKind::Insert { item },
            Form::Update { update, returning } => StatementKind::Update {
                update: parser.update(&update)?,
                returning,
            },
            Form::Delete { returning } => StatementKind::Delete { returning },
        };
        parser.finish().map_err(PartiqlError::from)?;
        Ok(Statement {
            table: written.table,
            condition,
            kind,
        })
    }
}

#[cfg(test)]
mod tests;

//! DynamoDB's expression strings parsed into the typed trees of `expr`, with
//! DynamoDB's validation rules and messages: the reverse of `render`, for
//! serving DynamoDB's own request format.
//!
//! One [`ExpressionParser`] serves one request: it holds the request's
//! `ExpressionAttributeNames` and `ExpressionAttributeValues`, parses each
//! expression the request carries (condition, filter, key condition, update,
//! projection), and [`ExpressionParser::finish`] then refuses placeholders
//! that none of them used, as DynamoDB does.
//!
//! The work is split the way DynamoDB's answers are: `lexer` keeps each
//! token's place in the text (for the `near: "..."` of syntax errors),
//! `parser` holds what the grammars share and the order errors are reported
//! in, one module per grammar (`condition`, `key_condition`, `update`,
//! `projection`), `reserved` the developer guide's reserved words, and
//! `error` the `ExpressionError` whose `Display` is DynamoDB's message. A key
//! condition comes back with its names as written; `KeyCondition::bind`
//! (`bound.rs`) then holds it to the key schema it reads.
//!
//! Where DynamoDB accepts something the typed trees cannot hold, the parser
//! refuses it: `begins_with` and `contains` take a document path as their
//! first operand, and `size` a document path. Parentheses nest at most 64
//! deep: DynamoDB documents no such limit, but its 4 KB expressions could
//! otherwise nest deep enough to exhaust the stack of a recursive descent.
//!
//! `tests/expressions.rs` holds the parser to `Renderer`: any tree DynamoDB
//! accepts, rendered and parsed back, is the same tree.

mod condition;
mod error;
mod functions;
mod key_condition;
mod lexer;
mod parser;
mod projection;
mod reserved;
mod scope;
mod update;

use std::collections::HashMap;

use crate::{AttributeValue, Condition, KeyCondition, Path, Update};

pub use error::{DocumentPath, ExpressionError, ExpressionKind, PlaceholderMap};
use parser::Parser;
use scope::Scope;

/// Parses the expressions of one request against its placeholder maps.
#[derive(Debug)]
pub struct ExpressionParser<'m> {
    scope: Scope<'m>,
    /// Whether any expression was parsed, and any that can use values
    /// (all but projections).
    parsed_any: bool,
    parsed_value_expression: bool,
}

impl<'m> ExpressionParser<'m> {
    /// Checks the maps themselves: not empty when given, every key a
    /// placeholder (`#name`, `:value`), every value one an item could hold.
    pub fn new(
        names: Option<&'m HashMap<String, String>>,
        values: Option<&'m HashMap<String, AttributeValue>>,
    ) -> Result<ExpressionParser<'m>, ExpressionError> {
        check_keys(PlaceholderMap::Names, '#', names.map(|m| m.keys()))?;
        check_keys(PlaceholderMap::Values, ':', values.map(|m| m.keys()))?;
        if let Some(values) = values {
            let invalid = values
                .iter()
                .filter_map(|(key, value)| value.validate().err().map(|reason| (key, reason)))
                .min();
            if let Some((key, reason)) = invalid {
                return Err(ExpressionError::InvalidValue {
                    key: key.clone(),
                    reason,
                });
            }
        }
        Ok(ExpressionParser {
            scope: Scope::new(names, values),
            parsed_any: false,
            parsed_value_expression: false,
        })
    }

    /// A `ConditionExpression`.
    pub fn condition(&mut self, text: &str) -> Result<Condition, ExpressionError> {
        self.parse_condition(ExpressionKind::Condition, text)
    }

    /// A `FilterExpression`: a condition, named differently in messages.
    pub fn filter(&mut self, text: &str) -> Result<Condition, ExpressionError> {
        self.parse_condition(ExpressionKind::Filter, text)
    }

    /// A `KeyConditionExpression`, with names as written: checking them
    /// against the table's key schema is the caller's.
    pub fn key_condition(&mut self, text: &str) -> Result<KeyCondition, ExpressionError> {
        let condition = self.parse_condition(ExpressionKind::KeyCondition, text)?;
        key_condition::key_condition(condition)
    }

    /// An `UpdateExpression`.
    pub fn update(&mut self, text: &str) -> Result<Update, ExpressionError> {
        self.parsed_any = true;
        self.parsed_value_expression = true;
        let mut parser = Parser::new(
            ExpressionKind::Update,
            text,
            &mut self.scope,
            update::KEYWORDS,
        )?;
        let update = parser.update()?;
        parser.finish(update)
    }

    /// A `ProjectionExpression`: the paths to return, in order.
    pub fn projection(&mut self, text: &str) -> Result<Vec<Path>, ExpressionError> {
        self.parsed_any = true;
        let mut parser = Parser::new(ExpressionKind::Projection, text, &mut self.scope, &[])?;
        let paths = parser.projection()?;
        parser.finish(paths)
    }

    fn parse_condition(
        &mut self,
        kind: ExpressionKind,
        text: &str,
    ) -> Result<Condition, ExpressionError> {
        self.parsed_any = true;
        self.parsed_value_expression = true;
        let mut parser = Parser::new(kind, text, &mut self.scope, condition::KEYWORDS)?;
        let condition = parser.condition()?;
        parser.finish(condition)
    }

    /// Refuses placeholders no expression used, once the request's
    /// expressions are parsed (and placeholder maps with no expression that
    /// could use them).
    pub fn finish(self) -> Result<(), ExpressionError> {
        let unused = [
            (
                PlaceholderMap::Names,
                self.parsed_any,
                self.scope.unused_names(),
            ),
            (
                PlaceholderMap::Values,
                self.parsed_value_expression,
                self.scope.unused_values(),
            ),
        ];
        for (map, used_by_some_expression, keys) in unused {
            match keys {
                Some(_) if !used_by_some_expression => {
                    return Err(ExpressionError::PlaceholdersWithoutExpressions { map });
                }
                Some(keys) if !keys.is_empty() => {
                    return Err(ExpressionError::UnusedPlaceholders { map, keys });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn check_keys<'k>(
    map: PlaceholderMap,
    sigil: char,
    keys: Option<impl Iterator<Item = &'k String>>,
) -> Result<(), ExpressionError> {
    let Some(keys) = keys else {
        return Ok(());
    };
    let mut keys = keys.peekable();
    if keys.peek().is_none() {
        return Err(ExpressionError::EmptyPlaceholders { map });
    }
    let invalid = keys
        .filter(|key| {
            let rest = key.strip_prefix(sigil).unwrap_or("");
            rest.is_empty() || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .min();
    match invalid {
        Some(key) => Err(ExpressionError::InvalidPlaceholder {
            map,
            key: key.clone(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;

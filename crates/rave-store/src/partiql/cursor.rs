//! A cursor over a statement's tokens, and the literals PartiQL writes
//! values with: `'text'`, numbers, `true`, `false`, `null`, `{'k': v}` maps,
//! `[v, ...]` lists, `<<v, ...>>` sets and `?` parameters.

use std::collections::{BTreeMap, BTreeSet};

use crate::{AttributeValue, Number};

use super::error::PartiqlError;
use super::lexer::Token;

pub(super) struct Cursor<'s> {
    pub(super) statement: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    parameters: &'s [AttributeValue],
    used_parameters: usize,
}

impl<'s> Cursor<'s> {
    pub(super) fn new(
        statement: &'s str,
        tokens: Vec<Token>,
        parameters: &'s [AttributeValue],
    ) -> Cursor<'s> {
        Cursor {
            statement,
            tokens,
            pos: 0,
            parameters,
            used_parameters: 0,
        }
    }

    pub(super) fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<&Token> {
        self.tokens.get(self.pos + offset)
    }

    /// The token before the next one, if any.
    pub(super) fn previous(&self) -> Option<&Token> {
        self.pos.checked_sub(1).and_then(|at| self.tokens.get(at))
    }

    pub(super) fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += usize::from(token.is_some());
        token
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    /// The statement does not parse here: a term missing at its end, or
    /// anything else out of place.
    pub(super) fn malformed(&self) -> PartiqlError {
        match self.at_end() {
            true => PartiqlError::UnexpectedTerm,
            false => PartiqlError::malformed(self.statement),
        }
    }

    pub(super) fn at_keyword(&self, keyword: &str) -> bool {
        self.peek().is_some_and(|t| t.is_keyword(keyword))
    }

    pub(super) fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.at_keyword(keyword);
        self.pos += usize::from(found);
        found
    }

    pub(super) fn expect_keyword(&mut self, keyword: &str) -> Result<(), PartiqlError> {
        match self.eat_keyword(keyword) {
            true => Ok(()),
            false => Err(self.malformed()),
        }
    }

    pub(super) fn at_symbol(&self, symbol: &str) -> bool {
        matches!(self.peek(), Some(Token::Symbol(s)) if *s == symbol)
    }

    pub(super) fn eat_symbol(&mut self, symbol: &str) -> bool {
        let found = self.at_symbol(symbol);
        self.pos += usize::from(found);
        found
    }

    pub(super) fn expect_symbol(&mut self, symbol: &str) -> Result<(), PartiqlError> {
        match self.eat_symbol(symbol) {
            true => Ok(()),
            false => Err(self.malformed()),
        }
    }

    /// A table, index or attribute name: bare or `"quoted"`.
    pub(super) fn name(&mut self) -> Result<String, PartiqlError> {
        match self.next() {
            Some(Token::Word(name) | Token::Quoted(name)) => Ok(name),
            _ => Err(self.malformed()),
        }
    }

    /// The next `?`'s value.
    pub(super) fn parameter(&mut self) -> Result<AttributeValue, PartiqlError> {
        let value = self
            .parameters
            .get(self.used_parameters)
            .cloned()
            .ok_or(PartiqlError::ParameterCount)?;
        self.used_parameters += 1;
        Ok(value)
    }

    /// Every `?` has had its value and every value its `?`.
    pub(super) fn check_parameters_used(&self) -> Result<(), PartiqlError> {
        match self.used_parameters == self.parameters.len() {
            true => Ok(()),
            false => Err(PartiqlError::ParameterCount),
        }
    }

    /// Whether a literal starts here.
    pub(super) fn at_literal(&self) -> bool {
        match self.peek() {
            Some(Token::Text(_) | Token::Number(_) | Token::Parameter) => true,
            Some(Token::Symbol("{" | "[" | "<<")) => true,
            Some(Token::Symbol("-")) => matches!(self.peek_at(1), Some(Token::Number(_))),
            Some(word) => ["true", "false", "null"].iter().any(|k| word.is_keyword(k)),
            None => false,
        }
    }

    /// A literal value (or a parameter's).
    pub(super) fn literal(&mut self) -> Result<AttributeValue, PartiqlError> {
        match self.next() {
            Some(Token::Text(text)) => Ok(AttributeValue::S(text)),
            Some(Token::Number(digits)) => number(&digits),
            Some(Token::Parameter) => self.parameter(),
            Some(Token::Symbol("-")) => match self.next() {
                Some(Token::Number(digits)) => number(&format!("-{digits}")),
                _ => Err(self.malformed()),
            },
            Some(Token::Symbol("{")) => self.map(),
            Some(Token::Symbol("[")) => {
                let members = self.members("]")?;
                Ok(AttributeValue::L(members))
            }
            Some(Token::Symbol("<<")) => {
                let members = self.members(">>")?;
                set(members)
            }
            Some(word) if word.is_keyword("true") => Ok(AttributeValue::Bool(true)),
            Some(word) if word.is_keyword("false") => Ok(AttributeValue::Bool(false)),
            Some(word) if word.is_keyword("null") => Ok(AttributeValue::Null),
            _ => Err(self.malformed()),
        }
    }

    /// `{'name': value, ...}` after its `{`.
    fn map(&mut self) -> Result<AttributeValue, PartiqlError> {
        let mut members = BTreeMap::new();
        if self.eat_symbol("}") {
            return Ok(AttributeValue::M(members));
        }
        loop {
            let name = match self.next() {
                Some(Token::Text(name)) => name,
                Some(Token::Parameter) => match self.parameter()? {
                    AttributeValue::S(name) => name,
                    _ => return Err(self.malformed()),
                },
                _ => return Err(self.malformed()),
            };
            self.expect_symbol(":")?;
            let value = self.literal()?;
            members.insert(name, value);
            if self.eat_symbol("}") {
                return Ok(AttributeValue::M(members));
            }
            self.expect_symbol(",")?;
        }
    }

    /// Values separated by commas up to `close`, after the opening bracket.
    fn members(&mut self, close: &str) -> Result<Vec<AttributeValue>, PartiqlError> {
        let mut members = Vec::new();
        if self.eat_symbol(close) {
            return Ok(members);
        }
        loop {
            members.push(self.literal()?);
            if self.eat_symbol(close) {
                return Ok(members);
            }
            self.expect_symbol(",")?;
        }
    }
}

/// A number literal; one no number can hold is as malformed as a typo, and
/// DynamoDB says no more about it.
fn number(digits: &str) -> Result<AttributeValue, PartiqlError> {
    digits
        .parse::<Number>()
        .map(AttributeValue::N)
        .map_err(|_| PartiqlError::Empty)
}

/// `<<...>>`: a string, number or binary set, never empty, no member twice.
fn set(members: Vec<AttributeValue>) -> Result<AttributeValue, PartiqlError> {
    let count = members.len();
    let value = match members.first() {
        None => {
            return Err(PartiqlError::InvalidValue(
                "One or more parameter values were invalid: An string set  may not be empty"
                    .to_owned(),
            ));
        }
        Some(AttributeValue::S(_)) => AttributeValue::Ss(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::S(s) => Ok(s),
                    _ => Err(mixed_set()),
                })
                .collect::<Result<BTreeSet<_>, _>>()?,
        ),
        Some(AttributeValue::N(_)) => AttributeValue::Ns(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::N(n) => Ok(n),
                    _ => Err(mixed_set()),
                })
                .collect::<Result<BTreeSet<_>, _>>()?,
        ),
        Some(AttributeValue::B(_)) => AttributeValue::Bs(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::B(b) => Ok(b),
                    _ => Err(mixed_set()),
                })
                .collect::<Result<BTreeSet<_>, _>>()?,
        ),
        Some(_) => return Err(mixed_set()),
    };
    let distinct = match &value {
        AttributeValue::Ss(s) => s.len(),
        AttributeValue::Ns(s) => s.len(),
        AttributeValue::Bs(s) => s.len(),
        _ => count,
    };
    match distinct == count {
        true => Ok(value),
        false => Err(PartiqlError::DuplicateSetMember),
    }
}

fn mixed_set() -> PartiqlError {
    PartiqlError::InvalidValue(
        "One or more parameter values were invalid: A set may only hold strings, numbers or binaries, all of one type"
            .to_owned(),
    )
}

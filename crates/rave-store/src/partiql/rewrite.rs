//! A PartiQL condition, assignment or path list written again as a
//! DynamoDB expression, so that the expression parser (`crate::parse`)
//! reads it with its rules and its trees: every name becomes a `#n`
//! placeholder (PartiQL names may be DynamoDB's reserved words), every
//! literal and `?` a `:v` placeholder, `!=` is `<>`, `IN [..]` is
//! `IN (..)`, and `x IS [NOT] MISSING` is `attribute_[not_]exists(x)`.

use std::collections::HashMap;

use crate::AttributeValue;

use super::cursor::Cursor;
use super::error::PartiqlError;
use super::lexer::Token;

/// The placeholders the rewritten expressions use.
#[derive(Debug, Default)]
pub(super) struct Placeholders {
    pub(super) names: HashMap<String, String>,
    pub(super) values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    fn name(&mut self, name: String) -> String {
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), name);
        placeholder
    }

    pub(super) fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder, value);
        format!(":v{}", self.values.len() - 1)
    }
}

/// What a rewrite may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grammar {
    /// A WHERE: comparisons, BETWEEN, IN, IS [NOT] MISSING, the condition
    /// functions, AND, OR, NOT.
    Condition,
    /// The right of `SET path =`: operands, `+`, `-`, `list_append`,
    /// `if_not_exists`.
    Assignment,
}

impl Grammar {
    fn functions(self) -> &'static [&'static str] {
        match self {
            Grammar::Condition => &[
                "attribute_exists",
                "attribute_not_exists",
                "attribute_type",
                "begins_with",
                "contains",
                "size",
            ],
            Grammar::Assignment => &["list_append", "if_not_exists"],
        }
    }
}

const CONDITION_KEYWORDS: [&str; 5] = ["AND", "OR", "NOT", "BETWEEN", "IN"];

impl Cursor<'_> {
    /// A document path: a name, then `.name` and `[index]` steps.
    pub(super) fn path(&mut self, placeholders: &mut Placeholders) -> Result<String, PartiqlError> {
        let mut text = placeholders.name(self.name()?);
        loop {
            if self.eat_symbol(".") {
                text.push('.');
                text.push_str(&placeholders.name(self.name()?));
            } else if self.eat_symbol("[") {
                match self.next() {
                    Some(Token::Number(index)) if index.bytes().all(|b| b.is_ascii_digit()) => {
                        text.push_str(&format!("[{index}]"));
                    }
                    _ => return Err(self.malformed()),
                }
                self.expect_symbol("]")?;
            } else {
                return Ok(text);
            }
        }
    }

    /// Tokens up to one of `stops` (keywords, or `,` for an assignment)
    /// outside parentheses, as expression text.
    pub(super) fn rewrite(
        &mut self,
        grammar: Grammar,
        stops: &[&str],
        placeholders: &mut Placeholders,
    ) -> Result<String, PartiqlError> {
        let mut text = String::new();
        let mut depth = 0usize;
        // Where the operand being written starts, for `IS MISSING`.
        let mut operand_start = 0;
        // The condition functions open here: where each starts, and the
        // depth inside its parentheses.
        let mut calls: Vec<(usize, usize)> = Vec::new();
        while let Some(token) = self.peek() {
            let stop = depth == 0
                && stops.iter().any(|stop| match token {
                    Token::Symbol(symbol) => symbol == stop,
                    _ => token.is_keyword(stop),
                });
            if stop {
                break;
            }
            if self.at_literal() && !self.at_operator_minus(&text) {
                operand_start = text.len();
                let value = self.literal()?;
                text.push_str(&placeholders.value(value));
                text.push(' ');
                continue;
            }
            match token.clone() {
                Token::Word(word)
                    if grammar == Grammar::Condition
                        && CONDITION_KEYWORDS
                            .iter()
                            .any(|k| word.eq_ignore_ascii_case(k)) =>
                {
                    self.next();
                    text.push_str(&word.to_ascii_uppercase());
                    text.push(' ');
                    if word.eq_ignore_ascii_case("IN") {
                        self.in_list(&mut text, placeholders)?;
                    }
                }
                Token::Word(word)
                    if grammar == Grammar::Condition && word.eq_ignore_ascii_case("IS") =>
                {
                    self.next();
                    let negated = self.eat_keyword("NOT");
                    let operand = text.split_off(operand_start);
                    let operand = operand.trim_end();
                    if self.eat_keyword("MISSING") {
                        let function = match negated {
                            true => "attribute_exists",
                            false => "attribute_not_exists",
                        };
                        text.push_str(&format!("{function}({operand}) "));
                        continue;
                    }
                    // `IS NULL`, `IS BOOL`, ...: the attribute's type.
                    let Some(Token::Word(name)) = self.next() else {
                        return Err(self.malformed());
                    };
                    let Some(type_name) = attribute_type(&name) else {
                        return Err(self.malformed());
                    };
                    let value = placeholders.value(AttributeValue::S(type_name.to_owned()));
                    let not = if negated { "NOT " } else { "" };
                    text.push_str(&format!("{not}attribute_type({operand}, {value}) "));
                }
                Token::Word(word) if matches!(self.peek_at(1), Some(Token::Symbol("("))) => {
                    let Some(function) = grammar
                        .functions()
                        .iter()
                        .find(|f| f.eq_ignore_ascii_case(&word))
                    else {
                        return Err(PartiqlError::UnknownFunction(word));
                    };
                    self.next();
                    operand_start = text.len();
                    if *function != "size" && grammar == Grammar::Condition {
                        calls.push((text.len(), depth + 1));
                    }
                    text.push_str(function);
                }
                Token::Word(_) | Token::Quoted(_) => {
                    operand_start = text.len();
                    text.push_str(&self.path(placeholders)?);
                    text.push(' ');
                }
                Token::Symbol(symbol) => {
                    self.next();
                    let written = match symbol {
                        "!=" => "<>",
                        "(" => {
                            depth += 1;
                            operand_start = text.len();
                            "("
                        }
                        ")" => {
                            let closed = depth;
                            depth = depth.checked_sub(1).ok_or_else(|| self.malformed())?;
                            if calls.last().is_some_and(|&(_, inside)| inside == closed) {
                                let (start, _) = calls.pop().unwrap_or_default();
                                text.push_str(") ");
                                // `attribute_exists(x) = true`: the call itself.
                                if self.compared_with_truth() == Some(true) {
                                    text.insert_str(start, "NOT ");
                                }
                                operand_start = start;
                                continue;
                            }
                            ")"
                        }
                        "=" | "<>" | "<" | "<=" | ">" | ">=" | "," | "+" | "-" => symbol,
                        _ => return Err(self.malformed()),
                    };
                    text.push_str(written);
                    text.push(' ');
                }
                _ => return Err(self.malformed()),
            }
        }
        match text.is_empty() || depth > 0 {
            true => Err(self.malformed()),
            false => Ok(text.trim_end().to_owned()),
        }
    }

    /// A condition's comparison with `true` or `false`, consumed: whether it
    /// negates the condition.
    fn compared_with_truth(&mut self) -> Option<bool> {
        let equal = match self.peek() {
            Some(Token::Symbol("=")) => true,
            Some(Token::Symbol("<>" | "!=")) => false,
            _ => return None,
        };
        let truth = match self.peek_at(1) {
            Some(word) if word.is_keyword("true") => true,
            Some(word) if word.is_keyword("false") => false,
            _ => return None,
        };
        self.next();
        self.next();
        Some(equal != truth)
    }

    /// Whether a `-` here subtracts (after an operand) rather than signs a
    /// number.
    fn at_operator_minus(&self, written: &str) -> bool {
        matches!(self.peek(), Some(Token::Symbol("-")))
            && !written.is_empty()
            && !matches!(
                self.previous(),
                Some(Token::Symbol(
                    "=" | "<>" | "!=" | "<" | "<=" | ">" | ">=" | "(" | "," | "+" | "-"
                ))
            )
            && !self
                .previous()
                .is_some_and(|t| CONDITION_KEYWORDS.iter().any(|k| t.is_keyword(k)))
    }

    /// `IN`'s operands, `[a, b]` or `(a, b)`, written as `(a, b)`.
    fn in_list(
        &mut self,
        text: &mut String,
        placeholders: &mut Placeholders,
    ) -> Result<(), PartiqlError> {
        let close = match self.next() {
            Some(Token::Symbol("[")) => "]",
            Some(Token::Symbol("(")) => ")",
            _ => return Err(self.malformed()),
        };
        let mut operands = Vec::new();
        loop {
            let operand = match self.at_literal() {
                true => {
                    let value = self.literal()?;
                    placeholders.value(value)
                }
                false => self.path(placeholders)?,
            };
            operands.push(operand);
            if self.eat_symbol(close) {
                break;
            }
            self.expect_symbol(",")?;
        }
        text.push_str(&format!("({}) ", operands.join(", ")));
        Ok(())
    }
}

/// The DynamoDB type `IS` names with a PartiQL type name.
fn attribute_type(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_uppercase();
    Some(match name.as_str() {
        "NULL" => "NULL",
        "BOOL" | "BOOLEAN" => "BOOL",
        "STRING" => "S",
        "INT" | "INTEGER" | "DECIMAL" | "FLOAT" | "DOUBLE" | "NUMBER" => "N",
        "BLOB" => "B",
        "LIST" => "L",
        "STRUCT" | "TUPLE" => "M",
        _ => return None,
    })
}

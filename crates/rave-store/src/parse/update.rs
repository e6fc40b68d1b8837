//! UpdateExpression:
//!
//! ```text
//! update   := section+                      (each section at most once, any order)
//! section  := "SET" path "=" value ("," path "=" value)*
//!           | "REMOVE" path ("," path)*
//!           | "ADD" path :v ("," path :v)*
//!           | "DELETE" path :v ("," path :v)*
//! value    := operand | operand "+" operand | operand "-" operand
//! operand  := path | :v | if_not_exists(path, operand) | list_append(operand, operand)
//! ```
//!
//! No two paths the update writes may overlap.

use crate::{AttributeValue, Path, SetValue, Update, UpdateOperand};

use super::error::ExpressionError;
use super::functions::is_condition_function;
use super::lexer::TokenKind;
use super::parser::{Call, Parsed, Parser, Term};

pub(super) const KEYWORDS: &[&str] = &["SET", "REMOVE", "ADD", "DELETE"];

impl Parser<'_, '_> {
    pub(super) fn update(&mut self) -> Parsed<Update> {
        let mut update = Update::new();
        let mut seen: Vec<&'static str> = Vec::new();
        let mut written: Vec<Path> = Vec::new();
        loop {
            let Some(section) = KEYWORDS.iter().copied().find(|k| self.at_keyword(k)) else {
                return Err(self.syntax_error());
            };
            self.advance();
            if seen.contains(&section) {
                self.defer(ExpressionError::RepeatedSection {
                    kind: self.kind,
                    section,
                });
            }
            seen.push(section);
            loop {
                let path = self.path()?;
                written.push(path.clone());
                match section {
                    "SET" => {
                        self.expect(TokenKind::Eq)?;
                        let value = self.set_value()?;
                        update.set.push((path, value));
                    }
                    "REMOVE" => update.remove.push(path),
                    "ADD" => {
                        let value = self.value()?;
                        self.check_set_operand("ADD", &value);
                        update.add.push((path, value));
                    }
                    _ => {
                        let value = self.value()?;
                        self.check_set_operand("DELETE", &value);
                        update.delete.push((path, value));
                    }
                }
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            if self.peek().is_none() {
                break;
            }
        }
        self.check_distinct_paths(&written);
        Ok(update)
    }

    /// `a`, `a + b`, `a - b`, or one of those in parentheses.
    fn set_value(&mut self) -> Parsed<SetValue> {
        if self.peek() == Some(TokenKind::LeftParen) {
            let start = self.mark();
            self.open()?;
            if let Ok(value) = self.arithmetic()
                && self.close().is_ok()
            {
                return Ok(value);
            }
            // Not a parenthesised sum: the parentheses belong to an operand.
            self.rewind(start);
        }
        self.arithmetic()
    }

    fn arithmetic(&mut self) -> Parsed<SetValue> {
        let left = self.term()?.0;
        let operator = match self.peek() {
            Some(TokenKind::Plus) => "+",
            Some(TokenKind::Minus) => "-",
            _ => return Ok(SetValue::Operand(self.update_operand(left))),
        };
        self.advance();
        let right = self.term()?.0;
        let left = self.update_operand(left);
        let right = self.update_operand(right);
        for operand in [&left, &right] {
            self.check_literal(operator, operand, "N");
        }
        Ok(if operator == "+" {
            SetValue::Plus(left, right)
        } else {
            SetValue::Minus(left, right)
        })
    }

    fn update_operand(&mut self, term: Term) -> UpdateOperand {
        match term {
            Term::Path(path) => UpdateOperand::Path(path),
            Term::Value(value) => UpdateOperand::Value(value),
            Term::Call(call) => self.update_function(call),
        }
    }

    fn update_function(&mut self, call: Call) -> UpdateOperand {
        let Call { name, args } = call;
        if name != "if_not_exists" && name != "list_append" {
            // A condition expression's function was refused where it stood.
            if !is_condition_function(&name) {
                self.defer(ExpressionError::UnknownFunction {
                    kind: self.kind,
                    function: name,
                });
            }
            return stand_in();
        }
        let args: Vec<UpdateOperand> = args.into_iter().map(|t| self.update_operand(t)).collect();
        let count = args.len();
        let Ok([first, second]) = <[UpdateOperand; 2]>::try_from(args) else {
            self.defer(ExpressionError::OperandCount {
                kind: self.kind,
                function: name,
                count,
            });
            return stand_in();
        };
        if name == "list_append" {
            self.check_literal(&name, &first, "L");
            self.check_literal(&name, &second, "L");
            return UpdateOperand::ListAppend(Box::new(first), Box::new(second));
        }
        match first {
            UpdateOperand::Path(path) => UpdateOperand::IfNotExists(path, Box::new(second)),
            _ => {
                self.defer(ExpressionError::PathRequired {
                    kind: self.kind,
                    function: name,
                });
                stand_in()
            }
        }
    }

    /// A literal operand of `operator` must be of type `wanted`.
    fn check_literal(&mut self, operator: &str, operand: &UpdateOperand, wanted: &str) {
        if let UpdateOperand::Value(value) = operand {
            let found = value.attribute_type().as_str();
            if found != wanted {
                self.defer(ExpressionError::OperandType {
                    kind: self.kind,
                    operator: operator.to_owned(),
                    operand_type: found.to_owned(),
                });
            }
        }
    }

    /// ADD takes a number or a set, DELETE a set.
    fn check_set_operand(&mut self, operator: &str, value: &AttributeValue) {
        let operand_type = match value {
            AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_) => return,
            AttributeValue::N(_) if operator == "ADD" => return,
            AttributeValue::N(_) => "NUMBER",
            AttributeValue::S(_) => "STRING",
            AttributeValue::B(_) => "BINARY",
            AttributeValue::Bool(_) => "BOOLEAN",
            AttributeValue::Null => "NULL",
            AttributeValue::L(_) => "LIST",
            AttributeValue::M(_) => "MAP",
        };
        self.defer(ExpressionError::SetOperandType {
            kind: self.kind,
            operator: operator.to_owned(),
            operand_type: operand_type.to_owned(),
        });
    }
}

/// Stands in for an operand whose error is deferred; never returned.
fn stand_in() -> UpdateOperand {
    UpdateOperand::Value(AttributeValue::Null)
}

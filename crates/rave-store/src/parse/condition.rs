//! ConditionExpression and FilterExpression; a KeyConditionExpression is
//! read with the same grammar before Query's own rules apply:
//!
//! ```text
//! condition  := and ("OR" and)*
//! and        := not ("AND" not)*
//! not        := "NOT" not | primary
//! primary    := "(" condition ")" | comparison
//! comparison := term ("=" | "<>" | "<" | "<=" | ">" | ">=") term
//!             | term "BETWEEN" term "AND" term
//!             | term "IN" "(" term ("," term)* ")"
//!             | function "(" term ("," term)* ")"
//! ```
//!
//! Keywords are case-insensitive; function names are not. `NOT` binds
//! tighter than `AND`, which binds tighter than `OR`; both associate to the
//! left.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::{AttributeType, AttributeValue, Comparator, Condition, Number, Operand, Path, order};

use super::error::{DocumentPath, ExpressionError, ExpressionKind};
use super::functions::is_condition_function;
use super::lexer::TokenKind;
use super::parser::{Call, Parsed, Parser, Term};

pub(super) const KEYWORDS: &[&str] = &["AND", "OR", "NOT", "BETWEEN", "IN"];

/// DynamoDB's limit on the values an `IN` compares against.
const MAX_IN_OPERANDS: usize = 100;

/// A parsed condition, and whether it was written as one parenthesised
/// group (so a group directly around it is redundant).
struct Group {
    condition: Condition,
    parenthesised: bool,
}

impl Parser<'_, '_> {
    pub(super) fn condition(&mut self) -> Parsed<Condition> {
        Ok(self.or()?.condition)
    }

    fn or(&mut self) -> Parsed<Group> {
        let mut left = self.and()?;
        while self.eat_keyword("OR") {
            let right = self.and()?;
            left = Group {
                condition: Condition::Or(Box::new(left.condition), Box::new(right.condition)),
                parenthesised: false,
            };
        }
        Ok(left)
    }

    fn and(&mut self) -> Parsed<Group> {
        let mut left = self.not()?;
        while self.eat_keyword("AND") {
            let right = self.not()?;
            left = Group {
                condition: Condition::And(Box::new(left.condition), Box::new(right.condition)),
                parenthesised: false,
            };
        }
        Ok(left)
    }

    fn not(&mut self) -> Parsed<Group> {
        // DynamoDB's grammar is `NOT condition`: a NOT may negate a NOT.
        if self.eat_keyword("NOT") {
            let inner = self.not()?;
            return Ok(Group {
                condition: Condition::Not(Box::new(inner.condition)),
                parenthesised: false,
            });
        }
        self.primary()
    }

    /// `(` opens either a group of conditions or a parenthesised operand
    /// (`(a) = :v`, `(size(a)) > :n`); the group is tried first, and its
    /// error is the one reported when neither reading parses.
    fn primary(&mut self) -> Parsed<Group> {
        let comparison = |parser: &mut Self| {
            Ok(Group {
                condition: parser.comparison()?,
                parenthesised: false,
            })
        };
        if self.peek() != Some(TokenKind::LeftParen) {
            return comparison(self);
        }
        let start = self.mark();
        match self.group() {
            // A comparator after the group: it was an operand after all.
            Ok(_) if self.at_comparison() => {
                self.rewind(start);
                comparison(self)
            }
            Ok(group) => Ok(group),
            Err(group_error @ ExpressionError::Syntax { .. }) => {
                self.rewind(start);
                comparison(self).map_err(|_| group_error)
            }
            Err(other) => Err(other),
        }
    }

    fn at_comparison(&self) -> bool {
        matches!(
            self.peek(),
            Some(
                TokenKind::Eq
                    | TokenKind::Ne
                    | TokenKind::Lt
                    | TokenKind::Le
                    | TokenKind::Gt
                    | TokenKind::Ge
            )
        ) || self.at_keyword("BETWEEN")
            || self.at_keyword("IN")
    }

    fn group(&mut self) -> Parsed<Group> {
        self.open()?;
        let inner = self.or()?;
        self.close()?;
        if inner.parenthesised {
            self.redundant_parentheses();
        }
        Ok(Group {
            condition: inner.condition,
            parenthesised: true,
        })
    }

    fn comparison(&mut self) -> Parsed<Condition> {
        let (left, _) = self.term()?;
        let comparator = match self.peek() {
            Some(TokenKind::Eq) => Some(Comparator::Eq),
            Some(TokenKind::Ne) => Some(Comparator::Ne),
            Some(TokenKind::Lt) => Some(Comparator::Lt),
            Some(TokenKind::Le) => Some(Comparator::Le),
            Some(TokenKind::Gt) => Some(Comparator::Gt),
            Some(TokenKind::Ge) => Some(Comparator::Ge),
            _ => None,
        };
        if let Some(comparator) = comparator {
            self.advance();
            let (right, _) = self.term()?;
            let left = self.operand(left);
            let right = self.operand(right);
            if !matches!(comparator, Comparator::Eq | Comparator::Ne) {
                self.check_ordered(comparator_symbol(comparator), &[&left, &right]);
            }
            self.check_distinct(comparator_symbol(comparator), &left, &right);
            return Ok(Condition::Compare(left, comparator, right));
        }
        if self.eat_keyword("BETWEEN") {
            let (low, _) = self.term()?;
            if !self.eat_keyword("AND") {
                return Err(self.syntax_error());
            }
            let (high, _) = self.term()?;
            let value = self.operand(left);
            let low = self.operand(low);
            let high = self.operand(high);
            if self.check_ordered("BETWEEN", &[&value, &low, &high]) {
                self.check_bounds(&low, &high);
            }
            return Ok(Condition::Between(value, low, high));
        }
        if self.eat_keyword("IN") {
            self.open()?;
            let mut list = vec![self.term()?.0];
            while self.eat(TokenKind::Comma) {
                list.push(self.term()?.0);
            }
            self.close()?;
            if list.len() > MAX_IN_OPERANDS {
                self.defer(ExpressionError::TooManyInOperands {
                    kind: self.kind,
                    count: list.len(),
                });
            }
            let value = self.operand(left);
            let list = list.into_iter().map(|term| self.operand(term)).collect();
            return Ok(Condition::In(value, list));
        }
        match left {
            Term::Call(call) => Ok(self.function_condition(call)),
            // A bare operand is not a condition: the next token is out of place.
            Term::Path(_) | Term::Value(_) => Err(self.syntax_error()),
        }
    }

    /// A term where a value is expected: only `size` may be called there.
    fn operand(&mut self, term: Term) -> Operand {
        match term {
            Term::Path(path) => Operand::Path(path),
            Term::Value(value) => Operand::Value(value),
            Term::Call(call) => {
                let name = call.name.clone();
                match self.call_arguments(call) {
                    // The size of a value is known as it is parsed.
                    Some(args) if name == "size" => match &args[0] {
                        Operand::Value(value) => match crate::expr::size_of(value) {
                            Some(size) => {
                                Operand::Value(AttributeValue::N(Number::from(size as u64)))
                            }
                            None => {
                                let error =
                                    self.operand_type("size", value.attribute_type().as_str());
                                self.defer(error);
                                stand_in()
                            }
                        },
                        argument => match self.path_argument(&name, argument) {
                            Some(path) => Operand::Size(path),
                            None => stand_in(),
                        },
                    },
                    Some(_) => {
                        self.defer(ExpressionError::MisusedFunction {
                            kind: self.kind,
                            function: name,
                        });
                        stand_in()
                    }
                    None => stand_in(),
                }
            }
        }
    }

    /// A function where a condition is expected.
    fn function_condition(&mut self, call: Call) -> Condition {
        let name = call.name.clone();
        let Some(mut args) = self.call_arguments(call) else {
            return stand_in_condition();
        };
        let path_of = |parser: &mut Self, arg: &Operand| {
            parser
                .path_argument(&name, arg)
                .unwrap_or_else(|| Path::attr(""))
        };
        match name.as_str() {
            "attribute_exists" => Condition::AttributeExists(path_of(self, &args[0])),
            "attribute_not_exists" => Condition::AttributeNotExists(path_of(self, &args[0])),
            "attribute_type" => {
                let path = path_of(self, &args[0]);
                let attribute_type = self.attribute_type(&args[1]);
                Condition::AttributeType(path, attribute_type.unwrap_or(AttributeType::Null))
            }
            "begins_with"
                if self.kind == ExpressionKind::KeyCondition
                    && !matches!(args[0], Operand::Path(_)) =>
            {
                self.defer(ExpressionError::KeyConditionInvalid {
                    reason: "begins_with operator must have the key attribute as its first operand"
                        .to_owned(),
                });
                stand_in_condition()
            }
            "begins_with" | "contains" => {
                let operand = args.pop().unwrap_or_else(stand_in);
                let path = path_of(self, &args[0]);
                self.check_distinct(&name, &args[0], &operand);
                if name == "begins_with" {
                    if let Operand::Value(value) = &operand
                        && !matches!(value, AttributeValue::S(_) | AttributeValue::B(_))
                    {
                        self.defer(self.operand_type(&name, value.attribute_type().as_str()));
                    }
                    Condition::BeginsWith(path, operand)
                } else {
                    Condition::Contains(path, operand)
                }
            }
            _ => {
                // `size` yields a number, not a truth value.
                self.defer(ExpressionError::MisusedFunction {
                    kind: self.kind,
                    function: name.clone(),
                });
                stand_in_condition()
            }
        }
    }

    /// The arguments of a condition function as operands, once the name and
    /// the number of arguments are known to be right.
    fn call_arguments(&mut self, call: Call) -> Option<Vec<Operand>> {
        let arity = match call.name.as_str() {
            name if !is_condition_function(name) => {
                self.defer(ExpressionError::UnknownFunction {
                    kind: self.kind,
                    function: call.name,
                });
                return None;
            }
            "attribute_type" | "begins_with" | "contains" => 2,
            _ => 1,
        };
        let args: Vec<Operand> = call.args.into_iter().map(|t| self.operand(t)).collect();
        if args.len() != arity {
            self.defer(ExpressionError::OperandCount {
                kind: self.kind,
                function: call.name,
                count: args.len(),
            });
            return None;
        }
        Some(args)
    }

    fn path_argument(&mut self, function: &str, arg: &Operand) -> Option<Path> {
        match arg {
            Operand::Path(path) => Some(path.clone()),
            Operand::Value(_) | Operand::Size(_) => {
                self.defer(ExpressionError::PathRequired {
                    kind: self.kind,
                    function: function.to_owned(),
                });
                None
            }
        }
    }

    fn attribute_type(&mut self, arg: &Operand) -> Option<AttributeType> {
        let found = match arg {
            Operand::Value(AttributeValue::S(name)) => name,
            Operand::Value(other) => {
                let error = self.operand_type("attribute_type", other.attribute_type().as_str());
                self.defer(error);
                return None;
            }
            // DynamoDB cannot know a path's type before it reads the item.
            Operand::Path(_) | Operand::Size(_) => {
                let error = self.operand_type("attribute_type", "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
                self.defer(error);
                return None;
            }
        };
        let parsed = ALL_TYPES.into_iter().find(|t| t.as_str() == found);
        if parsed.is_none() {
            self.defer(ExpressionError::AttributeTypeName {
                kind: self.kind,
                found: found.clone(),
            });
        }
        parsed
    }

    fn operand_type(&self, function: &str, operand_type: &str) -> ExpressionError {
        ExpressionError::OperandType {
            kind: self.kind,
            operator: function.to_owned(),
            operand_type: operand_type.to_owned(),
        }
    }

    fn check_distinct(&mut self, operator: &str, first: &Operand, second: &Operand) {
        if let (Operand::Path(a), Operand::Path(b)) = (first, second)
            && a == b
        {
            self.defer(ExpressionError::OperandsNotDistinct {
                kind: self.kind,
                operator: operator.to_owned(),
                operand: DocumentPath(a.clone()),
            });
        }
    }

    /// The literal operands of an ordering (`<`, `BETWEEN`...) must be of a
    /// type with an order: a string, a number or a binary. Only the first
    /// one that is not is reported, as DynamoDB does; true when all are.
    fn check_ordered(&mut self, operator: &str, operands: &[&Operand]) -> bool {
        let unordered = operands.iter().find_map(|operand| match operand {
            Operand::Value(
                value @ (AttributeValue::Bool(_)
                | AttributeValue::Null
                | AttributeValue::L(_)
                | AttributeValue::M(_)
                | AttributeValue::Ss(_)
                | AttributeValue::Ns(_)
                | AttributeValue::Bs(_)),
            ) => Some(value.attribute_type().as_str()),
            _ => None,
        });
        match unordered {
            Some(found) => {
                let error = self.operand_type(operator, found);
                self.defer(error);
                false
            }
            None => true,
        }
    }

    /// Literal bounds must share a type and be in order.
    fn check_bounds(&mut self, low: &Operand, high: &Operand) {
        let (Operand::Value(low), Operand::Value(high)) = (low, high) else {
            return;
        };
        let (lower, upper) = (shown(low), shown(high));
        let kind = self.kind;
        if low.attribute_type() != high.attribute_type() {
            self.defer(ExpressionError::BetweenTypes { kind, lower, upper });
        } else if order(low, high).is_some_and(|o| o.is_gt()) {
            self.defer(ExpressionError::BetweenOrder { kind, lower, upper });
        }
    }
}

const ALL_TYPES: [AttributeType; 10] = [
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
];

fn comparator_symbol(comparator: Comparator) -> &'static str {
    match comparator {
        Comparator::Eq => "=",
        Comparator::Ne => "<>",
        Comparator::Lt => "<",
        Comparator::Le => "<=",
        Comparator::Gt => ">",
        Comparator::Ge => ">=",
    }
}

/// A value as DynamoDB shows it in messages: `{N:5}`, `{S:abc}`.
fn shown(value: &AttributeValue) -> String {
    let body = match value {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.to_string(),
        AttributeValue::B(b) => BASE64.encode(b),
        AttributeValue::Bool(b) => b.to_string(),
        AttributeValue::Null => "true".to_owned(),
        other => format!("{other:?}"),
    };
    format!("{{{}:{body}}}", value.attribute_type().as_str())
}

/// Stands in for an operand whose error is deferred; never returned.
fn stand_in() -> Operand {
    Operand::Value(AttributeValue::Null)
}

fn stand_in_condition() -> Condition {
    Condition::AttributeExists(Path::attr(""))
}

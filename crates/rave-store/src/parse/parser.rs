//! What every expression grammar shares: a cursor over the tokens, document
//! paths, placeholders, operand terms, and the order DynamoDB reports errors
//! in.
//!
//! A syntax error stops the parse at once. Every other error is deferred:
//! the parse goes on with a stand-in, and when the whole text has parsed the
//! error DynamoDB ranks first is returned. So a syntax error anywhere wins
//! over, say, a reserved word before it, as with DynamoDB.

use crate::{AttributeValue, Path, PathElement};

use super::error::{DocumentPath, ExpressionError, ExpressionKind};
use super::functions::is_condition_function;
use super::lexer::{Token, TokenKind, tokenize};
use super::reserved::is_reserved;
use super::scope::Scope;

pub(super) type Parsed<T> = Result<T, ExpressionError>;

/// DynamoDB's limit on an expression's length, in bytes.
const MAX_EXPRESSION_BYTES: usize = 4096;

/// How deep parentheses (groups, parenthesised operands, function calls)
/// may nest. Far beyond any real expression, and small enough that the
/// recursive descent cannot exhaust a thread's stack.
const MAX_DEPTH: usize = 64;

/// A place in the parse to come back to, with the errors deferred so far
/// (an abandoned reading must not leave its errors behind).
#[derive(Debug, Clone)]
pub(super) struct Mark {
    pos: usize,
    depth: usize,
    deferred: Option<(u8, ExpressionError)>,
}

/// An operand as written, before the grammar decides what it may be.
#[derive(Debug, Clone)]
pub(super) enum Term {
    Path(Path),
    Value(AttributeValue),
    Call(Call),
}

/// `name(arg, ...)`: a function, known or not.
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub name: String,
    pub args: Vec<Term>,
}

pub(super) struct Parser<'p, 'm> {
    pub kind: ExpressionKind,
    source: &'p str,
    tokens: Vec<Token>,
    pos: usize,
    scope: &'p mut Scope<'m>,
    /// Words that are keywords in this kind of expression, and so can be
    /// neither names nor functions.
    keywords: &'static [&'static str],
    deferred: Option<(u8, ExpressionError)>,
    depth: usize,
}

impl<'p, 'm> Parser<'p, 'm> {
    /// `Empty` if the text is empty (whitespace alone is a syntax error, as
    /// in DynamoDB).
    pub(super) fn new(
        kind: ExpressionKind,
        source: &'p str,
        scope: &'p mut Scope<'m>,
        keywords: &'static [&'static str],
    ) -> Parsed<Self> {
        if source.is_empty() {
            return Err(ExpressionError::Empty { kind });
        }
        if source.len() > MAX_EXPRESSION_BYTES {
            return Err(ExpressionError::TooLong {
                kind,
                size: source.len(),
            });
        }
        Ok(Parser {
            kind,
            source,
            tokens: tokenize(source),
            pos: 0,
            scope,
            keywords,
            deferred: None,
            depth: 0,
        })
    }

    /// The result, once every token is used and no error was deferred.
    pub(super) fn finish<T>(self, value: T) -> Parsed<T> {
        if self.pos < self.tokens.len() {
            return Err(self.syntax_error());
        }
        match self.deferred {
            Some((_, error)) => Err(error),
            None => Ok(value),
        }
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            depth: self.depth,
            deferred: self.deferred.clone(),
        }
    }

    pub(super) fn rewind(&mut self, mark: Mark) {
        self.pos = mark.pos;
        self.depth = mark.depth;
        self.deferred = mark.deferred;
    }

    /// Consumes an opening parenthesis, one level deeper.
    pub(super) fn open(&mut self) -> Parsed<()> {
        self.expect(TokenKind::LeftParen)?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExpressionError::TooDeep {
                kind: self.kind,
                limit: MAX_DEPTH,
            });
        }
        Ok(())
    }

    /// Consumes a closing parenthesis, one level up.
    pub(super) fn close(&mut self) -> Parsed<()> {
        self.expect(TokenKind::RightParen)?;
        self.depth -= 1;
        Ok(())
    }

    pub(super) fn peek(&self) -> Option<TokenKind> {
        self.tokens.get(self.pos).map(|t| t.kind)
    }

    fn peek_at(&self, offset: usize) -> Option<TokenKind> {
        self.tokens.get(self.pos + offset).map(|t| t.kind)
    }

    fn text(&self, token: Token) -> &'p str {
        &self.source[token.start..token.end]
    }

    pub(super) fn advance(&mut self) {
        self.pos += 1;
    }

    /// Consumes the next token if it is of `kind`.
    pub(super) fn eat(&mut self, kind: TokenKind) -> bool {
        if self.peek() == Some(kind) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, kind: TokenKind) -> Parsed<Token> {
        match self.tokens.get(self.pos) {
            Some(&token) if token.kind == kind => {
                self.pos += 1;
                Ok(token)
            }
            _ => Err(self.syntax_error()),
        }
    }

    /// Whether the next token is the keyword `keyword` (any case).
    pub(super) fn at_keyword(&self, keyword: &str) -> bool {
        self.tokens.get(self.pos).is_some_and(|&t| {
            t.kind == TokenKind::Word && self.text(t).eq_ignore_ascii_case(keyword)
        })
    }

    pub(super) fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.at_keyword(keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    fn is_keyword(&self, token: Token) -> bool {
        token.kind == TokenKind::Word
            && self
                .keywords
                .iter()
                .any(|k| self.text(token).eq_ignore_ascii_case(k))
    }

    /// DynamoDB's syntax error at the next token: the token itself and the
    /// text from the token before it to the token after it.
    pub(super) fn syntax_error(&self) -> ExpressionError {
        let kind = self.kind;
        let Some(&token) = self.tokens.get(self.pos) else {
            // From the last token to the end of the text, spaces included.
            let near = self
                .tokens
                .last()
                .map_or("", |last| &self.source[last.start..])
                .to_owned();
            return ExpressionError::Syntax {
                kind,
                token: "<EOF>".to_owned(),
                near,
            };
        };
        let from = match self.pos.checked_sub(1) {
            Some(before) => self.tokens[before].start,
            None => token.start,
        };
        let to = self.tokens.get(self.pos + 1).map_or(token.end, |t| t.end);
        ExpressionError::Syntax {
            kind,
            token: self.text(token).to_owned(),
            near: self.source[from..to].to_owned(),
        }
    }

    /// Records an error to report once the text has parsed, unless one
    /// DynamoDB ranks before it is already recorded.
    pub(super) fn defer(&mut self, error: ExpressionError) {
        let rank = rank(self.kind, &error);
        if self.deferred.as_ref().is_none_or(|(r, _)| rank < *r) {
            self.deferred = Some((rank, error));
        }
    }

    /// `name`, `#name`, then any number of `.name`, `.#name` and `[index]`.
    pub(super) fn path(&mut self) -> Parsed<Path> {
        let mut elements = vec![self.path_name()?];
        loop {
            if self.eat(TokenKind::Dot) {
                elements.push(self.path_name()?);
            } else if self.eat(TokenKind::LeftBracket) {
                let index = self.index()?;
                self.expect(TokenKind::RightBracket)?;
                elements.push(PathElement::Index(index));
            } else {
                return Ok(Path(elements));
            }
        }
    }

    fn path_name(&mut self) -> Parsed<PathElement> {
        let Some(&token) = self.tokens.get(self.pos) else {
            return Err(self.syntax_error());
        };
        let name = match token.kind {
            TokenKind::Word if !self.is_keyword(token) => {
                let name = self.text(token);
                if is_reserved(name) {
                    self.defer(ExpressionError::ReservedKeyword {
                        kind: self.kind,
                        keyword: name.to_owned(),
                    });
                }
                name.to_owned()
            }
            TokenKind::NamePlaceholder => {
                let placeholder = self.text(token);
                match self.scope.name(placeholder) {
                    Some(name) => name,
                    None => {
                        self.defer(ExpressionError::UndefinedName {
                            kind: self.kind,
                            name: placeholder.to_owned(),
                        });
                        placeholder.to_owned()
                    }
                }
            }
            _ => return Err(self.syntax_error()),
        };
        self.pos += 1;
        Ok(PathElement::Attr(name))
    }

    fn index(&mut self) -> Parsed<usize> {
        let token = self.tokens.get(self.pos).copied();
        match token {
            Some(t) if t.kind == TokenKind::Number => match self.text(t).parse() {
                Ok(index) => {
                    self.pos += 1;
                    Ok(index)
                }
                Err(_) => Err(self.syntax_error()),
            },
            _ => Err(self.syntax_error()),
        }
    }

    /// `:name`, resolved (a stand-in when undefined; the error is deferred).
    pub(super) fn value(&mut self) -> Parsed<AttributeValue> {
        let token = self.expect(TokenKind::ValuePlaceholder)?;
        let placeholder = self.text(token);
        Ok(match self.scope.value(placeholder) {
            Some(value) => value,
            None => {
                self.defer(ExpressionError::UndefinedValue {
                    kind: self.kind,
                    value: placeholder.to_owned(),
                });
                AttributeValue::Null
            }
        })
    }

    /// A path, a value, a function call, or one of these in parentheses.
    /// Returns whether the term was parenthesised, so callers can refuse
    /// redundant parentheses.
    pub(super) fn term(&mut self) -> Parsed<(Term, bool)> {
        if self.peek() == Some(TokenKind::LeftParen) {
            self.open()?;
            let (inner, parenthesised) = self.term()?;
            self.close()?;
            if parenthesised {
                self.redundant_parentheses();
            }
            return Ok((inner, true));
        }
        let term = match self.peek() {
            Some(TokenKind::ValuePlaceholder) => Term::Value(self.value()?),
            Some(TokenKind::Word)
                if self.peek_at(1) == Some(TokenKind::LeftParen)
                    && !self.is_keyword(self.tokens[self.pos]) =>
            {
                Term::Call(self.call()?)
            }
            _ => Term::Path(self.path()?),
        };
        Ok((term, false))
    }

    fn call(&mut self) -> Parsed<Call> {
        let name = self.expect(TokenKind::Word)?;
        let name = self.text(name).to_owned();
        // Reported where it stands: before any error inside its arguments.
        if self.kind == ExpressionKind::Update && is_condition_function(&name) {
            self.defer(ExpressionError::FunctionNotInUpdate {
                kind: self.kind,
                function: name.clone(),
            });
        }
        self.open()?;
        let mut args = vec![self.term()?.0];
        while self.eat(TokenKind::Comma) {
            args.push(self.term()?.0);
        }
        self.close()?;
        Ok(Call { name, args })
    }

    /// Update expressions accept doubled parentheses; the others refuse them.
    pub(super) fn redundant_parentheses(&mut self) {
        if self.kind != ExpressionKind::Update {
            self.defer(ExpressionError::RedundantParentheses { kind: self.kind });
        }
    }

    /// Checks a path written by an update or a projection against the
    /// paths before it: none may contain another, and where two part ways
    /// they must part as two map keys or two list indexes.
    pub(super) fn check_distinct_paths(&mut self, paths: &[Path]) {
        for (i, second) in paths.iter().enumerate() {
            for first in &paths[..i] {
                if let Some(error) = path_clash(self.kind, first, second) {
                    self.defer(error);
                }
            }
        }
    }
}

fn path_clash(kind: ExpressionKind, first: &Path, second: &Path) -> Option<ExpressionError> {
    let pair = || (DocumentPath(first.clone()), DocumentPath(second.clone()));
    for (a, b) in first.0.iter().zip(&second.0) {
        match (a, b) {
            (PathElement::Attr(_), PathElement::Index(_))
            | (PathElement::Index(_), PathElement::Attr(_)) => {
                let (first, second) = pair();
                return Some(ExpressionError::ConflictingPaths {
                    kind,
                    first,
                    second,
                });
            }
            _ if a != b => return None,
            _ => {}
        }
    }
    let (first, second) = pair();
    Some(ExpressionError::OverlappingPaths {
        kind,
        first,
        second,
    })
}

/// The order DynamoDB reports errors in when an expression has several
/// (lower first). Conditions and updates check in different orders.
fn rank(kind: ExpressionKind, error: &ExpressionError) -> u8 {
    use ExpressionError as E;
    if kind == ExpressionKind::Update {
        match error {
            E::ReservedKeyword { .. } | E::FunctionNotInUpdate { .. } => 0,
            E::UnknownFunction { .. } => 1,
            E::RepeatedSection { .. } => 2,
            E::UndefinedName { .. } => 3,
            E::UndefinedValue { .. } => 4,
            E::OverlappingPaths { .. } => 5,
            E::ConflictingPaths { .. } => 6,
            E::SetOperandType { .. } => 7,
            _ => 8,
        }
    } else {
        match error {
            E::RedundantParentheses { .. } => 0,
            E::UnknownFunction { .. } => 1,
            E::MisusedFunction { .. } => 2,
            E::ReservedKeyword { .. } => 3,
            // A literal's type is checked as the expression is read: an
            // undefined placeholder after it does not hide it.
            E::UndefinedName { .. }
            | E::UndefinedValue { .. }
            | E::OperandType { .. }
            | E::AttributeTypeName { .. }
            | E::BetweenTypes { .. }
            | E::BetweenOrder { .. } => 4,
            E::OperandCount { .. } => 5,
            E::OperandsNotDistinct { .. } => 6,
            E::OverlappingPaths { .. } => 7,
            E::ConflictingPaths { .. } => 8,
            _ => 9,
        }
    }
}

//! PartiQL's tokens: words (keywords and bare names), `"quoted"` names,
//! `'string'` literals (a quote doubled inside), numbers (`7`, `7.3e6`,
//! `.73e1`), `?` parameters and punctuation, `<<` and `>>` (a set's
//! brackets) among it. `-- line` and `/* block */` comments are space.

use super::error::PartiqlError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A keyword or a bare name: `[A-Za-z_][A-Za-z0-9_$]*`.
    Word(String),
    /// A `"double-quoted"` name.
    Quoted(String),
    /// A `'single-quoted'` string literal.
    Text(String),
    /// Digits, with a fraction and an exponent if written.
    Number(String),
    /// `?`: the next of the request's `Parameters`.
    Parameter,
    /// Punctuation and operators, as written (`!=` and `<>` both kept).
    Symbol(&'static str),
}

impl Token {
    /// Whether this is the keyword `keyword` (any case).
    pub(super) fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self, Token::Word(word) if word.eq_ignore_ascii_case(keyword))
    }
}

const SYMBOLS: [&str; 22] = [
    "<<", ">>", "<=", ">=", "<>", "!=", "=", "<", ">", "(", ")", "[", "]", "{", "}", ",", ".", ":",
    "*", "+", "-", ";",
];

pub(super) fn tokenize(statement: &str) -> Result<Vec<Token>, PartiqlError> {
    let mut tokens = Vec::new();
    let mut rest = statement;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if let Some(comment) = rest.strip_prefix("--") {
            rest = comment.find('\n').map_or("", |end| &comment[end..]);
            continue;
        }
        if let Some(comment) = rest.strip_prefix("/*") {
            let end = comment
                .find("*/")
                .ok_or_else(|| PartiqlError::malformed(statement))?;
            rest = &comment[end + 2..];
            continue;
        }
        // A number may start at its decimal point.
        if c == '.' && rest[1..].starts_with(|next: char| next.is_ascii_digit()) {
            let used = 1 + number_length(&rest[1..]);
            let fraction = &rest[..used];
            tokens.push(Token::Number(format!("0{fraction}")));
            rest = &rest[used..];
            continue;
        }
        let (token, used) = match c {
            '\'' | '"' => quoted(rest, c, statement)?,
            '?' => (Token::Parameter, 1),
            c if c.is_ascii_alphabetic() || c == '_' => {
                let used = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(rest.len());
                (Token::Word(rest[..used].to_owned()), used)
            }
            c if c.is_ascii_digit() => {
                let used = number_length(rest);
                (Token::Number(rest[..used].to_owned()), used)
            }
            _ => match SYMBOLS.iter().find(|symbol| rest.starts_with(**symbol)) {
                Some(symbol) => (Token::Symbol(symbol), symbol.len()),
                None => return Err(PartiqlError::malformed(statement)),
            },
        };
        tokens.push(token);
        rest = &rest[used..];
    }
    // A statement may end with one semicolon.
    if tokens.last() == Some(&Token::Symbol(";")) {
        tokens.pop();
    }
    Ok(tokens)
}

/// A quoted string or name starting at `text`'s first character, the quote
/// doubled to stand for itself; and the bytes it took.
fn quoted(text: &str, quote: char, statement: &str) -> Result<(Token, usize), PartiqlError> {
    let mut value = String::new();
    let mut chars = text.char_indices().skip(1).peekable();
    while let Some((at, c)) = chars.next() {
        if c != quote {
            value.push(c);
            continue;
        }
        if chars.peek().is_some_and(|&(_, next)| next == quote) {
            chars.next();
            value.push(quote);
            continue;
        }
        let token = match quote {
            '"' => Token::Quoted(value),
            _ => Token::Text(value),
        };
        return Ok((token, at + 1));
    }
    Err(PartiqlError::malformed(statement))
}

/// Digits, then an optional fraction and exponent.
fn number_length(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digits_from = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        at
    };
    let mut end = digits_from(0);
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits_from(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = digits_from(end + 1 + sign);
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_into_tokens() {
        use Token::*;
        assert_eq!(
            tokenize(r#"SELECT "a b".c FROM t WHERE x <> 'it''s' AND n >= 1.5e3 AND s = <<?>>;"#)
                .unwrap(),
            vec![
                Word("SELECT".into()),
                Quoted("a b".into()),
                Symbol("."),
                Word("c".into()),
                Word("FROM".into()),
                Word("t".into()),
                Word("WHERE".into()),
                Word("x".into()),
                Symbol("<>"),
                Text("it's".into()),
                Word("AND".into()),
                Word("n".into()),
                Symbol(">="),
                Number("1.5e3".into()),
                Word("AND".into()),
                Word("s".into()),
                Symbol("="),
                Symbol("<<"),
                Parameter,
                Symbol(">>"),
            ]
        );
    }

    #[test]
    fn comments_are_space_and_a_number_may_start_at_its_point() {
        use Token::*;
        assert_eq!(
            tokenize("-- a note\nSELECT /* all */ * FROM t -- the end").unwrap(),
            vec![
                Word("SELECT".into()),
                Symbol("*"),
                Word("FROM".into()),
                Word("t".into())
            ]
        );
        assert_eq!(
            tokenize("n = .73e1 - -.5").unwrap(),
            vec![
                Word("n".into()),
                Symbol("="),
                Number("0.73e1".into()),
                Symbol("-"),
                Symbol("-"),
                Number("0.5".into()),
            ]
        );
        assert!(tokenize("SELECT * FROM t /* open").is_err());
    }

    #[test]
    fn unterminated_quotes_and_unknown_characters_are_malformed() {
        assert!(tokenize("SELECT * FROM 't").is_err());
        assert!(tokenize("SELECT # FROM t").is_err());
    }
}

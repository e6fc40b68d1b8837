//! Splits an expression into tokens, each remembering where it sits in the
//! text: DynamoDB's syntax errors quote the text around the offending token.
//!
//! The lexer never fails. A character no expression uses becomes an
//! `Unknown` token, and the parser reports it where it stops, the same way
//! it reports any other token out of place.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// A name or keyword: `[A-Za-z_][A-Za-z0-9_]*`. Keywords depend on the
    /// expression, so the parser decides which words are keywords.
    Word,
    /// `#name`.
    NamePlaceholder,
    /// `:value`.
    ValuePlaceholder,
    /// Digits; only valid as a list index.
    Number,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    LeftParen,
    RightParen,
    LeftBracket,
    RightBracket,
    Dot,
    Comma,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    /// Byte range in the expression.
    pub start: usize,
    pub end: usize,
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word_part(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// DynamoDB separates tokens with ASCII whitespace only.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

pub(crate) fn tokenize(source: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = source.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if is_space(c) {
            continue;
        }
        let mut take_while = |keep: fn(char) -> bool| {
            let mut end = start + c.len_utf8();
            while let Some(&(i, next)) = chars.peek() {
                if !keep(next) {
                    break;
                }
                end = i + next.len_utf8();
                chars.next();
            }
            end
        };
        let (kind, end) = match c {
            '#' => (TokenKind::NamePlaceholder, take_while(is_word_part)),
            ':' => (TokenKind::ValuePlaceholder, take_while(is_word_part)),
            c if is_word_start(c) => (TokenKind::Word, take_while(is_word_part)),
            c if c.is_ascii_digit() => (TokenKind::Number, take_while(|c| c.is_ascii_digit())),
            '<' | '>' => {
                let second = chars.peek().map(|&(_, next)| next);
                let (kind, long) = match (c, second) {
                    ('<', Some('>')) => (TokenKind::Ne, true),
                    ('<', Some('=')) => (TokenKind::Le, true),
                    ('>', Some('=')) => (TokenKind::Ge, true),
                    ('<', _) => (TokenKind::Lt, false),
                    _ => (TokenKind::Gt, false),
                };
                if long {
                    chars.next();
                }
                (kind, start + if long { 2 } else { 1 })
            }
            _ => {
                let kind = match c {
                    '=' => TokenKind::Eq,
                    '+' => TokenKind::Plus,
                    '-' => TokenKind::Minus,
                    '(' => TokenKind::LeftParen,
                    ')' => TokenKind::RightParen,
                    '[' => TokenKind::LeftBracket,
                    ']' => TokenKind::RightBracket,
                    '.' => TokenKind::Dot,
                    ',' => TokenKind::Comma,
                    _ => TokenKind::Unknown,
                };
                (kind, start + c.len_utf8())
            }
        };
        tokens.push(Token { kind, start, end });
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(source: &str) -> Vec<(TokenKind, &str)> {
        tokenize(source)
            .into_iter()
            .map(|t| (t.kind, &source[t.start..t.end]))
            .collect()
    }

    #[test]
    fn words_placeholders_and_operators() {
        use TokenKind::*;
        assert_eq!(
            lex("a.#b[12] <>:v_1 AND size(x)>=3"),
            vec![
                (Word, "a"),
                (Dot, "."),
                (NamePlaceholder, "#b"),
                (LeftBracket, "["),
                (Number, "12"),
                (RightBracket, "]"),
                (Ne, "<>"),
                (ValuePlaceholder, ":v_1"),
                (Word, "AND"),
                (Word, "size"),
                (LeftParen, "("),
                (Word, "x"),
                (RightParen, ")"),
                (Ge, ">="),
                (Number, "3"),
            ]
        );
        assert_eq!(
            lex("a<b<=c>d = e+f-g, h"),
            vec![
                (Word, "a"),
                (Lt, "<"),
                (Word, "b"),
                (Le, "<="),
                (Word, "c"),
                (Gt, ">"),
                (Word, "d"),
                (Eq, "="),
                (Word, "e"),
                (Plus, "+"),
                (Word, "f"),
                (Minus, "-"),
                (Word, "g"),
                (Comma, ","),
                (Word, "h"),
            ]
        );
    }

    #[test]
    fn anything_else_is_one_unknown_token_per_character() {
        use TokenKind::*;
        assert_eq!(
            lex("a ! é\u{a0}#"),
            vec![
                (Word, "a"),
                (Unknown, "!"),
                (Unknown, "é"),
                (Unknown, "\u{a0}"),
                (NamePlaceholder, "#"),
            ]
        );
        assert!(lex(" \t\r\n").is_empty());
    }
}

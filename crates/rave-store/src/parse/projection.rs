//! ProjectionExpression: `path ("," path)*`, no two paths overlapping.

use crate::Path;

use super::lexer::TokenKind;
use super::parser::{Parsed, Parser};

impl Parser<'_, '_> {
    pub(super) fn projection(&mut self) -> Parsed<Vec<Path>> {
        let mut paths = vec![self.path()?];
        while self.eat(TokenKind::Comma) {
            paths.push(self.path()?);
        }
        self.check_distinct_paths(&paths);
        Ok(paths)
    }
}

//! What can go wrong reading an export: the file as a whole (its header
//! lacks what the mapping needs), or one row, named by its line.

use std::fmt;

/// The file cannot be imported at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    #[error("cannot read the CSV header: {0}")]
    Header(String),
    #[error("the header has no column {column:?}, which the {mapping} mapping needs for {field}")]
    MissingColumn {
        column: String,
        field: &'static str,
        mapping: String,
    },
    #[error("the header has no column for {0} (map one with --map COLUMN={0})")]
    Unmapped(&'static str),
    #[error("{0}")]
    Mapping(String),
    #[error("product map, line {line}: {reason}")]
    ProductMap { line: u64, reason: String },
}

/// An import stopped: a bad row (without `skip_bad_lines`), the store, or
/// the media store.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0} (--skip-bad-lines goes on past bad lines)")]
    BadRow(RowError),
    #[error(transparent)]
    Store(#[from] rave_comments::CommentsError),
    #[error(transparent)]
    Media(#[from] rave_media::StoreError),
}

/// One row that cannot become a comment: its line in the file (where the
/// record starts, counting from 1 with the header) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct RowError {
    pub line: u64,
    /// The field at fault, when one is (`rating`, `date`, `product`, ...).
    pub field: Option<&'static str>,
    pub reason: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "line {}: {field}: {}", self.line, self.reason),
            None => write!(f, "line {}: {}", self.line, self.reason),
        }
    }
}

//! What an import is told: the mapping, the default language, the
//! product map.

use crate::platform::Mapping;
use crate::product::ProductMap;

/// How rows become comments: the mapping, the language a row gets when it
/// names none and none is detected, and the product map.
#[derive(Debug, Clone)]
pub struct Options {
    pub mapping: Mapping,
    /// `--language`: the language of rows whose language is neither given
    /// nor reliably detected from their text.
    pub default_language: Option<rave_comments::Language>,
    pub products: ProductMap,
}

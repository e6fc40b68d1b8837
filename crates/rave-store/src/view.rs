//! Items read without building them: a page of a Query can hand its items to
//! the caller as views over what the backend holds, so that a caller that
//! wants a few attributes of each (the comment codec) reads them in place
//! instead of from a freshly built attribute map per item.
//!
//! `ItemView` is the read access, implemented by `Item` and by the engine's
//! stored items; its `AttributeRef` borrows strings and carries numbers by
//! value, which covers what a codec reads without allocating. `ItemVisitor`
//! is what `Store::query_visiting` hands each item of a page to.

use crate::number::Number;
use crate::value::{AttributeValue, Item};

/// One attribute of an [`ItemView`]: strings borrowed, numbers by value,
/// other types as the value itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttributeRef<'a> {
    S(&'a str),
    N(Number),
    Bool(bool),
    Null,
    /// Binary, list, map or set.
    Other(&'a AttributeValue),
}

impl<'a> AttributeRef<'a> {
    pub fn as_s(&self) -> Option<&'a str> {
        match self {
            AttributeRef::S(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_n(&self) -> Option<Number> {
        match self {
            AttributeRef::N(n) => Some(*n),
            _ => None,
        }
    }

    /// The value as an owned [`AttributeValue`].
    pub fn to_value(&self) -> AttributeValue {
        match self {
            AttributeRef::S(s) => AttributeValue::S((*s).to_owned()),
            AttributeRef::N(n) => AttributeValue::N(*n),
            AttributeRef::Bool(b) => AttributeValue::Bool(*b),
            AttributeRef::Null => AttributeValue::Null,
            AttributeRef::Other(value) => (*value).clone(),
        }
    }
}

impl<'a> From<&'a AttributeValue> for AttributeRef<'a> {
    fn from(value: &'a AttributeValue) -> AttributeRef<'a> {
        match value {
            AttributeValue::S(s) => AttributeRef::S(s),
            AttributeValue::N(n) => AttributeRef::N(*n),
            AttributeValue::Bool(b) => AttributeRef::Bool(*b),
            AttributeValue::Null => AttributeRef::Null,
            other => AttributeRef::Other(other),
        }
    }
}

/// Read access to the top-level attributes of one item.
pub trait ItemView {
    fn attribute(&self, name: &str) -> Option<AttributeRef<'_>>;
    /// Shows `visit` every attribute, in name order (bytewise, as an
    /// [`Item`] iterates), so that a caller writing the whole item out
    /// need not build it.
    fn for_each_attribute(&self, visit: &mut dyn FnMut(&str, AttributeRef<'_>));
    /// The whole item, built.
    fn to_item(&self) -> Item;
}

impl ItemView for Item {
    fn attribute(&self, name: &str) -> Option<AttributeRef<'_>> {
        self.get(name).map(AttributeRef::from)
    }

    fn for_each_attribute(&self, visit: &mut dyn FnMut(&str, AttributeRef<'_>)) {
        for (name, value) in self {
            visit(name, AttributeRef::from(value));
        }
    }

    fn to_item(&self) -> Item {
        self.clone()
    }
}

/// Receives the items a [`crate::Store::query_visiting`] page keeps, one at
/// a time and in the page's order.
pub type ItemVisitor = Box<dyn FnMut(&dyn ItemView) + Send>;

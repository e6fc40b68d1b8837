//! The placeholder maps of one request (`ExpressionAttributeNames` and
//! `ExpressionAttributeValues`), and which placeholders its expressions
//! used: DynamoDB refuses a request whose maps hold a placeholder that no
//! expression names.

use std::collections::{BTreeSet, HashMap};

use crate::value::AttributeValue;

#[derive(Debug)]
pub(super) struct Scope<'m> {
    names: Option<&'m HashMap<String, String>>,
    values: Option<&'m HashMap<String, AttributeValue>>,
    used_names: BTreeSet<String>,
    used_values: BTreeSet<String>,
}

impl<'m> Scope<'m> {
    pub(super) fn new(
        names: Option<&'m HashMap<String, String>>,
        values: Option<&'m HashMap<String, AttributeValue>>,
    ) -> Scope<'m> {
        Scope {
            names,
            values,
            used_names: BTreeSet::new(),
            used_values: BTreeSet::new(),
        }
    }

    /// The name `#placeholder` stands for, noting it used.
    pub(super) fn name(&mut self, placeholder: &str) -> Option<String> {
        let name = self.names?.get(placeholder)?.clone();
        self.used_names.insert(placeholder.to_owned());
        Some(name)
    }

    /// The value `:placeholder` stands for, noting it used.
    pub(super) fn value(&mut self, placeholder: &str) -> Option<AttributeValue> {
        let value = self.values?.get(placeholder)?.clone();
        self.used_values.insert(placeholder.to_owned());
        Some(value)
    }

    /// The name placeholders no expression used, sorted; `None` without a map.
    pub(super) fn unused_names(&self) -> Option<Vec<String>> {
        self.names.map(|map| unused(map.keys(), &self.used_names))
    }

    /// The value placeholders no expression used, sorted; `None` without a map.
    pub(super) fn unused_values(&self) -> Option<Vec<String>> {
        self.values.map(|map| unused(map.keys(), &self.used_values))
    }
}

fn unused<'k>(keys: impl Iterator<Item = &'k String>, used: &BTreeSet<String>) -> Vec<String> {
    let mut unused: Vec<String> = keys.filter(|k| !used.contains(*k)).cloned().collect();
    unused.sort();
    unused
}

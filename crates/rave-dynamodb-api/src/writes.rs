//! What the item writes (PutItem, UpdateItem, DeleteItem and
//! TransactWriteItems' actions) share: the check DynamoDB makes of an
//! update to an index key before reading the item, and the words of the
//! size refusal.

use rave_store::{AttributeValue, SetValue, TableDefinition, Update, UpdateOperand};

use crate::error::ApiError;

/// The engine's refusal of an item past 400 KB.
pub(crate) const ITEM_TOO_LARGE: &str = "Item size has exceeded the maximum allowed size";
/// DynamoDB's, when an update made it so.
pub(crate) const UPDATE_TOO_LARGE: &str =
    "Item size to update has exceeded the maximum allowed size";

/// DynamoDB refuses, before reading the item, an update that sets a key of
/// a secondary index to an empty string or binary.
pub(crate) fn check_index_key_update(
    definition: &TableDefinition,
    update: &Update,
) -> Result<(), ApiError> {
    let index_keys: Vec<&str> = definition
        .key_attributes()
        .map(|attr| attr.name.as_str())
        .filter(|name| !definition.key_schema.attributes().any(|a| a.name == *name))
        .collect();
    for (path, value) in &update.set {
        let SetValue::Operand(UpdateOperand::Value(value)) = value else {
            continue;
        };
        let kind = match value {
            AttributeValue::S(s) if s.is_empty() => "string",
            AttributeValue::B(b) if b.is_empty() => "binary",
            _ => continue,
        };
        if path.0.len() == 1 && path.top().is_some_and(|top| index_keys.contains(&top)) {
            return Err(ApiError::validation(format!(
                "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty {kind} value."
            )));
        }
    }
    Ok(())
}

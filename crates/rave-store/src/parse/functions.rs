//! The functions DynamoDB's condition expressions call. Update expressions
//! need the list too: calling one of them there gets DynamoDB's own refusal
//! (the function is not allowed in an update) rather than "invalid function
//! name", and the parser reports it before any error in its arguments.

/// Whether `name` is a function of condition expressions (names are
/// case-sensitive).
pub(super) fn is_condition_function(name: &str) -> bool {
    matches!(
        name,
        "attribute_exists"
            | "attribute_not_exists"
            | "attribute_type"
            | "begins_with"
            | "contains"
            | "size"
    )
}

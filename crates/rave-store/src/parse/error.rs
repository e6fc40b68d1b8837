//! Why an expression was refused, worded as DynamoDB words its
//! `ValidationException`s, so clients of rave's wire protocol see the
//! messages they would see from DynamoDB.

use std::fmt;

use crate::{Path, PathElement, StoreError};

/// Which request parameter an expression came from; DynamoDB names it in
/// every message about the expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpressionKind {
    Condition,
    Filter,
    KeyCondition,
    Update,
    Projection,
}

impl fmt::Display for ExpressionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExpressionKind::Condition => "ConditionExpression",
            ExpressionKind::Filter => "FilterExpression",
            ExpressionKind::KeyCondition => "KeyConditionExpression",
            ExpressionKind::Update => "UpdateExpression",
            ExpressionKind::Projection => "ProjectionExpression",
        })
    }
}

/// The tail of a [`ExpressionError::TooLong`] message: the size measured,
/// left out for an update expression.
fn size_reported(kind: ExpressionKind, size: usize) -> String {
    match kind {
        ExpressionKind::Update => String::new(),
        _ => format!(" expression size: {size}"),
    }
}

/// A refused expression or placeholder map. `Display` is the message
/// DynamoDB sends in its `ValidationException`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpressionError {
    #[error("Invalid {kind}: The expression can not be empty;")]
    Empty { kind: ExpressionKind },
    /// Longer than DynamoDB's 4 KB limit (`size` in bytes), which DynamoDB
    /// reports for every kind but an update expression.
    #[error(
        "Invalid {kind}: Expression size has exceeded the maximum allowed size;{}",
        size_reported(*kind, *size)
    )]
    TooLong { kind: ExpressionKind, size: usize },
    /// Parentheses nested deeper than rave parses (a bound that keeps the
    /// recursive parser's stack small; DynamoDB documents none).
    #[error("Invalid {kind}: The expression nests parentheses deeper than {limit} levels;")]
    TooDeep { kind: ExpressionKind, limit: usize },
    /// `token` is the offending token (`<EOF>` at the end); `near` the text
    /// from the token before it to the token after it.
    #[error("Invalid {kind}: Syntax error; token: \"{token}\", near: \"{near}\"")]
    Syntax {
        kind: ExpressionKind,
        token: String,
        near: String,
    },
    #[error("Invalid {kind}: The expression has redundant parentheses;")]
    RedundantParentheses { kind: ExpressionKind },
    #[error("Invalid {kind}: Attribute name is a reserved keyword; reserved keyword: {keyword}")]
    ReservedKeyword {
        kind: ExpressionKind,
        keyword: String,
    },
    #[error(
        "Invalid {kind}: An expression attribute name used in the document path is not defined; attribute name: {name}"
    )]
    UndefinedName { kind: ExpressionKind, name: String },
    #[error(
        "Invalid {kind}: An expression attribute value used in expression is not defined; attribute value: {value}"
    )]
    UndefinedValue { kind: ExpressionKind, value: String },
    #[error("Invalid {kind}: Invalid function name; function: {function}")]
    UnknownFunction {
        kind: ExpressionKind,
        function: String,
    },
    #[error(
        "Invalid {kind}: The function is not allowed to be used this way in an expression; function: {function}"
    )]
    MisusedFunction {
        kind: ExpressionKind,
        function: String,
    },
    #[error(
        "Invalid {kind}: Incorrect number of operands for operator or function; operator or function: {function}, number of operands: {count}"
    )]
    OperandCount {
        kind: ExpressionKind,
        function: String,
        count: usize,
    },
    #[error(
        "Invalid {kind}: Operator or function requires a document path; operator or function: {function}"
    )]
    PathRequired {
        kind: ExpressionKind,
        function: String,
    },
    /// A literal of the wrong type for a function or operator (`operand_type`
    /// as DynamoDB spells it: `N`).
    #[error(
        "Invalid {kind}: Incorrect operand type for operator or function; operator or function: {operator}, operand type: {operand_type}"
    )]
    OperandType {
        kind: ExpressionKind,
        operator: String,
        operand_type: String,
    },
    /// ADD's or DELETE's value of a type the operator does not take (`STRING`).
    #[error(
        "Invalid {kind}: Incorrect operand type for operator or function; operator: {operator}, operand type: {operand_type}, typeSet: ALLOWED_FOR_{operator}_OPERAND"
    )]
    SetOperandType {
        kind: ExpressionKind,
        operator: String,
        operand_type: String,
    },
    /// A condition function (`size`) in an update expression.
    #[error(
        "Invalid {kind}: The function is not allowed in an update expression; function: {function}"
    )]
    FunctionNotInUpdate {
        kind: ExpressionKind,
        function: String,
    },
    #[error(
        "Invalid {kind}: Invalid attribute type name found; type: {found}, valid types: {{B,NULL,SS,BOOL,L,BS,N,NS,S,M}}"
    )]
    AttributeTypeName { kind: ExpressionKind, found: String },
    #[error(
        "Invalid {kind}: The first operand must be distinct from the remaining operands for this operator or function; operator: {operator}, first operand: {operand}"
    )]
    OperandsNotDistinct {
        kind: ExpressionKind,
        operator: String,
        operand: DocumentPath,
    },
    #[error(
        "Invalid {kind}: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {lower}, upper bound operand: AttributeValue: {upper}"
    )]
    BetweenTypes {
        kind: ExpressionKind,
        lower: String,
        upper: String,
    },
    #[error(
        "Invalid {kind}: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {lower}, upper bound operand: AttributeValue: {upper}"
    )]
    BetweenOrder {
        kind: ExpressionKind,
        lower: String,
        upper: String,
    },
    #[error(
        "Invalid {kind}: The IN operator is provided with too many operands; number of operands: {count}"
    )]
    TooManyInOperands { kind: ExpressionKind, count: usize },
    #[error(
        "Invalid {kind}: The \"{section}\" section can only be used once in an update expression;"
    )]
    RepeatedSection {
        kind: ExpressionKind,
        section: &'static str,
    },
    #[error(
        "Invalid {kind}: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: {first}, path two: {second}"
    )]
    OverlappingPaths {
        kind: ExpressionKind,
        first: DocumentPath,
        second: DocumentPath,
    },
    #[error(
        "Invalid {kind}: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: {first}, path two: {second}"
    )]
    ConflictingPaths {
        kind: ExpressionKind,
        first: DocumentPath,
        second: DocumentPath,
    },
    /// The key condition uses something Query cannot use (`OR`, `NOT`,
    /// `IN`, `<>`, or a function other than `begins_with`).
    #[error("Invalid operator used in KeyConditionExpression: {operator}")]
    KeyConditionOperator { operator: String },
    #[error("KeyConditionExpressions cannot contain nested operations")]
    KeyConditionNestedOperation,
    #[error("KeyConditionExpressions cannot have conditions on nested attributes")]
    KeyConditionNestedAttribute,
    #[error("Invalid condition in KeyConditionExpression: {reason}")]
    KeyConditionInvalid { reason: String },
    #[error(
        "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key"
    )]
    KeyConditionRepeatedKey,
    /// More conditions than a partition and a sort key can take.
    #[error("Conditions can be of length 1 or 2 only")]
    KeyConditionLength,
    /// No equality for the partition key.
    #[error("Query key condition not supported")]
    KeyConditionUnsupported,
    #[error("ExpressionAttribute{map}s contains invalid key: Syntax error; key: \"{key}\"")]
    InvalidPlaceholder { map: PlaceholderMap, key: String },
    /// A value no item could hold (`reason` as `AttributeValue::validate`
    /// words it).
    #[error("ExpressionAttributeValues contains invalid value: {reason} for key {key}")]
    InvalidValue { key: String, reason: String },
    #[error("ExpressionAttribute{map}s must not be empty")]
    EmptyPlaceholders { map: PlaceholderMap },
    /// DynamoDB adds, for values, which of the operation's value-bearing
    /// expressions are missing (`: ConditionExpression is null`); only the
    /// caller knows the operation, so the message stops before that.
    #[error("ExpressionAttribute{map}s can only be specified when using expressions")]
    PlaceholdersWithoutExpressions { map: PlaceholderMap },
    /// Placeholders no expression of the request used, sorted.
    #[error("Value provided in ExpressionAttribute{map}s unused in expressions: keys: {{{}}}", keys.join(", "))]
    UnusedPlaceholders {
        map: PlaceholderMap,
        keys: Vec<String>,
    },
}

impl From<ExpressionError> for StoreError {
    fn from(error: ExpressionError) -> StoreError {
        StoreError::Validation(error.to_string())
    }
}

/// `ExpressionAttributeNames` or `ExpressionAttributeValues` (displayed as
/// the word between `ExpressionAttribute` and `s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaceholderMap {
    Names,
    Values,
}

impl fmt::Display for PlaceholderMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlaceholderMap::Names => "Name",
            PlaceholderMap::Values => "Value",
        })
    }
}

/// A resolved document path as DynamoDB prints it in messages: `[a, b, [2]]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentPath(pub Path);

impl fmt::Display for DocumentPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, element) in self.0.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match element {
                PathElement::Attr(name) => f.write_str(name)?,
                PathElement::Index(index) => write!(f, "[{index}]")?,
            }
        }
        f.write_str("]")
    }
}

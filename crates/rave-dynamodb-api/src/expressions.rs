//! Expression strings of a request: its placeholder maps and the parser
//! over them (projections are applied with `rave_store::project`).

use std::collections::HashMap;

use rave_store::{
    AttributeValue, Condition, ExpressionError, ExpressionKind, ExpressionParser, KeyCondition,
    Path, PlaceholderMap, ReturnValuesOnConditionCheckFailure,
};
use serde_json::Value;

use crate::error::ApiError;
use crate::legacy;
use crate::request::{Members, validation_errors};
use crate::wire::value_from_json;

impl From<ExpressionError> for ApiError {
    fn from(error: ExpressionError) -> ApiError {
        let request_fault = matches!(
            error,
            ExpressionError::EmptyPlaceholders { .. }
                | ExpressionError::PlaceholdersWithoutExpressions { .. }
                | ExpressionError::Empty {
                    kind: ExpressionKind::Condition
                }
                | ExpressionError::UndefinedValue {
                    kind: ExpressionKind::Condition,
                    ..
                }
        );
        if request_fault {
            ApiError::request_fault(error.to_string())
        } else {
            ApiError::validation(error.to_string())
        }
    }
}

/// A request's `ExpressionAttributeNames` and `ExpressionAttributeValues`.
#[derive(Debug)]
pub(crate) struct Placeholders {
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
}

impl Placeholders {
    /// Maps already read and checked (see `typed`).
    pub(crate) fn new(
        names: Option<HashMap<String, String>>,
        values: Option<HashMap<String, AttributeValue>>,
    ) -> Placeholders {
        Placeholders { names, values }
    }

    pub(crate) fn read(members: Members<'_>) -> Result<Placeholders, ApiError> {
        let names = members
            .object("ExpressionAttributeNames")?
            .map(|names| {
                names
                    .0
                    .iter()
                    .map(|(placeholder, name)| match name {
                        Value::String(name) => Ok((placeholder.clone(), name.clone())),
                        _ => Err(ApiError::serialization(
                            "ExpressionAttributeNames values must be strings",
                        )),
                    })
                    .collect::<Result<HashMap<_, _>, _>>()
            })
            .transpose()?;
        let values = members
            .object("ExpressionAttributeValues")?
            .map(|values| {
                values
                    .0
                    .iter()
                    .map(|(placeholder, value)| {
                        let value = value_from_json(value).map_err(|error| {
                            let older = format!(
                                "ExpressionAttributeValues contains invalid value: {} for key {placeholder}",
                                error.message.unwrap_or_default()
                            );
                            // DynamoDB's current words name no placeholder.
                            match error.current_wording {
                                Some(current) => ApiError::value_fault(older, current),
                                None => ApiError::validation(older),
                            }
                        })?;
                        Ok((placeholder.clone(), value))
                    })
                    .collect::<Result<HashMap<_, _>, ApiError>>()
            })
            .transpose()?;
        Ok(Placeholders { names, values })
    }

    pub(crate) fn parser(&self) -> Result<ExpressionParser<'_>, ApiError> {
        Ok(ExpressionParser::new(
            self.names.as_ref(),
            self.values.as_ref(),
        )?)
    }
}

/// The condition of a write, if any: its `ConditionExpression`, with every
/// placeholder checked for use, or its legacy `Expected`.
pub(crate) fn write_condition(members: Members<'_>) -> Result<Option<Condition>, ApiError> {
    legacy::refuse_mixed(
        members,
        &["Expected", "ConditionalOperator"],
        &["ConditionExpression"],
    )?;
    let placeholders = Placeholders::read(members)?;
    let mut parser = placeholders.parser()?;
    let condition = members
        .string("ConditionExpression")?
        .map(|text| parser.condition(text))
        .transpose()?;
    parser.finish().map_err(|error| match error {
        // DynamoDB names the expression that is missing, and answers bare.
        ExpressionError::PlaceholdersWithoutExpressions {
            map: PlaceholderMap::Values,
        } => ApiError::validation(format!("{error}: ConditionExpression is null")),
        error => ApiError::from(error),
    })?;
    match condition {
        Some(condition) => Ok(Some(condition)),
        None => {
            let expected = legacy::expected(members)?;
            if expected.is_none() {
                legacy::refuse_lone_operator(members)?;
            }
            Ok(expected)
        }
    }
}

/// The expressions a read may carry.
#[derive(Debug, Default)]
pub(crate) struct ReadExpressions {
    pub(crate) key_condition: Option<KeyCondition>,
    pub(crate) filter: Option<Condition>,
    /// The attributes to return; `None` for all of them.
    pub(crate) projection: Option<Vec<Path>>,
}

/// The expression strings of a read: each as its member was read (a
/// member of the wrong type refused only when its turn comes, after the
/// placeholders and the expressions before it, as DynamoDB orders them).
#[derive(Debug)]
pub(crate) struct ExpressionTexts<'a> {
    pub(crate) key_condition: Result<Option<&'a str>, ApiError>,
    pub(crate) filter: Result<Option<&'a str>, ApiError>,
    pub(crate) projection: Result<Option<&'a str>, ApiError>,
}

impl ExpressionTexts<'_> {
    /// The expressions parsed against `placeholders`, which must all be
    /// used.
    pub(crate) fn parse(self, placeholders: &Placeholders) -> Result<ReadExpressions, ApiError> {
        let mut parser = placeholders.parser()?;
        let key_condition = self
            .key_condition?
            .map(|text| parser.key_condition(text))
            .transpose()?;
        let filter = self.filter?.map(|text| parser.filter(text)).transpose()?;
        let projection = self
            .projection?
            .map(|text| parser.projection(text))
            .transpose()?;
        parser.finish()?;
        Ok(ReadExpressions {
            key_condition,
            filter,
            projection,
        })
    }
}

/// Parses a read's expressions against its placeholders, which must all
/// be used, or reads its legacy parameters (`AttributesToGet`,
/// `KeyConditions`, `QueryFilter`, `ScanFilter`) as the same trees.
/// `legacy_filter` names the legacy filter the operation has (`QueryFilter`,
/// `ScanFilter`), if any: DynamoDB ignores the other, as any member an
/// operation does not have.
pub(crate) fn read_expressions(
    members: Members<'_>,
    legacy_filter: Option<&str>,
) -> Result<ReadExpressions, ApiError> {
    let mut legacy_members = vec!["AttributesToGet", "KeyConditions"];
    legacy_members.extend(legacy_filter);
    legacy_members.push("ConditionalOperator");
    legacy::refuse_mixed(
        members,
        &legacy_members,
        &[
            "ProjectionExpression",
            "KeyConditionExpression",
            "FilterExpression",
        ],
    )?;
    let placeholders = Placeholders::read(members)?;
    let parsed = ExpressionTexts {
        key_condition: members.string("KeyConditionExpression"),
        filter: members.string("FilterExpression"),
        projection: members.string("ProjectionExpression"),
    }
    .parse(&placeholders)?;
    let mut projection = parsed.projection;
    let key_condition = match parsed.key_condition {
        Some(condition) => Some(condition),
        None => legacy::key_conditions(members)?,
    };
    let filter = match (parsed.filter, legacy_filter) {
        (Some(filter), _) => Some(filter),
        (None, Some(member)) => legacy::filter(members, member)?,
        (None, None) => None,
    };
    if filter.is_none() {
        legacy::refuse_lone_operator(members)?;
    }
    if let Some(names) = members.list("AttributesToGet")? {
        if names.is_empty() {
            return Err(validation_errors(&[
                "Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1".to_owned(),
            ]));
        }
        if let Some(repeated) = names
            .iter()
            .enumerate()
            .find_map(|(i, name)| names[..i].contains(name).then_some(name))
        {
            return Err(ApiError::validation(format!(
                "One or more parameter values were invalid: Duplicate value in attribute name: {}",
                repeated.as_str().unwrap_or_default()
            )));
        }
        let paths = names
            .iter()
            .map(|name| match name {
                Value::String(name) => Ok(Path::attr(name.clone())),
                _ => Err(ApiError::serialization(
                    "AttributesToGet must be a list of strings",
                )),
            })
            .collect::<Result<Vec<Path>, ApiError>>()?;
        projection = Some(paths);
    }
    Ok(ReadExpressions {
        key_condition,
        filter,
        projection,
    })
}

/// What a write hands back when its condition fails
/// (`ReturnValuesOnConditionCheckFailure`, NONE when absent).
pub(crate) fn on_condition_failure(
    members: Members<'_>,
) -> Result<ReturnValuesOnConditionCheckFailure, ApiError> {
    Ok(
        match members.choice("ReturnValuesOnConditionCheckFailure", &["ALL_OLD", "NONE"])? {
            Some("ALL_OLD") => ReturnValuesOnConditionCheckFailure::AllOld,
            _ => ReturnValuesOnConditionCheckFailure::None,
        },
    )
}

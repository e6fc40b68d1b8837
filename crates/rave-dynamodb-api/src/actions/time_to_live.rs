//! UpdateTimeToLive and DescribeTimeToLive over the engine's Time to Live
//! (its rules and messages); the specification's members are checked and
//! placed by their path (`timeToLiveSpecification.attributeName`).

use rave_engine::{TimeToLiveSpecification, TimeToLiveStatus};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::error::ApiError;
use crate::request::{Members, length_violation, missing, validation_errors};

pub(crate) async fn update_time_to_live(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let table = body.table_name()?;
    let specification = body.required_object("TimeToLiveSpecification")?;
    // Placed in DynamoDB's messages by their path in the request.
    let attribute_name = specification
        .string("AttributeName")?
        .ok_or_else(|| missing("TimeToLiveSpecification.AttributeName"))?;
    let at = "timeToLiveSpecification.attributeName";
    if let Some(violation) = length_violation(attribute_name, at, 1, 255) {
        return Err(validation_errors(&[violation]));
    }
    let change = TimeToLiveSpecification {
        attribute_name: attribute_name.to_owned(),
        enabled: required_bool(specification, "Enabled")?,
    };
    let applied = api.engine.update_time_to_live(table, change).await?;
    Ok(json!({
        "TimeToLiveSpecification": {
            "AttributeName": applied.attribute_name,
            "Enabled": applied.enabled,
        }
    }))
}

pub(crate) async fn describe_time_to_live(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let table = body.table_name()?;
    let description = api.engine.describe_time_to_live(table)?;
    let mut described = json!({
        "TimeToLiveStatus": match description.status {
            TimeToLiveStatus::Enabling => "ENABLING",
            TimeToLiveStatus::Enabled => "ENABLED",
            TimeToLiveStatus::Disabled => "DISABLED",
        }
    });
    if let Some(attribute) = description.attribute_name {
        described["AttributeName"] = json!(attribute);
    }
    Ok(json!({ "TimeToLiveDescription": described }))
}

/// `Enabled` has no default: DynamoDB refuses a specification without it.
fn required_bool(members: Members<'_>, member: &str) -> Result<bool, ApiError> {
    if members.0.get(member).is_none_or(Value::is_null) {
        return Err(missing(&format!("TimeToLiveSpecification.{member}")));
    }
    members.bool(member)
}

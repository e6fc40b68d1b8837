//! TagResource, UntagResource and ListTagsOfResource. Tags mean nothing to
//! the engine; they are kept with the table's metadata and described back.
//! CreateTable's `Tags` take the same checks: DynamoDB's (50 per table, key
//! and value lengths, no `aws:` keys). A table ARN of another account or
//! region is AccessDeniedException, as DynamoDB answers a caller that
//! account did not grant.

use std::collections::BTreeMap;

use rave_store::Store;
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::arn::{is_table_arn, table_in_arn};
use crate::error::{ApiError, ErrorKind};
use crate::request::{Members, missing};

/// Most tags one table carries.
const MAX_TAGS: usize = 50;
const MAX_KEY_CHARS: usize = 128;
const MAX_VALUE_CHARS: usize = 256;

pub(crate) async fn tag_resource(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let table = tagged_table(api, body, "TagResource").await?;
    let tags = read_tags(body.list("Tags")?.ok_or_else(|| missing("Tags"))?)?;
    let mut current = api.metadata.get(&table)?.unwrap_or_default().tags;
    current.extend(tags);
    if current.len() > MAX_TAGS {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!("The number of tags on a resource cannot exceed {MAX_TAGS}"),
        ));
    }
    api.metadata
        .update(&table, |metadata| metadata.tags = current)?;
    Ok(json!({}))
}

pub(crate) async fn untag_resource(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let table = tagged_table(api, body, "UntagResource").await?;
    let keys = body
        .list("TagKeys")?
        .ok_or_else(|| missing("TagKeys"))?
        .iter()
        .map(|key| match key {
            Value::String(key) => Ok(key.clone()),
            _ => Err(ApiError::serialization("TagKeys must be strings")),
        })
        .collect::<Result<Vec<String>, ApiError>>()?;
    api.metadata.update(&table, |metadata| {
        for key in &keys {
            metadata.tags.remove(key);
        }
    })?;
    Ok(json!({}))
}

/// Every tag in one page: a table has at most fifty.
pub(crate) async fn list_tags_of_resource(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let table = tagged_table(api, body, "ListTagsOfResource").await?;
    let tags = api.metadata.get(&table)?.unwrap_or_default().tags;
    let listed: Vec<Value> = tags
        .iter()
        .map(|(key, value)| json!({"Key": key, "Value": value}))
        .collect();
    Ok(json!({ "Tags": listed }))
}

/// A `Tags` list (TagResource's, CreateTable's), checked as DynamoDB checks it.
pub(crate) fn read_tags(listed: &[Value]) -> Result<BTreeMap<String, String>, ApiError> {
    let mut tags = BTreeMap::new();
    for tag in listed {
        let Value::Object(tag) = tag else {
            return Err(ApiError::serialization("Tags must be structures"));
        };
        let tag = Members(tag);
        let key = tag.required_string("Key")?;
        let value = tag.required_string("Value")?;
        if key.is_empty() || key.chars().count() > MAX_KEY_CHARS {
            return Err(ApiError::validation(format!(
                "1 validation error detected: Value '{key}' at 'tags.1.member.key' failed to satisfy constraint: Member must have length between 1 and {MAX_KEY_CHARS}"
            )));
        }
        if value.chars().count() > MAX_VALUE_CHARS {
            return Err(ApiError::validation(format!(
                "1 validation error detected: Value '{value}' at 'tags.1.member.value' failed to satisfy constraint: Member must have length less than or equal to {MAX_VALUE_CHARS}"
            )));
        }
        if key.starts_with("aws:") {
            return Err(ApiError::validation(
                "Tag keys starting with 'aws:' are reserved for system use",
            ));
        }
        tags.insert(key.to_owned(), value.to_owned());
    }
    Ok(tags)
}

/// The table a `ResourceArn` names, which must exist. A table's ARN of
/// another account or region is refused as DynamoDB refuses a caller the
/// resource's account did not grant (`operation` the one it asked for).
async fn tagged_table(
    api: &DynamoApi,
    body: Members<'_>,
    operation: &str,
) -> Result<String, ApiError> {
    let arn = body.required_string("ResourceArn")?;
    let Some(table) = table_in_arn(arn).filter(|name| !name.is_empty() && !name.contains('/'))
    else {
        if is_table_arn(arn) {
            return Err(ApiError::new(
                ErrorKind::AccessDenied,
                format!(
                    "User is not authorized to perform: dynamodb:{operation} on resource: {arn}"
                ),
            ));
        }
        return Err(ApiError::validation(format!(
            "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
        )));
    };
    match api.engine.describe_table(table).await {
        Ok(_) => Ok(table.to_owned()),
        Err(rave_store::StoreError::ResourceNotFound(_)) => Err(ApiError::new(
            ErrorKind::ResourceNotFound,
            format!("Requested resource not found: ResourceArn: {arn} not found"),
        )),
        Err(other) => Err(other.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked_as_dynamodb_checks_them() {
        let tags = read_tags(&[json!({"Key": "team", "Value": "rave"})]).expect("valid");
        assert_eq!(tags.get("team").map(String::as_str), Some("rave"));
        assert!(read_tags(&[json!({"Key": "aws:x", "Value": "v"})]).is_err());
        assert!(read_tags(&[json!({"Key": "", "Value": "v"})]).is_err());
        let long_value = "v".repeat(MAX_VALUE_CHARS + 1);
        assert!(read_tags(&[json!({"Key": "k", "Value": long_value})]).is_err());
        assert!(read_tags(&[json!({"Key": "k"})]).is_err());
    }
}

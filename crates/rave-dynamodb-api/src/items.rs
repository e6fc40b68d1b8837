//! GetItem, PutItem and DeleteItem.

use rave_store::{DeleteItemInput, GetItemInput, PutItemInput, Store};
use serde_json::{Value, json};

use crate::DynamoApi;
use crate::error::ApiError;
use crate::request::Members;
use crate::wire::item_to_json;

/// The members of a single-item write that need expression strings, or
/// their legacy forms, which wait for the expression parser.
pub const CONDITION_MEMBERS: [&str; 5] = [
    "ConditionExpression",
    "Expected",
    "ConditionalOperator",
    "ExpressionAttributeNames",
    "ExpressionAttributeValues",
];

/// The members of a read that choose attributes.
pub const PROJECTION_MEMBERS: [&str; 3] = [
    "ProjectionExpression",
    "AttributesToGet",
    "ExpressionAttributeNames",
];

pub async fn get_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&PROJECTION_MEMBERS)?;
    let detail = body.capacity_detail()?;
    let output = api
        .engine
        .get_item(GetItemInput {
            table: body.required_string("TableName")?.to_owned(),
            key: body.required_item("Key")?,
            consistent_read: body.bool("ConsistentRead")?,
        })
        .await?;
    let mut response = json!({});
    if let Some(item) = &output.item {
        response["Item"] = item_to_json(item);
    }
    if let Some(consumed) = detail.render(&output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    Ok(response)
}

pub async fn put_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&CONDITION_MEMBERS)?;
    let detail = body.capacity_detail()?;
    let output = api
        .engine
        .put_item(PutItemInput {
            table: body.required_string("TableName")?.to_owned(),
            item: body.required_item("Item")?,
            condition: None,
            return_values: body.return_values("PutItem")?,
        })
        .await?;
    Ok(write_response(&output, detail))
}

pub async fn delete_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&CONDITION_MEMBERS)?;
    let detail = body.capacity_detail()?;
    let output = api
        .engine
        .delete_item(DeleteItemInput {
            table: body.required_string("TableName")?.to_owned(),
            key: body.required_item("Key")?,
            condition: None,
            return_values: body.return_values("DeleteItem")?,
        })
        .await?;
    Ok(write_response(&output, detail))
}

fn write_response(
    output: &rave_store::WriteOutput,
    detail: crate::request::CapacityDetail,
) -> Value {
    let mut response = json!({});
    if let Some(attributes) = &output.attributes {
        response["Attributes"] = item_to_json(attributes);
    }
    if let Some(consumed) = detail.render(&output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    response
}

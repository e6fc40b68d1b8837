//! GetItem, PutItem, UpdateItem and DeleteItem.
//!
//! With `ReturnValuesOnConditionCheckFailure` = ALL_OLD a write goes to the
//! engine's `*_with` methods, whose writer returns the item the condition
//! was checked against with the error, from the same transaction, so it is
//! the item that failed the condition (`error` puts it in the exception's
//! `Item`). The `Store` methods never ask, so the domain is unchanged.

use rave_engine::Written;
use rave_store::{
    DeleteItemInput, GetItemInput, ItemView, Path, PutItemInput, ReturnValues, Store,
    UpdateItemInput, WriteOutput, project,
};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::collections;
use crate::error::ApiError;
use crate::expressions::{Placeholders, on_condition_failure, read_expressions, write_condition};
use crate::legacy;
use crate::request::{CapacityDetail, Members, RETURN_VALUES, name_violations, validation_errors};
use crate::wire::{Answer, AnswerWriter, item_to_json, write_item};
use crate::writes::{ITEM_TOO_LARGE, check_index_key_update};

/// A GetItem as its request was read (by `typed`, or from its members).
#[derive(Debug, PartialEq)]
pub(crate) struct GetItemRead {
    pub(crate) input: GetItemInput,
    pub(crate) projection: Option<Vec<Path>>,
    pub(crate) detail: CapacityDetail,
}

impl GetItemRead {
    /// GetItem's members, checked in DynamoDB's order.
    pub(crate) fn from_members(body: Members<'_>) -> Result<GetItemRead, ApiError> {
        let table = body.table_name()?.to_owned();
        let detail = body.capacity_detail()?;
        let key = body.required_item("Key")?;
        let projection = read_expressions(body, None)?.projection;
        let input = GetItemInput {
            table,
            key,
            consistent_read: body.bool("ConsistentRead")?,
        };
        Ok(GetItemRead {
            input,
            projection,
            detail,
        })
    }
}

pub(crate) async fn get_item(api: &DynamoApi, body: Members<'_>) -> Result<Answer, ApiError> {
    read_item(api, GetItemRead::from_members(body)?).await
}

pub(crate) async fn read_item(api: &DynamoApi, read: GetItemRead) -> Result<Answer, ApiError> {
    let GetItemRead {
        input,
        projection,
        detail,
    } = read;
    // A whole item is written from its stored bytes, never built as a map;
    // a projection is applied to the built item.
    let (consumed, item) = match projection {
        None => api.engine.get_item_viewed(&input, |item| item_json(item))?,
        Some(paths) => {
            let output = api.engine.get_item(input).await?;
            let item = output.item.map(|item| item_json(&project(&item, &paths)));
            (output.consumed, item)
        }
    };
    let mut answer = AnswerWriter::with_capacity(512);
    if let Some(consumed) = detail.render(&consumed) {
        answer.value("ConsumedCapacity", &consumed);
    }
    if let Some(item) = item {
        // Written apart and copied in: the capacity that goes before it is
        // known only once the item has been read.
        answer.member("Item").extend_from_slice(&item);
    }
    Ok(answer.finish())
}

/// An item as DynamoDB JSON.
fn item_json(item: &(impl ItemView + ?Sized)) -> Vec<u8> {
    let mut written = Vec::with_capacity(384);
    write_item(&mut written, item);
    written
}

pub(crate) async fn put_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let table = body.table_name()?.to_owned();
    body.check_write_enums()?;
    let detail = body.capacity_detail()?;
    let item = body.required_item("Item")?;
    let return_values = body.return_values(|| {
        ApiError::validation("ReturnValues can only be ALL_OLD or NONE for PutItem")
    })?;
    let metrics = collections::asked(body)?;
    let output = api
        .engine
        .put_item_with(
            PutItemInput {
                table,
                item,
                condition: write_condition(body)?,
                return_values,
            },
            on_condition_failure(body)?,
        )
        .await?;
    Ok(write_response(
        output.output.attributes.as_ref(),
        &output,
        detail,
        metrics,
    ))
}

pub(crate) async fn delete_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let table = body.table_name()?.to_owned();
    body.check_write_enums()?;
    let detail = body.capacity_detail()?;
    let key = body.required_item("Key")?;
    // DeleteItem's words have dropped the operation's name in both
    // validation layers; only the current one envelopes them.
    let return_values = body.return_values(|| {
        let refusal = "ReturnValues can only be ALL_OLD or NONE";
        ApiError::value_fault(refusal, refusal)
    })?;
    let metrics = collections::asked(body)?;
    let output = api
        .engine
        .delete_item_with(
            DeleteItemInput {
                table,
                key,
                condition: write_condition(body)?,
                return_values,
            },
            on_condition_failure(body)?,
        )
        .await?;
    Ok(write_response(
        output.output.attributes.as_ref(),
        &output,
        detail,
        metrics,
    ))
}

/// An UpdateItem without its Key breaks a member constraint, and DynamoDB
/// reports it with every other member the request breaks, in this order.
fn without_key(body: Members<'_>) -> ApiError {
    let mut violations = body.capacity_violations();
    match body.string("TableName") {
        Ok(Some(name)) => violations.extend(name_violations(name, "tableName", 1)),
        Ok(None) => violations.push(
            "Value null at 'tableName' failed to satisfy constraint: Member must not be null"
                .to_owned(),
        ),
        // Not a string: the Key's absence is reported alone.
        Err(_) => {}
    }
    violations.extend(body.enum_violations(&[
        ("ReturnValues", &RETURN_VALUES),
        ("ConditionalOperator", &legacy::CONDITIONAL_OPERATORS),
    ]));
    violations.push(
        "Value null at 'key' failed to satisfy constraint: Member must not be null".to_owned(),
    );
    validation_errors(&violations)
}

/// UpdateItem's `ReturnValues` as DynamoDB's current validation layer lists
/// them when it refuses another (sic: UPDATE_NEW).
const RETURN_VALUES_LISTED: [&str; 5] = ["ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATE_NEW", "NONE"];

pub(crate) async fn update_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    legacy::refuse_mixed(
        body,
        &["AttributeUpdates", "Expected", "ConditionalOperator"],
        &["UpdateExpression", "ConditionExpression"],
    )?;
    if body.item("Key")?.is_none() {
        return Err(without_key(body));
    }
    let table = body.table_name()?.to_owned();
    // A bad ReturnValues alone is refused in the current layer's words
    // (below); beside a bad ReturnConsumedCapacity, both are reported as
    // broken constraints, the capacity first.
    let mut violations = body.capacity_violations();
    violations.extend(body.enum_violations(&[("ReturnValues", &RETURN_VALUES)]));
    if violations.len() > 1 {
        return Err(validation_errors(&violations));
    }
    let return_values = body
        .choice_in_both_words("ReturnValues", &RETURN_VALUES, &RETURN_VALUES_LISTED)?
        .and_then(ReturnValues::from_wire)
        .unwrap_or_default();
    let on_failure = on_condition_failure(body)?;
    let detail = body.capacity_detail()?;
    let metrics = collections::asked(body)?;
    let key = body.required_item("Key")?;
    let placeholders = Placeholders::read(body)?;
    let mut parser = placeholders.parser()?;
    // Without an UpdateExpression DynamoDB writes the bare key: an update
    // without actions, which the engine applies so.
    let update = body
        .string("UpdateExpression")?
        .map(|text| parser.update(text))
        .transpose()?;
    let condition = body
        .string("ConditionExpression")?
        .map(|text| parser.condition(text))
        .transpose()?;
    parser.finish()?;
    let update = match update {
        Some(update) => update,
        None => legacy::attribute_updates(body)?.unwrap_or_default(),
    };
    let condition = match condition {
        Some(condition) => Some(condition),
        None => legacy::expected(body)?,
    };
    if condition.is_none() {
        legacy::refuse_lone_operator(body)?;
    }
    check_index_key_update(&api.engine.describe_table(&table).await?, &update)?;
    let output = api
        .engine
        .update_item_with(
            UpdateItemInput {
                table,
                key,
                update,
                condition,
                return_values,
            },
            on_failure,
        )
        .await
        .map_err(|error| match ApiError::from(error) {
            // DynamoDB names what grew too large: the item to update.
            error if error.message.as_deref() == Some(ITEM_TOO_LARGE) => {
                ApiError::validation("Item size to update has exceeded the maximum allowed size")
            }
            error => error,
        })?;
    Ok(write_response(
        output.output.attributes.as_ref(),
        &output,
        detail,
        metrics,
    ))
}

fn write_response(
    attributes: Option<&rave_store::Item>,
    written: &Written<WriteOutput>,
    detail: CapacityDetail,
    metrics: bool,
) -> Value {
    let mut response = json!({});
    if let Some(attributes) = attributes {
        response["Attributes"] = item_to_json(attributes);
    }
    if let Some(consumed) = detail.render(&written.output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    if let Some(metrics) = collections::of_item(metrics, &written.item_collections) {
        response["ItemCollectionMetrics"] = metrics;
    }
    response
}

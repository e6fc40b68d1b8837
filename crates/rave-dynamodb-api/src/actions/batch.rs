//! BatchGetItem and BatchWriteItem.
//!
//! Both check each table's list (1 to 100 keys, 1 to 25 requests) and the
//! map's keys (table names), echoing the map in the message
//! (BatchWriteItem's as DynamoDB's model objects print it). A
//! BatchWriteItem key of the wrong type, or missing from an item, "does not
//! match the schema"; its malformed table name gives way to its unknown
//! enums, where BatchGetItem reports both, the map first.

use rave_store::{BatchGetItemInput, BatchWriteItemInput, Store, TableKeys, WriteRequest, project};
use serde_json::{Map, Value, json};

use crate::api::DynamoApi;
use crate::collections;
use crate::error::ApiError;
use crate::expressions::read_expressions;
use crate::request::{Members, missing, name_violations, validation_errors};
use crate::wire::{item_from_json, item_to_json};

pub(crate) async fn batch_get_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let tables = request_items(body, Batch::Get, body.capacity_violations())?;
    let detail = body.capacity_detail()?;
    let mut requests = Vec::new();
    let mut projections = Vec::new();
    refuse_mixed_projections(tables)?;
    for (table, request) in tables {
        let Value::Object(request) = request else {
            return Err(ApiError::serialization(
                "RequestItems values must be structures",
            ));
        };
        let request = Members(request);
        if let Some(paths) = read_expressions(request, None)?.projection {
            projections.push((table.clone(), paths));
        }
        let keys = request.list("Keys")?.ok_or_else(|| missing("Keys"))?;
        let bound = match keys.len() {
            0 => Some("greater than or equal to 1".to_owned()),
            n if n > MAX_KEYS_PER_TABLE => {
                Some(format!("less than or equal to {MAX_KEYS_PER_TABLE}"))
            }
            _ => None,
        };
        if let Some(bound) = bound {
            return Err(validation_errors(&[format!(
                "Value at 'RequestItems.{table}.member.Keys' failed to satisfy constraint: Member must have length {bound}"
            )]));
        }
        let keys = keys.iter().map(item_from_json).collect::<Result<_, _>>()?;
        requests.push(TableKeys {
            table: table.clone(),
            keys,
            consistent_read: request.bool("ConsistentRead")?,
        });
    }
    // Every table asked for has an entry, if only an empty list.
    let mut responses: Map<String, Value> = requests
        .iter()
        .map(|r| (r.table.clone(), Value::Array(Vec::new())))
        .collect();
    let output = api
        .engine
        .batch_get_item(BatchGetItemInput { requests })
        .await?;
    for (table, items) in &output.responses {
        let found = responses
            .entry(table.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        let projection = projections.iter().find(|(t, _)| t == table);
        if let Value::Array(found) = found {
            found.extend(items.iter().map(|item| match projection {
                Some((_, paths)) => item_to_json(&project(item, paths)),
                None => item_to_json(item),
            }));
        }
    }
    let unprocessed: Map<String, Value> = output
        .unprocessed
        .iter()
        .map(|keys| {
            (
                keys.table.clone(),
                json!({
                    "Keys": keys.keys.iter().map(item_to_json).collect::<Vec<_>>(),
                    "ConsistentRead": keys.consistent_read,
                }),
            )
        })
        .collect();
    let mut response = json!({"Responses": responses, "UnprocessedKeys": unprocessed});
    if let Some(consumed) = detail.render_per_table(&output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    Ok(response)
}

pub(crate) async fn batch_write_item(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let tables = request_items(body, Batch::Write, body.batch_write_enum_violations())?;
    let detail = body.capacity_detail()?;
    let metrics = collections::asked(body)?;
    let mut requests = Vec::new();
    for (table, writes) in tables {
        let Value::Array(writes) = writes else {
            return Err(ApiError::serialization("RequestItems values must be lists"));
        };
        if !(1..=MAX_WRITES_PER_TABLE).contains(&writes.len()) {
            return Err(validation_errors(&[format!(
                "Value '{}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to {MAX_WRITES_PER_TABLE}, Member must have length greater than or equal to 1]",
                echoed(tables)
            )]));
        }
        for write in writes {
            let Value::Object(write) = write else {
                return Err(ApiError::serialization("WriteRequest must be a structure"));
            };
            let write = Members(write);
            let request = match (write.object("PutRequest")?, write.object("DeleteRequest")?) {
                (Some(put), None) => WriteRequest::Put(put.required_item("Item")?),
                (None, Some(delete)) => WriteRequest::Delete(delete.required_item("Key")?),
                // DynamoDB's own wording for a request with neither or both.
                _ => {
                    return Err(ApiError::validation(
                        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
                    ));
                }
            };
            requests.push((table.clone(), request));
        }
    }
    let written = api
        .engine
        .batch_write_item_with(BatchWriteItemInput { requests })
        .await
        .map_err(ApiError::from)
        .map_err(key_schema_mismatch)?;
    let output = &written.output;
    let mut unprocessed = Map::new();
    for (table, request) in &output.unprocessed {
        let rendered = match request {
            WriteRequest::Put(item) => json!({"PutRequest": {"Item": item_to_json(item)}}),
            WriteRequest::Delete(key) => json!({"DeleteRequest": {"Key": item_to_json(key)}}),
        };
        if let Value::Array(writes) = unprocessed
            .entry(table.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            writes.push(rendered);
        }
    }
    let mut response = json!({"UnprocessedItems": unprocessed});
    if let Some(consumed) = detail.render_per_table(&output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    if let Some(metrics) = collections::per_table(metrics, &written.item_collections) {
        response["ItemCollectionMetrics"] = metrics;
    }
    Ok(response)
}

/// Most keys one table's entry of a BatchGetItem may list.
const MAX_KEYS_PER_TABLE: usize = 100;
/// Most requests one table's entry of a BatchWriteItem may list.
const MAX_WRITES_PER_TABLE: usize = 25;

/// The two batch operations, which check their `RequestItems` alike but
/// word some refusals differently.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Batch {
    Get,
    Write,
}

impl Batch {
    fn operation(self) -> &'static str {
        match self {
            Batch::Get => "BatchGetItem",
            Batch::Write => "BatchWriteItem",
        }
    }

    /// The refusal of an absent `RequestItems` map; also of an empty one
    /// on BatchWriteItem, while DynamoDB has moved BatchGetItem's empty map
    /// to its validation framework's constraint, reported first among the
    /// request's broken constraints (`others`).
    fn missing_map(self, empty: bool, others: Vec<String>) -> ApiError {
        match (self, empty) {
            (Batch::Get, true) => {
                let empty_map = "Value at 'RequestItems' failed to satisfy constraint: Member must have length greater than or equal to 1".to_owned();
                let violations: Vec<String> = std::iter::once(empty_map).chain(others).collect();
                validation_errors(&violations)
            }
            _ => ApiError::validation(format!(
                "The requestItems parameter is required for {}",
                self.operation()
            )),
        }
    }

    /// The map as a constraint's message echoes it: BatchGetItem as the
    /// request gave it, BatchWriteItem as its own model objects print.
    fn echo(self, items: &Map<String, Value>) -> String {
        match self {
            Batch::Get => Value::Object(items.clone()).to_string(),
            Batch::Write => echoed(items),
        }
    }
}

/// The `RequestItems` map of a batch, which may not be empty and whose
/// keys must be table names. BatchGetItem reports a misnamed table
/// together with `others`, the request's other members' broken constraints
/// (the map first); BatchWriteItem reports `others` alone when there are
/// any, and the misnamed table only when nothing else is wrong.
fn request_items<'a>(
    body: Members<'a>,
    batch: Batch,
    others: Vec<String>,
) -> Result<&'a Map<String, Value>, ApiError> {
    let Some(items) = body.object("RequestItems")? else {
        return Err(batch.missing_map(false, others));
    };
    if items.0.is_empty() {
        return Err(batch.missing_map(true, others));
    }
    let gives_way = batch == Batch::Write && !others.is_empty();
    let misnamed = !gives_way
        && items
            .0
            .keys()
            .any(|name| !name_violations(name, "requestItems", 3).is_empty());
    let map_keys = misnamed.then(|| {
        format!(
            "Value '{}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]",
            batch.echo(items.0)
        )
    });
    let violations: Vec<String> = map_keys.into_iter().chain(others).collect();
    if !violations.is_empty() {
        return Err(validation_errors(&violations));
    }
    Ok(items.0)
}

/// BatchWriteItem's `RequestItems` as DynamoDB echoes the map in a
/// constraint's message, the way its model objects print themselves:
/// `{table=[WriteRequest(putRequest=PutRequest(item={pk=AttributeValue(S=a)}), deleteRequest=null)]}`.
fn echoed(tables: &Map<String, Value>) -> String {
    let map = |members: &Value| -> String {
        let entries: Vec<String> = members
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, value)| {
                let fields: Vec<String> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(tag, inner)| match inner {
                        Value::String(text) => format!("{tag}={text}"),
                        other => format!("{tag}={other}"),
                    })
                    .collect();
                format!("{name}=AttributeValue({})", fields.join(", "))
            })
            .collect();
        format!("{{{}}}", entries.join(", "))
    };
    let tables: Vec<String> = tables
        .iter()
        .map(|(table, writes)| {
            let writes: Vec<String> = writes
                .as_array()
                .into_iter()
                .flatten()
                .map(|write| {
                    let put = write
                        .pointer("/PutRequest/Item")
                        .map_or("null".to_owned(), |item| {
                            format!("PutRequest(item={})", map(item))
                        });
                    let delete = write
                        .pointer("/DeleteRequest/Key")
                        .map_or("null".to_owned(), |key| {
                            format!("DeleteRequest(key={})", map(key))
                        });
                    format!("WriteRequest(putRequest={put}, deleteRequest={delete})")
                })
                .collect();
            format!("{table}=[{}]", writes.join(", "))
        })
        .collect();
    format!("{{{}}}", tables.join(", "))
}

/// A BatchGetItem projects with expressions or with the legacy
/// `AttributesToGet`, never both, even from one table to the next.
fn refuse_mixed_projections(tables: &Map<String, Value>) -> Result<(), ApiError> {
    let uses = |member: &str| {
        tables
            .values()
            .any(|t| t.get(member).is_some_and(|v| !v.is_null()))
    };
    if uses("AttributesToGet") && uses("ProjectionExpression") {
        return Err(ApiError::validation(
            "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
        ));
    }
    Ok(())
}

/// BatchWriteItem reports a key of the wrong type, or missing from an item,
/// as not matching the schema, where PutItem names the key (and both types).
fn key_schema_mismatch(error: ApiError) -> ApiError {
    let wrong_type = error.message.as_deref().is_some_and(|message| {
        message.starts_with("One or more parameter values were invalid: Type mismatch for key ")
            || message.starts_with("One or more parameter values were invalid: Missing the key ")
    });
    match wrong_type {
        true => ApiError::validation("The provided key element does not match the schema"),
        false => error,
    }
}

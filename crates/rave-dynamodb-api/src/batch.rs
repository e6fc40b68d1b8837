//! BatchGetItem and BatchWriteItem.

use rave_store::{BatchGetItemInput, BatchWriteItemInput, Store, TableKeys, WriteRequest, project};
use serde_json::{Map, Value, json};

use crate::DynamoApi;
use crate::collections;
use crate::error::ApiError;
use crate::expressions::read_expressions;
use crate::request::{Members, missing};
use crate::wire::{item_from_json, item_to_json};

pub async fn batch_get_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let detail = body.capacity_detail()?;
    let mut requests = Vec::new();
    let mut projections = Vec::new();
    for (table, request) in request_items(body)? {
        let Value::Object(request) = request else {
            return Err(ApiError::serialization(
                "RequestItems values must be structures",
            ));
        };
        let request = Members(request);
        if let Some(paths) = read_expressions(request)?.projection {
            projections.push((table.clone(), paths));
        }
        let keys = request
            .list("Keys")?
            .ok_or_else(|| missing("Keys"))?
            .iter()
            .map(item_from_json)
            .collect::<Result<_, _>>()?;
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

pub async fn batch_write_item(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let detail = body.capacity_detail()?;
    let metrics = collections::asked(body)?;
    let mut requests = Vec::new();
    for (table, writes) in request_items(body)? {
        let Value::Array(writes) = writes else {
            return Err(ApiError::serialization("RequestItems values must be lists"));
        };
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
        .await?;
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

/// The `RequestItems` map, which may not be empty.
fn request_items<'a>(body: Members<'a>) -> Result<&'a Map<String, Value>, ApiError> {
    let items = body.required_object("RequestItems")?;
    if items.0.is_empty() {
        return Err(ApiError::validation(
            "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
        ));
    }
    Ok(items.0)
}

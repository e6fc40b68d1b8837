//! Query and Scan: pages of items, filtered and projected after reading
//! (what a filter drops is still read and charged, as in DynamoDB). The
//! engine checks `Select` against the projection and the index and shapes
//! the items.

use std::sync::{Arc, Mutex, PoisonError};

use rave_store::{Page, QueryInput, ScanInput, Segment, Select, Store, StoreError};
use serde_json::Value;

use crate::api::DynamoApi;
use crate::error::ApiError;
use crate::expressions::read_expressions;
use crate::request::{CapacityDetail, Members, validation_errors};
use crate::wire::{Answer, AnswerWriter, write_item, write_items};

pub(crate) async fn query(api: &DynamoApi, body: Members<'_>) -> Result<Answer, ApiError> {
    let (input, detail) = query_input(body)?;
    query_page(api, input, detail)
        .await
        .map_err(|error| legacy_wording(body, error.into()))
}

/// A Query's answer, its items written as the engine shows them: whole
/// stored items are read in place and written out, never built.
async fn query_page(
    api: &DynamoApi,
    input: QueryInput,
    detail: CapacityDetail,
) -> Result<Answer, StoreError> {
    if input.select == Some(Select::Count) {
        let page = api.engine.query(input).await?;
        return Ok(page_response(&page, Some(Select::Count), detail));
    }
    // Room for items of a few hundred bytes each, the common size.
    let capacity = 320 * input.limit.unwrap_or(20).min(100);
    let written = Arc::new(Mutex::new(Vec::with_capacity(capacity)));
    let sink = written.clone();
    let page = api
        .engine
        .query_visiting(
            input,
            Box::new(move |item| {
                let mut items = sink.lock().unwrap_or_else(PoisonError::into_inner);
                let separator = if items.is_empty() { b'[' } else { b',' };
                items.push(separator);
                write_item(&mut items, item);
            }),
        )
        .await?;
    let mut items = std::mem::take(&mut *written.lock().unwrap_or_else(PoisonError::into_inner));
    if items.is_empty() {
        items.push(b'[');
    }
    items.push(b']');
    let room = items.len();
    Ok(page_answer(
        &page,
        detail,
        room,
        Some(|out: &mut Vec<u8>| out.extend_from_slice(&items)),
    ))
}

/// Query's members, checked in DynamoDB's order.
pub(crate) fn query_input(body: Members<'_>) -> Result<(QueryInput, CapacityDetail), ApiError> {
    let table = body.table_name()?;
    let detail = body.capacity_detail()?;
    let expressions = read_expressions(body, Some("QueryFilter"))?;
    let select = select(body)?;
    let key_condition = expressions.key_condition.ok_or_else(|| {
        ApiError::validation(
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
        )
    })?;
    let mut input = QueryInput::new(table, body.string("IndexName")?, key_condition);
    input.filter = expressions.filter;
    input.limit = limit(body, "Query")?;
    input.scan_index_forward = match body.0.get("ScanIndexForward") {
        None | Some(Value::Null) => true,
        Some(_) => body.bool("ScanIndexForward")?,
    };
    input.exclusive_start_key = body.item("ExclusiveStartKey")?;
    input.consistent_read = body.bool("ConsistentRead")?;
    input.select = select;
    input.projection = expressions.projection;
    Ok((input, detail))
}

/// A Query read by `typed`, which takes only requests without legacy
/// parameters: the engine's refusals need no rewording.
pub(crate) async fn read_page(
    api: &DynamoApi,
    input: QueryInput,
    detail: CapacityDetail,
) -> Result<Answer, ApiError> {
    Ok(query_page(api, input, detail).await?)
}

pub(crate) async fn scan(api: &DynamoApi, body: Members<'_>) -> Result<Answer, ApiError> {
    let mut input = ScanInput::new(body.table_name()?);
    let detail = body.capacity_detail()?;
    let expressions = read_expressions(body, Some("ScanFilter"))?;
    if expressions.key_condition.is_some() {
        return Err(ApiError::validation(
            "KeyConditionExpression is a Query parameter, not a Scan one",
        ));
    }
    let select = select(body)?;
    input.index = body.string("IndexName")?.map(str::to_owned);
    input.filter = expressions.filter;
    input.limit = limit(body, "Scan")?;
    input.exclusive_start_key = body.item("ExclusiveStartKey")?;
    input.segment = segment(body)?;
    input.consistent_read = body.bool("ConsistentRead")?;
    input.select = select;
    input.projection = expressions.projection;
    let page = api
        .engine
        .scan(input)
        .await
        .map_err(|error| legacy_wording(body, error.into()))?;
    Ok(page_response(&page, select, detail))
}

/// The engine's refusals name the expressions; DynamoDB names the legacy
/// parameter a request used instead (`QueryFilter`, `AttributesToGet`).
fn legacy_wording(body: Members<'_>, error: ApiError) -> ApiError {
    let uses = |member: &str| body.0.get(member).is_some_and(|v| !v.is_null());
    let reworded = match error.message.as_deref() {
        Some(message)
            if uses("QueryFilter")
                && message.starts_with(
                    "Filter Expression can only contain non-primary key attributes",
                ) =>
        {
            message.replacen("Filter Expression", "QueryFilter", 1)
        }
        Some(message)
            if uses("AttributesToGet")
                && message.starts_with("Cannot specify the ProjectionExpression") =>
        {
            message.replacen("ProjectionExpression", "AttributesToGet", 1)
        }
        _ => return error,
    };
    ApiError::validation(reworded)
}

/// `Select`'s values, in the order DynamoDB lists them.
const SELECTS: [&str; 4] = [
    "SPECIFIC_ATTRIBUTES",
    "COUNT",
    "ALL_ATTRIBUTES",
    "ALL_PROJECTED_ATTRIBUTES",
];

fn select(body: Members<'_>) -> Result<Option<Select>, ApiError> {
    Ok(body.choice("Select", &SELECTS)?.and_then(named_select))
}

/// The `Select` a value names, if it names one.
pub(crate) fn named_select(name: &str) -> Option<Select> {
    match name {
        "ALL_ATTRIBUTES" => Some(Select::AllAttributes),
        "ALL_PROJECTED_ATTRIBUTES" => Some(Select::AllProjectedAttributes),
        "SPECIFIC_ATTRIBUTES" => Some(Select::SpecificAttributes),
        "COUNT" => Some(Select::Count),
        _ => None,
    }
}

/// `Limit`, at least 1. DynamoDB words its refusal differently for each
/// operation: Query's message leaves the value out.
fn limit(body: Members<'_>, operation: &str) -> Result<Option<usize>, ApiError> {
    match body.integer("Limit")? {
        Some(limit) if limit < 1 => Err(validation_errors(&[format!(
            "Value {} failed to satisfy constraint: Member must have value greater than or equal to 1",
            match operation {
                "Query" => "at 'Limit'".to_owned(),
                _ => format!("'{limit}' at 'limit'"),
            }
        )])),
        limit => Ok(limit.map(|l| usize::try_from(l).unwrap_or(usize::MAX))),
    }
}

/// A page's answer, written straight from the items read.
fn page_response(page: &Page, select: Option<Select>, detail: CapacityDetail) -> Answer {
    let items = (select != Some(Select::Count))
        .then_some(|out: &mut Vec<u8>| write_items(out, &page.items));
    // Room for items of a few hundred bytes each, the common size.
    page_answer(page, detail, 320 * page.items.len(), items)
}

/// A page's answer, with room for `items_room` bytes of items;
/// `write_items` writes its `Items` (none for a COUNT).
fn page_answer(
    page: &Page,
    detail: CapacityDetail,
    items_room: usize,
    write_items: Option<impl FnOnce(&mut Vec<u8>)>,
) -> Answer {
    let mut answer = AnswerWriter::with_capacity(256 + items_room);
    if let Some(consumed) = detail.render(&page.consumed) {
        answer.value("ConsumedCapacity", &consumed);
    }
    answer.count("Count", page.count);
    if let Some(write_items) = write_items {
        write_items(answer.member("Items"));
    }
    if let Some(key) = &page.last_evaluated_key {
        write_item(answer.member("LastEvaluatedKey"), key);
    }
    answer.count("ScannedCount", page.scanned_count);
    answer.finish()
}

/// `Segment` and `TotalSegments`, which come together or not at all.
fn segment(body: Members<'_>) -> Result<Option<Segment>, ApiError> {
    match (body.integer("Segment")?, body.integer("TotalSegments")?) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(ApiError::validation(
            "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
        )),
        (None, Some(_)) => Err(ApiError::validation(
            "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
        )),
        (Some(segment), Some(total)) => {
            if !(1..=1_000_000).contains(&total) {
                return Err(ApiError::validation(format!(
                    "1 validation error detected: Value '{total}' at 'totalSegments' failed to satisfy constraint: Member must have value {}",
                    if total < 1 {
                        "greater than or equal to 1"
                    } else {
                        "less than or equal to 1000000"
                    }
                )));
            }
            if segment < 0 {
                return Err(ApiError::validation(format!(
                    "1 validation error detected: Value '{segment}' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0"
                )));
            }
            if segment >= total {
                return Err(ApiError::validation(format!(
                    "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: {segment} is not less than TotalSegments: {total}"
                )));
            }
            // Both fit: 0 <= segment < total <= 1,000,000.
            Ok(Some(Segment {
                segment: segment as u32,
                total_segments: total as u32,
            }))
        }
    }
}

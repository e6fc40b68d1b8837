//! Scan, parallel or not. Filters and projections wait for the expression
//! parser and are refused until then.

use rave_store::{ScanInput, Segment, Store};
use serde_json::{Value, json};

use crate::DynamoApi;
use crate::error::ApiError;
use crate::request::Members;
use crate::wire::item_to_json;

pub async fn scan(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&[
        "FilterExpression",
        "ScanFilter",
        "ConditionalOperator",
        "ProjectionExpression",
        "AttributesToGet",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
    ])?;
    let detail = body.capacity_detail()?;
    let select = body.choice(
        "Select",
        &[
            "ALL_ATTRIBUTES",
            "ALL_PROJECTED_ATTRIBUTES",
            "SPECIFIC_ATTRIBUTES",
            "COUNT",
        ],
    )?;
    if select == Some("SPECIFIC_ATTRIBUTES") {
        return Err(ApiError::not_supported_yet("Select SPECIFIC_ATTRIBUTES"));
    }
    let limit = match body.integer("Limit")? {
        Some(limit) if limit < 1 => {
            return Err(ApiError::validation(format!(
                "1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
            )));
        }
        limit => limit.map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
    };
    let mut input = ScanInput::new(body.required_string("TableName")?);
    input.index = body.string("IndexName")?.map(str::to_owned);
    input.limit = limit;
    input.exclusive_start_key = body.item("ExclusiveStartKey")?;
    input.segment = segment(body)?;
    input.consistent_read = body.bool("ConsistentRead")?;
    let page = api.engine.scan(input).await?;
    let mut response = json!({
        "Count": page.items.len(),
        "ScannedCount": page.scanned_count,
    });
    if select != Some("COUNT") {
        response["Items"] = page.items.iter().map(item_to_json).collect();
    }
    if let Some(key) = &page.last_evaluated_key {
        response["LastEvaluatedKey"] = item_to_json(key);
    }
    if let Some(consumed) = detail.render(&page.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    Ok(response)
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

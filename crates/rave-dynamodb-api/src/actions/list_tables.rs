//! ListTables: table names in order, a page at a time.

use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::error::ApiError;
use crate::request::{Members, check_name};

/// Most table names one ListTables page holds.
const MAX_LIST_TABLES: i64 = 100;

pub(crate) async fn list_tables(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let limit = body.integer("Limit")?.unwrap_or(MAX_LIST_TABLES);
    if !(1..=MAX_LIST_TABLES).contains(&limit) {
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value {} {}",
            if limit < 1 {
                "greater than or equal to"
            } else {
                "less than or equal to"
            },
            if limit < 1 { 1 } else { MAX_LIST_TABLES },
        )));
    }
    let start = body.string("ExclusiveStartTableName")?;
    if let Some(start) = start {
        check_name(start, "exclusiveStartTableName", 3)?;
    }
    let names = api.engine.table_names()?;
    let mut after_start = names
        .iter()
        .filter(|name| start.is_none_or(|start| name.as_str() > start));
    let page: Vec<&String> = after_start.by_ref().take(limit as usize).collect();
    let mut response = json!({ "TableNames": page });
    if after_start.next().is_some()
        && let Some(last) = page.last()
    {
        response["LastEvaluatedTableName"] = json!(last);
    }
    Ok(response)
}

//! DescribeTable.

use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::description::current_description;
use crate::error::ApiError;
use crate::request::Members;

pub(crate) async fn describe_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let name = body.table_name()?;
    let description = current_description(api, name, "ACTIVE", None).await?;
    Ok(json!({ "Table": description }))
}

//! DeleteTable: refused while deletion protection is on; answered with
//! the description the table had, DELETING.

use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::description::current_description;
use crate::error::ApiError;
use crate::request::Members;
use crate::settings;

pub(crate) async fn delete_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let name = body.table_name()?;
    if let Some(metadata) = api.metadata.get(name)? {
        settings::check_deletable(&metadata.settings)?;
    }
    let description = current_description(api, name, "DELETING", None).await?;
    api.engine.delete_table(name).await?;
    api.metadata.remove(name)?;
    Ok(json!({ "TableDescription": description }))
}

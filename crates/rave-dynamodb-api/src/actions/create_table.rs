//! CreateTable: the table's shape read and checked in DynamoDB's order,
//! created in the engine, and the rest of what DynamoDB describes kept as
//! table metadata.

use std::collections::BTreeMap;

use rave_store::{
    GlobalSecondaryIndex, KeySchema, KeyType, LocalSecondaryIndex, MAX_KEY_ATTRIBUTE_NAME_BYTES,
    MAX_LOCAL_SECONDARY_INDEXES, Store, TableDefinition,
};
use serde_json::{Value, json};

use crate::actions::tags::read_tags;
use crate::api::DynamoApi;
use crate::description::{Counts, describe};
use crate::error::ApiError;
use crate::metadata::{TableMetadata, now};
use crate::request::{
    INVALID, Members, length_violation, missing, name_violations, validation_errors,
};
use crate::settings::{self, RequestedSettings};
use crate::table_spec::{
    attribute_definitions, billing, global_index_key_schema, index_throughput_for, key_schema,
    object, projection, stream_specification, throughput,
};

/// Most global secondary indexes one table has (DynamoDB's default quota).
const MAX_GLOBAL_SECONDARY_INDEXES: usize = 20;

pub(crate) async fn create_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&["WarmThroughput", "ResourcePolicy"])?;
    let name = body.new_table_name()?;
    check_names(body)?;
    let definitions = attribute_definitions(
        body.list("AttributeDefinitions")?
            .ok_or_else(|| missing("AttributeDefinitions"))?,
    )?;
    let mut used = Vec::new();
    let table_keys = key_schema(
        body.list("KeySchema")?
            .ok_or_else(|| missing("KeySchema"))?,
        "keySchema",
        &definitions,
        &mut used,
    )?;
    let billing = billing(body)?;
    let tags = read_tags(body.list("Tags")?.unwrap_or_default())?;
    let local_indexes = match body.list("LocalSecondaryIndexes")? {
        Some(listed) => local_secondary_indexes(listed, &table_keys, &definitions, &mut used)?,
        None => Vec::new(),
    };
    let mut indexes = Vec::new();
    let mut index_throughput = BTreeMap::new();
    let global_indexes = body.list("GlobalSecondaryIndexes")?.unwrap_or_default();
    for (position, index) in global_indexes.iter().enumerate() {
        let index = object(index, "GlobalSecondaryIndexes")?;
        let index_name = index.required_string("IndexName")?;
        let keys = index
            .list("KeySchema")?
            .ok_or_else(|| missing("KeySchema"))?;
        let at = format!("globalSecondaryIndexes.{}.member.keySchema", position + 1);
        let index_keys = global_index_key_schema(keys, &at, &definitions, &mut used)?;
        let projection = projection(index.required_object("Projection")?)?;
        if let Some(throughput) = index_throughput_for(billing, index_name, throughput(index)?)? {
            index_throughput.insert(index_name.to_owned(), throughput);
        }
        if local_indexes.iter().any(|local| local.name == index_name)
            || indexes
                .iter()
                .any(|index: &GlobalSecondaryIndex| index.name == index_name)
        {
            return Err(duplicate_index(index_name));
        }
        indexes.push(GlobalSecondaryIndex {
            name: index_name.to_owned(),
            key_schema: index_keys,
            projection,
        });
    }
    if indexes.len() > MAX_GLOBAL_SECONDARY_INDEXES {
        return Err(ApiError::validation(format!(
            "{INVALID}: GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GLOBAL_SECONDARY_INDEXES}"
        )));
    }
    if definitions.iter().any(|(name, _)| !used.contains(name)) {
        return Err(ApiError::validation(format!(
            "{INVALID}: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"
        )));
    }
    let stream_view_type = stream_specification(body, true)?.flatten();
    let requested_settings = RequestedSettings::read(body)?;
    let definition = TableDefinition {
        name: name.to_owned(),
        key_schema: table_keys,
        global_secondary_indexes: indexes,
        stream_enabled: stream_view_type.is_some(),
        time_to_live_attribute: None,
        local_secondary_indexes: local_indexes,
    };
    api.engine.create_table(definition.clone()).await?;
    let created = now();
    let mut metadata = TableMetadata {
        created: Some(created),
        billing,
        index_throughput,
        tags: tags.into_iter().collect(),
        stream_view_type: stream_view_type.unwrap_or_default(),
        table_id: Some(settings::new_table_id()),
        ..TableMetadata::default()
    };
    requested_settings.apply_to(&mut metadata.settings, created);
    api.metadata.insert(name, metadata.clone())?;
    let description = describe(&definition, Some(&metadata), "ACTIVE", Counts::default());
    Ok(json!({ "TableDescription": description }))
}

/// CreateTable's `LocalSecondaryIndexes`, checked in DynamoDB's order: the
/// list, the table's sort key, each index's keys (a sort key, the table's
/// partition key) and projection, then names and the count.
fn local_secondary_indexes(
    listed: &[Value],
    table_keys: &KeySchema,
    definitions: &[(String, KeyType)],
    used: &mut Vec<String>,
) -> Result<Vec<LocalSecondaryIndex>, ApiError> {
    if listed.is_empty() {
        return Err(ApiError::validation(format!(
            "{INVALID}: List of LocalSecondaryIndexes is empty"
        )));
    }
    if table_keys.sort.is_none() {
        return Err(ApiError::validation(format!(
            "{INVALID}: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex"
        )));
    }
    let mut local_indexes: Vec<LocalSecondaryIndex> = Vec::new();
    for (position, index) in listed.iter().enumerate() {
        let index = object(index, "LocalSecondaryIndexes")?;
        let index_name = index.required_string("IndexName")?;
        let keys = index
            .list("KeySchema")?
            .ok_or_else(|| missing("KeySchema"))?;
        let at = format!("localSecondaryIndexes.{}.member.keySchema", position + 1);
        let index_keys = key_schema(keys, &at, definitions, used)?;
        let Some(sort_key) = index_keys.sort else {
            return Err(ApiError::validation(format!(
                "{INVALID}: Index KeySchema does not have a range key for index: {index_name}"
            )));
        };
        if index_keys.partition.name != table_keys.partition.name {
            return Err(ApiError::validation(format!(
                "{INVALID}: Index KeySchema does not have the same leading hash key as table KeySchema for index: {index_name}. index hash key: {}, table hash key: {}",
                index_keys.partition.name, table_keys.partition.name
            )));
        }
        let projection = projection(index.required_object("Projection")?)?;
        if local_indexes.iter().any(|local| local.name == index_name) {
            return Err(duplicate_index(index_name));
        }
        local_indexes.push(LocalSecondaryIndex {
            name: index_name.to_owned(),
            sort_key,
            projection,
        });
    }
    if local_indexes.len() > MAX_LOCAL_SECONDARY_INDEXES {
        return Err(ApiError::validation(format!(
            "{INVALID}: Number of LocalSecondaryIndexes exceeds per-table limit of {MAX_LOCAL_SECONDARY_INDEXES}"
        )));
    }
    Ok(local_indexes)
}

/// The names CreateTable gives (of attributes, then of indexes, the global
/// ones first), held to DynamoDB's length and pattern constraints before
/// anything else about them, every broken one listed.
fn check_names(body: Members<'_>) -> Result<(), ApiError> {
    let mut violations = Vec::new();
    for (member, at) in [
        ("AttributeDefinitions", "attributeDefinitions"),
        ("KeySchema", "keySchema"),
    ] {
        for (position, element) in body.list(member)?.unwrap_or_default().iter().enumerate() {
            if let Some(name) = element.get("AttributeName").and_then(Value::as_str) {
                let at = format!("{at}.{}.member.attributeName", position + 1);
                violations.extend(length_violation(name, &at, 1, MAX_KEY_ATTRIBUTE_NAME_BYTES));
            }
        }
    }
    for (member, at) in [
        ("GlobalSecondaryIndexes", "globalSecondaryIndexes"),
        ("LocalSecondaryIndexes", "localSecondaryIndexes"),
    ] {
        for (position, index) in body.list(member)?.unwrap_or_default().iter().enumerate() {
            if let Some(name) = index.get("IndexName").and_then(Value::as_str) {
                let at = format!("{at}.{}.member.indexName", position + 1);
                violations.extend(name_violations(name, &at, 3));
            }
        }
    }
    match violations.is_empty() {
        true => Ok(()),
        false => Err(validation_errors(&violations)),
    }
}

fn duplicate_index(name: &str) -> ApiError {
    ApiError::validation(format!("{INVALID}: Duplicate index name: {name}"))
}

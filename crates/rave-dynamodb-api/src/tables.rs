//! CreateTable, DescribeTable, ListTables and DeleteTable, the
//! `TableDescription` they (and UpdateTable) answer with, and the readers of
//! table shapes both CreateTable and UpdateTable take.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use rave_engine::IndexStatus;
use rave_store::{
    GlobalSecondaryIndex, KeyAttribute, KeySchema, KeyType, LocalSecondaryIndex,
    MAX_INDEX_KEY_ATTRIBUTES, MAX_KEY_ATTRIBUTE_NAME_BYTES, MAX_LOCAL_SECONDARY_INDEXES,
    Projection, ScanInput, Store, TableDefinition, item_size,
};
use serde_json::{Value, json};

use crate::DynamoApi;
use crate::error::ApiError;
use crate::metadata::{Billing, MetadataError, StreamViewType, TableMetadata, Throughput};
use crate::request::{
    Members, check_name, length_violation, missing, name_violations, validation_errors,
};
use crate::settings::{self, RequestedSettings, TableSettings};

/// The account and region in every ARN rave hands out: rave is one local
/// database, not a region of an account.
pub const ARN_PREFIX: &str = "arn:aws:dynamodb:local:000000000000:table/";

/// Most global secondary indexes one table has (DynamoDB's default quota).
const MAX_GLOBAL_SECONDARY_INDEXES: usize = 20;

/// Most table names one ListTables page holds.
const MAX_LIST_TABLES: i64 = 100;

pub const INVALID: &str = "One or more parameter values were invalid";

impl From<MetadataError> for ApiError {
    fn from(error: MetadataError) -> ApiError {
        ApiError::from(rave_store::StoreError::Internal(error.to_string()))
    }
}

pub async fn create_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
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
    let tags = crate::tags::read_tags(body.list("Tags")?.unwrap_or_default())?;
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

pub async fn describe_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let name = body.table_name()?;
    let description = current_description(api, name, "ACTIVE", None).await?;
    Ok(json!({ "Table": description }))
}

pub async fn delete_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let name = body.table_name()?;
    if let Some(metadata) = api.metadata.get(name)? {
        settings::check_deletable(&metadata.settings)?;
    }
    let description = current_description(api, name, "DELETING", None).await?;
    api.engine.delete_table(name).await?;
    api.metadata.remove(name)?;
    Ok(json!({ "TableDescription": description }))
}

pub async fn list_tables(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
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

/// The description of an existing table, counting its items now.
/// `just_created` names an index UpdateTable has just added, described as
/// DynamoDB answers the request that adds one: CREATING, even if the
/// backfill of a small table is already over.
pub async fn current_description(
    api: &DynamoApi,
    name: &str,
    status: &str,
    just_created: Option<&str>,
) -> Result<Value, ApiError> {
    let definition = api.engine.describe_table(name).await?;
    let metadata = api.metadata.get(name)?;
    let mut counts = Counts {
        table: count(api, name, None).await?,
        ..Counts::default()
    };
    for index in api.engine.describe_indexes(name)? {
        // An index still backfilling cannot be read, so not counted either:
        // DynamoDB too reports its figures only once it is active.
        if index.status == IndexStatus::Creating || just_created == Some(&index.index.name) {
            counts.backfilling.push(index.index.name);
            continue;
        }
        let counted = count(api, name, Some(&index.index.name)).await?;
        counts.indexes.insert(index.index.name, counted);
    }
    for index in &definition.local_secondary_indexes {
        let counted = count(api, name, Some(&index.name)).await?;
        counts.indexes.insert(index.name.clone(), counted);
    }
    Ok(describe(&definition, metadata.as_ref(), status, counts))
}

/// Items and bytes of a table and of each of its indexes, and which
/// indexes are still backfilling.
#[derive(Debug, Default)]
struct Counts {
    table: (u64, u64),
    indexes: BTreeMap<String, (u64, u64)>,
    backfilling: Vec<String>,
}

/// Counts by scanning. DynamoDB refreshes these figures every six hours or
/// so; rave counts them exactly, at the price of reading the whole table.
async fn count(api: &DynamoApi, table: &str, index: Option<&str>) -> Result<(u64, u64), ApiError> {
    let (mut items, mut bytes) = (0u64, 0u64);
    let mut start = None;
    loop {
        let mut input = ScanInput::new(table);
        input.index = index.map(str::to_owned);
        input.exclusive_start_key = start;
        let page = api.engine.scan(input).await?;
        items += page.items.len() as u64;
        bytes += page.items.iter().map(|i| item_size(i) as u64).sum::<u64>();
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => return Ok((items, bytes)),
        }
    }
}

fn describe(
    definition: &TableDefinition,
    metadata: Option<&TableMetadata>,
    status: &str,
    counts: Counts,
) -> Value {
    let arn = format!("{ARN_PREFIX}{}", definition.name);
    let billing = metadata.map_or(Billing::PayPerRequest, |m| m.billing);
    let mut description = json!({
        "TableName": definition.name,
        "TableStatus": status,
        "TableArn": arn,
        "KeySchema": key_schema_json(&definition.key_schema),
        "AttributeDefinitions": attribute_definitions_json(definition),
        "ItemCount": counts.table.0,
        "TableSizeBytes": counts.table.1,
        "ProvisionedThroughput": throughput_json(match billing {
            Billing::Provisioned(throughput) => Some(throughput),
            Billing::PayPerRequest => None,
        }),
        "BillingModeSummary": match billing {
            Billing::Provisioned(_) => json!({"BillingMode": "PROVISIONED"}),
            Billing::PayPerRequest => json!({"BillingMode": "PAY_PER_REQUEST"}),
        },
        "TableId": metadata
            .and_then(|m| m.table_id.clone())
            .unwrap_or_else(|| settings::uuid_from(definition.name.as_bytes())),
    });
    settings::describe(
        metadata.map_or(&TableSettings::default(), |m| &m.settings),
        &mut description,
    );
    if let Some(created) = metadata.and_then(|m| m.created) {
        description["CreationDateTime"] = json!(created);
        if billing == Billing::PayPerRequest {
            description["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] = json!(created);
        }
    }
    if definition.stream_enabled {
        let view = metadata.map(|m| m.stream_view_type).unwrap_or_default();
        description["StreamSpecification"] =
            json!({"StreamEnabled": true, "StreamViewType": view.name()});
    }
    // A disabled stream is still the table's latest, as DynamoDB describes
    // it, if the table ever had one.
    if definition.stream_enabled || metadata.is_some_and(|m| m.stream_enabled_at.is_some()) {
        let label = crate::streams::stream_label(metadata);
        description["LatestStreamLabel"] = json!(label);
        description["LatestStreamArn"] =
            json!(crate::streams::stream_arn(&definition.name, &label));
    }
    if !definition.global_secondary_indexes.is_empty() {
        description["GlobalSecondaryIndexes"] = definition
            .global_secondary_indexes
            .iter()
            .map(|index| {
                let (items, bytes) = counts.indexes.get(&index.name).copied().unwrap_or_default();
                let throughput = metadata.and_then(|m| m.index_throughput.get(&index.name));
                let backfilling = counts.backfilling.contains(&index.name);
                let mut described = json!({
                    "IndexName": index.name,
                    "IndexArn": format!("{arn}/index/{}", index.name),
                    "IndexStatus": match (status, backfilling) {
                        ("DELETING", _) => "DELETING",
                        (_, true) => "CREATING",
                        (_, false) => "ACTIVE",
                    },
                    "KeySchema": key_schema_json(&index.key_schema),
                    "Projection": projection_json(&index.projection),
                    "ProvisionedThroughput": throughput_json(throughput.copied()),
                    "ItemCount": items,
                    "IndexSizeBytes": bytes,
                });
                // DynamoDB shows the flag only on an index UpdateTable added,
                // while it builds.
                if backfilling {
                    described["Backfilling"] = json!(true);
                }
                described
            })
            .collect();
    }
    if !definition.local_secondary_indexes.is_empty() {
        description["LocalSecondaryIndexes"] = definition
            .local_secondary_indexes
            .iter()
            .map(|index| {
                let (items, bytes) = counts.indexes.get(&index.name).copied().unwrap_or_default();
                json!({
                    "IndexName": index.name,
                    "IndexArn": format!("{arn}/index/{}", index.name),
                    "KeySchema": key_schema_json(&index.key_schema(&definition.key_schema.partition)),
                    "Projection": projection_json(&index.projection),
                    "ItemCount": items,
                    "IndexSizeBytes": bytes,
                })
            })
            .collect();
    }
    description
}

fn throughput_json(throughput: Option<Throughput>) -> Value {
    let Throughput { read, write } = throughput.unwrap_or(Throughput { read: 0, write: 0 });
    json!({"NumberOfDecreasesToday": 0, "ReadCapacityUnits": read, "WriteCapacityUnits": write})
}

pub fn key_schema_json(schema: &KeySchema) -> Value {
    let element = |attribute: &KeyAttribute, role: &str| json!({"AttributeName": attribute.name, "KeyType": role});
    schema
        .partition_attributes()
        .map(|a| element(a, "HASH"))
        .chain(schema.sort_attributes().map(|a| element(a, "RANGE")))
        .collect()
}

/// Every key attribute of the table and its indexes, once each.
fn attribute_definitions_json(definition: &TableDefinition) -> Value {
    let mut seen: Vec<&KeyAttribute> = Vec::new();
    for attribute in definition.key_attributes() {
        if !seen.iter().any(|a| a.name == attribute.name) {
            seen.push(attribute);
        }
    }
    seen.iter()
        .map(|a| {
            json!({"AttributeName": a.name, "AttributeType": a.key_type.attribute_type().as_str()})
        })
        .collect()
}

fn projection_json(projection: &Projection) -> Value {
    match projection {
        Projection::All => json!({"ProjectionType": "ALL"}),
        Projection::KeysOnly => json!({"ProjectionType": "KEYS_ONLY"}),
        Projection::Include(attributes) => {
            json!({"ProjectionType": "INCLUDE", "NonKeyAttributes": attributes})
        }
    }
}

pub fn object<'a>(value: &'a Value, member: &str) -> Result<Members<'a>, ApiError> {
    match value {
        Value::Object(members) => Ok(Members(members)),
        _ => Err(ApiError::serialization(format!(
            "the members of {member} must be structures"
        ))),
    }
}

/// An `AttributeDefinitions` list: each attribute's name and type.
pub fn attribute_definitions(listed: &[Value]) -> Result<Vec<(String, KeyType)>, ApiError> {
    let mut definitions: Vec<(String, KeyType)> = Vec::new();
    for (position, definition) in listed.iter().enumerate() {
        let definition = object(definition, "AttributeDefinitions")?;
        let name = definition.required_string("AttributeName")?;
        let at = format!("attributeDefinitions.{}.member.attributeType", position + 1);
        let key_type = match definition.choice_at("AttributeType", &at, &["B", "N", "S"])? {
            Some("B") => KeyType::B,
            Some("N") => KeyType::N,
            Some(_) => KeyType::S,
            None => return Err(missing("AttributeType")),
        };
        if definitions.iter().any(|(seen, _)| seen == name) {
            return Err(ApiError::validation(format!(
                "{INVALID}: Cannot have two attributes with the same name"
            )));
        }
        definitions.push((name.to_owned(), key_type));
    }
    Ok(definitions)
}

/// A table's or a local secondary index's `KeySchema`, each attribute
/// typed by its definition; `used` collects the attributes that some key
/// schema names.
/// `at` places the list in DynamoDB's messages (`keySchema`, or an index's).
pub fn key_schema(
    elements: &[Value],
    at: &str,
    definitions: &[(String, KeyType)],
    used: &mut Vec<String>,
) -> Result<KeySchema, ApiError> {
    let keys = key_elements(elements, at)?;
    key_schema_of(&keys, at, definitions, used)
}

fn key_schema_of(
    keys: &[(&str, &str)],
    at: &str,
    definitions: &[(String, KeyType)],
    used: &mut Vec<String>,
) -> Result<KeySchema, ApiError> {
    let typed = |name: &str, used: &mut Vec<String>| typed_key(name, keys, definitions, used);
    match keys {
        [(partition, "HASH")] => Ok(KeySchema::new(typed(partition, used)?, None)),
        // One attribute cannot be defined twice, so one of the two keys
        // always lacks a definition of its own.
        [(partition, "HASH"), (sort, "RANGE")] if partition == sort => Err(ApiError::validation(
            "Invalid KeySchema: Some index key attribute have no definition",
        )),
        [(partition, "HASH"), (sort, "RANGE")] => Ok(KeySchema::new(
            typed(partition, used)?,
            Some(typed(sort, used)?),
        )),
        [] => Err(ApiError::validation(
            "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy constraint: Member must have length greater than or equal to 1",
        )),
        [(_, "RANGE"), ..] => Err(ApiError::validation(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        )),
        [_, _] => Err(ApiError::validation(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        )),
        _ => {
            let elements: Vec<String> = keys
                .iter()
                .map(|(name, role)| {
                    format!("KeySchemaElement(attributeName={name}, keyType={role})")
                })
                .collect();
            Err(validation_errors(&[format!(
                "Value '[{}]' at '{at}' failed to satisfy constraint: Member must have length less than or equal to 2",
                elements.join(", ")
            )]))
        }
    }
}

/// A global secondary index's `KeySchema`: one HASH and at most one RANGE
/// attribute as for a table, or a key of several attributes, up to four
/// HASH then up to four RANGE; `used` and `at` as for [`key_schema`]. The
/// refusals of a key of several attributes are worded as DynamoDB Local
/// words them (the developer guide gives no wording).
pub fn global_index_key_schema(
    elements: &[Value],
    at: &str,
    definitions: &[(String, KeyType)],
    used: &mut Vec<String>,
) -> Result<KeySchema, ApiError> {
    let keys = key_elements(elements, at)?;
    let several = keys.len() > 2 || matches!(keys.as_slice(), [(_, "HASH"), (_, "HASH")]);
    if !several || keys.first().is_some_and(|(_, role)| *role == "RANGE") {
        return key_schema_of(&keys, at, definitions, used);
    }
    if keys.len() > 2 * MAX_INDEX_KEY_ATTRIBUTES {
        return Err(ApiError::validation(
            "Key Schema too big.  Key Schema must at most consist of the hash and range key of a table",
        ));
    }
    if keys
        .iter()
        .enumerate()
        .any(|(at, (name, _))| keys[..at].iter().any(|(seen, _)| seen == name))
    {
        return Err(ApiError::validation("Two keys can not have the same name"));
    }
    let hash_count = keys.iter().take_while(|(_, role)| *role == "HASH").count();
    if keys[hash_count..].iter().any(|(_, role)| *role == "HASH") {
        return Err(ApiError::validation(
            "Invalid key order. Hash Key must be specified first in key schema, Range Key must be specifed second",
        ));
    }
    if hash_count > MAX_INDEX_KEY_ATTRIBUTES {
        return Err(ApiError::validation(format!(
            "Too many partition keys. GSI can have at most {MAX_INDEX_KEY_ATTRIBUTES} partition keys"
        )));
    }
    if keys.len() - hash_count > MAX_INDEX_KEY_ATTRIBUTES {
        return Err(ApiError::validation(format!(
            "Too many sort keys. GSI can have at most {MAX_INDEX_KEY_ATTRIBUTES} sort keys"
        )));
    }
    let mut typed = Vec::with_capacity(keys.len());
    for (name, _) in &keys {
        typed.push(typed_key(name, &keys, definitions, used)?);
    }
    let sort = typed.split_off(hash_count);
    // The first element is a HASH one (checked above), so there is a
    // partition attribute.
    KeySchema::of(typed, sort).ok_or_else(|| {
        ApiError::validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
    })
}

/// The elements of a `KeySchema` as (attribute name, key type).
fn key_elements<'a>(elements: &'a [Value], at: &str) -> Result<Vec<(&'a str, &'a str)>, ApiError> {
    let mut keys = Vec::new();
    for (position, element) in elements.iter().enumerate() {
        let element = object(element, "KeySchema")?;
        let name = element.required_string("AttributeName")?;
        let role = element
            .choice_at(
                "KeyType",
                &format!("{at}.{}.member.keyType", position + 1),
                &["HASH", "RANGE"],
            )?
            .ok_or_else(|| missing("KeyType"))?;
        keys.push((name, role));
    }
    Ok(keys)
}

/// The key attribute `name` of the key schema `keys`, typed by its
/// definition, recorded in `used`.
fn typed_key(
    name: &str,
    keys: &[(&str, &str)],
    definitions: &[(String, KeyType)],
    used: &mut Vec<String>,
) -> Result<KeyAttribute, ApiError> {
    let key_type = definitions
        .iter()
        .find(|(defined, _)| defined == name)
        .map(|(_, key_type)| *key_type)
        .ok_or_else(|| {
            let defined: Vec<&str> = definitions.iter().map(|(n, _)| n.as_str()).collect();
            let keys: Vec<&str> = keys.iter().map(|(n, _)| *n).collect();
            ApiError::validation(format!(
                "{INVALID}: Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
                keys.join(", "),
                defined.join(", ")
            ))
        })?;
    if !used.iter().any(|u| u == name) {
        used.push(name.to_owned());
    }
    Ok(KeyAttribute::new(name, key_type))
}

pub fn projection(projection: Members<'_>) -> Result<Projection, ApiError> {
    let projection_type = projection
        .choice("ProjectionType", &["ALL", "KEYS_ONLY", "INCLUDE"])?
        .ok_or_else(|| missing("ProjectionType"))?;
    let attributes = projection
        .list("NonKeyAttributes")?
        .map(|attributes| {
            attributes
                .iter()
                .map(|a| {
                    a.as_str().map(str::to_owned).ok_or_else(|| {
                        ApiError::serialization("NonKeyAttributes must be a list of strings")
                    })
                })
                .collect::<Result<Vec<String>, ApiError>>()
        })
        .transpose()?;
    match (projection_type, attributes) {
        ("INCLUDE", Some(attributes)) if !attributes.is_empty() => {
            Ok(Projection::Include(attributes))
        }
        ("INCLUDE", _) => Err(ApiError::validation(format!(
            "{INVALID}: ProjectionType is INCLUDE, but NonKeyAttributes is not specified"
        ))),
        (other, Some(_)) => Err(ApiError::validation(format!(
            "{INVALID}: ProjectionType is {other}, but NonKeyAttributes is specified"
        ))),
        ("ALL", None) => Ok(Projection::All),
        (_, None) => Ok(Projection::KeysOnly),
    }
}

/// A `ProvisionedThroughput` member, if present.
pub fn throughput(members: Members<'_>) -> Result<Option<Throughput>, ApiError> {
    let Some(throughput) = members.object("ProvisionedThroughput")? else {
        return Ok(None);
    };
    let units = |member: &str| {
        let value = throughput.integer(member)?.ok_or_else(|| missing(member))?;
        if value < 1 {
            return Err(ApiError::validation(format!(
                "1 validation error detected: Value '{value}' at 'provisionedThroughput.{}' failed to satisfy constraint: Member must have value greater than or equal to 1",
                crate::request::lower_first(member)
            )));
        }
        Ok(value)
    };
    Ok(Some(Throughput {
        read: units("ReadCapacityUnits")?,
        write: units("WriteCapacityUnits")?,
    }))
}

/// An index's throughput under the table's billing: required when
/// provisioned, refused when on demand.
pub fn index_throughput_for(
    billing: Billing,
    index: &str,
    given: Option<Throughput>,
) -> Result<Option<Throughput>, ApiError> {
    match (billing, given) {
        (Billing::Provisioned(_), Some(throughput)) => Ok(Some(throughput)),
        (Billing::Provisioned(_), None) => Err(ApiError::validation(format!(
            "{INVALID}: ProvisionedThroughput must be specified for index: {index}"
        ))),
        (Billing::PayPerRequest, Some(_)) => Err(ApiError::validation(format!(
            "{INVALID}: ProvisionedThroughput should not be specified for index: {index} when BillingMode is PAY_PER_REQUEST"
        ))),
        (Billing::PayPerRequest, None) => Ok(None),
    }
}

fn billing(body: Members<'_>) -> Result<Billing, ApiError> {
    let mode = body.choice("BillingMode", &["PROVISIONED", "PAY_PER_REQUEST"])?;
    match (mode, throughput(body)?) {
        (Some("PAY_PER_REQUEST"), None) => Ok(Billing::PayPerRequest),
        (Some("PAY_PER_REQUEST"), Some(_)) => Err(ApiError::validation(format!(
            "{INVALID}: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
        ))),
        (_, Some(throughput)) => Ok(Billing::Provisioned(throughput)),
        (_, None) => Err(ApiError::validation(format!(
            "{INVALID}: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED"
        ))),
    }
}

/// A `StreamSpecification`, if given: the view type of a stream to enable,
/// or `None` for a stream disabled. The engine records every change with
/// both images; the view is applied on read.
/// CreateTable's and UpdateTable's answers differ where a specification
/// contradicts itself.
pub fn stream_specification(
    body: Members<'_>,
    creating: bool,
) -> Result<Option<Option<StreamViewType>>, ApiError> {
    let Some(stream) = body.object("StreamSpecification")? else {
        return Ok(None);
    };
    let Some(enabled) = stream.optional_bool("StreamEnabled")? else {
        return Err(ApiError::validation(
            "1 validation error detected: Value null at 'streamSpecification.streamEnabled' failed to satisfy constraint: Member must not be null",
        ));
    };
    if !enabled {
        if stream.string("StreamViewType")?.is_some() {
            return Err(ApiError::validation(match creating {
                true => format!(
                    "{INVALID}: Table is being created with a stream disabled, UpdateViewType should not be specified"
                ),
                false => "Invalid StreamViewType: Stream StreamEnabled was false but a StreamViewType was present.".to_owned(),
            }));
        }
        return Ok(Some(None));
    }
    let view = stream.choice(
        "StreamViewType",
        &["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"],
    )?;
    match view.and_then(StreamViewType::named) {
        Some(view) => Ok(Some(Some(view))),
        None => Err(ApiError::validation(match creating {
            true => format!(
                "{INVALID}: Table is being created with a stream enabled, UpdateViewType is required"
            ),
            false => format!("{INVALID}: You must specify a StreamViewType when enabling streams"),
        })),
    }
}

pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |elapsed| (elapsed.as_millis() as f64) / 1000.0)
}

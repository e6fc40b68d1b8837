//! The `TableDescription` CreateTable, DescribeTable, UpdateTable and
//! DeleteTable answer with: the engine's definition, the metadata rave keeps
//! beside it, and item counts taken by scanning.
//!
//! DynamoDB's counts are estimates refreshed every few hours; here the item
//! counts and sizes of the table and of each index are exact, counted by a
//! scan when described. An index still backfilling is CREATING with
//! `Backfilling`, and uncounted.

use std::collections::BTreeMap;

use rave_engine::IndexStatus;
use rave_store::{
    KeyAttribute, KeySchema, Projection, ScanInput, Store, TableDefinition, item_size,
};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::arn::{stream_arn, stream_label, table_arn};
use crate::error::ApiError;
use crate::metadata::{Billing, TableMetadata, Throughput};
use crate::settings::{self, TableSettings};

/// The description of an existing table, counting its items now.
/// `just_created` names an index UpdateTable has just added, described as
/// DynamoDB answers the request that adds one: CREATING, even if the
/// backfill of a small table is already over.
pub(crate) async fn current_description(
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
pub(crate) struct Counts {
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

pub(crate) fn describe(
    definition: &TableDefinition,
    metadata: Option<&TableMetadata>,
    status: &str,
    counts: Counts,
) -> Value {
    let arn = table_arn(&definition.name);
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
        let label = stream_label(metadata);
        description["LatestStreamLabel"] = json!(label);
        description["LatestStreamArn"] = json!(stream_arn(&definition.name, &label));
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

pub(crate) fn key_schema_json(schema: &KeySchema) -> Value {
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

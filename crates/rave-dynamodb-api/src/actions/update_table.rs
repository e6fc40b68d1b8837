//! UpdateTable: a global secondary index created (backfilled from the
//! table's items by the engine, CREATING until then) or deleted, the billing
//! mode and provisioned throughput changed, the stream enabled or disabled.
//!
//! Everything the request asks is checked before anything changes, so a
//! refused request changes nothing: the engine applies the index change and
//! the stream change, each refused again there if a concurrent request got
//! in first, and the metadata (billing, throughput, stream view) is written
//! last.
//!
//! One global secondary index is created or deleted per request. Enabling a
//! stream makes a new one: labelled by the time it was enabled, it starts
//! after the engine's sequence number of that moment (both kept in the
//! metadata), so records of an earlier stream of the table never show in
//! it.

use std::collections::BTreeMap;

use rave_engine::IndexChange;
use rave_store::{GlobalSecondaryIndex, Store, TableDefinition};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::description::current_description;
use crate::error::{ApiError, ErrorKind};
use crate::metadata::{Billing, StreamViewType, TableMetadata, Throughput, now};
use crate::request::INVALID;
use crate::request::{Members, missing};
use crate::settings::RequestedSettings;
use crate::table_spec::{
    attribute_definitions, global_index_key_schema, index_throughput_for, object, projection,
    stream_specification, throughput,
};

/// One entry of `GlobalSecondaryIndexUpdates`.
#[derive(Debug)]
enum IndexUpdate {
    Create {
        index: GlobalSecondaryIndex,
        throughput: Option<Throughput>,
    },
    /// A new provisioned throughput for an existing index.
    Update {
        name: String,
        throughput: Throughput,
    },
    Delete {
        name: String,
    },
}

impl IndexUpdate {
    fn name(&self) -> &str {
        match self {
            IndexUpdate::Create { index, .. } => &index.name,
            IndexUpdate::Update { name, .. } | IndexUpdate::Delete { name } => name,
        }
    }
}

pub(crate) async fn update_table(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    body.refuse(&[
        "ReplicaUpdates",
        "WarmThroughput",
        "MultiRegionConsistency",
        "GlobalTableWitnessUpdates",
    ])?;
    let name = body.table_name()?;
    let mode = body.choice("BillingMode", &["PROVISIONED", "PAY_PER_REQUEST"])?;
    let requested = throughput(body)?;
    let stream = stream_specification(body, false)?;
    let definitions =
        attribute_definitions(body.list("AttributeDefinitions")?.unwrap_or_default())?;
    let updates = index_updates(body, &definitions)?;
    let settings = RequestedSettings::read(body)?;
    if mode.is_none()
        && requested.is_none()
        && stream.is_none()
        && updates.is_empty()
        && settings.is_empty()
    {
        return Err(ApiError::validation(
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required",
        ));
    }
    let definition = api.engine.describe_table(name).await?;
    let metadata = api.metadata.get(name)?.unwrap_or_default();
    let billing = next_billing(metadata.billing, mode, requested)?;
    let index_throughput = next_index_throughput(&definition, &metadata, billing, &updates)?;
    let change = index_change(&definition, keep_declared_key_types(&definition, updates))?;
    if let Some(stream) = stream {
        check_stream_change(&definition, stream)?;
    }

    let created = match &change {
        Some(IndexChange::Create(index)) => Some(index.name.clone()),
        _ => None,
    };
    // The engine drops a deleted index at once; DynamoDB's answer still
    // lists it, DELETING, as it is when the request returns.
    let deleting = match &change {
        Some(IndexChange::Delete(index)) => {
            let before = current_description(api, name, "UPDATING", None).await?;
            global_index(&before, index).map(|mut described| {
                described["IndexStatus"] = json!("DELETING");
                described
            })
        }
        _ => None,
    };
    if let Some(change) = change {
        api.engine.update_table(name, change).await?;
    }
    let mut stream_started = None;
    if let Some(stream) = stream {
        let before = api.engine.latest_sequence();
        api.engine.update_stream(name, stream.is_some()).await?;
        if stream.is_some() {
            stream_started = Some((now(), before));
        }
    }
    let changed_at = now();
    api.metadata.update(name, |metadata| {
        settings.apply_to(&mut metadata.settings, changed_at);
        metadata.billing = billing;
        metadata.index_throughput = index_throughput;
        if let (Some(Some(view)), Some((at, after))) = (stream, stream_started) {
            metadata.stream_view_type = view;
            metadata.stream_enabled_at = Some(at);
            metadata.stream_starts_after = after;
        }
    })?;
    let mut description = current_description(api, name, "UPDATING", created.as_deref()).await?;
    if let Some(deleting) = deleting {
        match description.get_mut("GlobalSecondaryIndexes") {
            Some(Value::Array(indexes)) => indexes.push(deleting),
            _ => description["GlobalSecondaryIndexes"] = json!([deleting]),
        }
    }
    Ok(json!({ "TableDescription": description }))
}

/// A new index's key attribute that is already a key of the table keeps
/// the type it was declared with: DynamoDB accepts a request that declares
/// it again with another type, and ignores that declaration.
fn keep_declared_key_types(
    definition: &TableDefinition,
    mut updates: Vec<IndexUpdate>,
) -> Vec<IndexUpdate> {
    for update in &mut updates {
        if let IndexUpdate::Create { index, .. } = update {
            for attribute in index.key_schema.attributes_mut() {
                if let Some(declared) = definition.key_type_of(&attribute.name) {
                    attribute.key_type = declared;
                }
            }
        }
    }
    updates
}

/// The description of global secondary index `name` in a table's description.
fn global_index(description: &Value, name: &str) -> Option<Value> {
    description["GlobalSecondaryIndexes"]
        .as_array()?
        .iter()
        .find(|index| index["IndexName"] == name)
        .cloned()
}

/// Reads `GlobalSecondaryIndexUpdates` and checks what needs no table: one
/// action per entry, one entry per index, one index created or deleted per
/// request (DynamoDB builds one index at a time).
fn index_updates(
    body: Members<'_>,
    definitions: &[(String, rave_store::KeyType)],
) -> Result<Vec<IndexUpdate>, ApiError> {
    let mut updates: Vec<IndexUpdate> = Vec::new();
    for (position, entry) in body
        .list("GlobalSecondaryIndexUpdates")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let entry = object(entry, "GlobalSecondaryIndexUpdates")?;
        let actions = (
            entry.object("Create")?,
            entry.object("Update")?,
            entry.object("Delete")?,
        );
        let update = match actions {
            (Some(create), None, None) => {
                let index_name = create.required_string("IndexName")?;
                let keys = create
                    .list("KeySchema")?
                    .ok_or_else(|| missing("KeySchema"))?;
                IndexUpdate::Create {
                    index: GlobalSecondaryIndex {
                        name: index_name.to_owned(),
                        key_schema: global_index_key_schema(
                            keys,
                            &format!(
                                "globalSecondaryIndexUpdates.{}.member.create.keySchema",
                                position + 1
                            ),
                            definitions,
                            &mut Vec::new(),
                        )?,
                        projection: projection(create.required_object("Projection")?)?,
                    },
                    throughput: throughput(create)?,
                }
            }
            (None, Some(update), None) => IndexUpdate::Update {
                name: update.required_string("IndexName")?.to_owned(),
                throughput: throughput(update)?.ok_or_else(|| missing("ProvisionedThroughput"))?,
            },
            (None, None, Some(delete)) => IndexUpdate::Delete {
                name: delete.required_string("IndexName")?.to_owned(),
            },
            (None, None, None) => {
                return Err(ApiError::validation(format!(
                    "{INVALID}: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null"
                )));
            }
            _ => {
                return Err(ApiError::validation(format!(
                    "{INVALID}: Only one of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete can be specified"
                )));
            }
        };
        if updates.iter().any(|seen| seen.name() == update.name()) {
            return Err(ApiError::validation(format!(
                "{INVALID}: Only one global secondary index update per index is allowed simultaneously. Index: {}",
                update.name()
            )));
        }
        updates.push(update);
    }
    let structural = updates
        .iter()
        .filter(|u| !matches!(u, IndexUpdate::Update { .. }))
        .count();
    if structural > 1 {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
        ));
    }
    Ok(updates)
}

/// The table's billing after the request, under DynamoDB's rules.
fn next_billing(
    current: Billing,
    mode: Option<&str>,
    requested: Option<Throughput>,
) -> Result<Billing, ApiError> {
    let on_demand = match mode {
        Some(mode) => mode == "PAY_PER_REQUEST",
        None => current == Billing::PayPerRequest,
    };
    match (on_demand, requested) {
        (true, Some(_)) => Err(ApiError::validation(format!(
            "{INVALID}: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
        ))),
        (true, None) => Ok(Billing::PayPerRequest),
        (false, Some(throughput)) => match current {
            Billing::Provisioned(now) if now == throughput => Err(ApiError::validation(format!(
                "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: {}. Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for the table: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
                now.read, throughput.read, now.write, throughput.write
            ))),
            _ => Ok(Billing::Provisioned(throughput)),
        },
        (false, None) => match current {
            Billing::Provisioned(_) => Ok(current),
            Billing::PayPerRequest => Err(ApiError::validation(format!(
                "{INVALID}: ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
            ))),
        },
    }
}

/// Each index's throughput after the request: an on-demand table has none;
/// on a provisioned one every index keeps, is given or is created with its
/// own.
fn next_index_throughput(
    definition: &TableDefinition,
    metadata: &TableMetadata,
    billing: Billing,
    updates: &[IndexUpdate],
) -> Result<BTreeMap<String, Throughput>, ApiError> {
    let mut next = match metadata.billing {
        Billing::Provisioned(_) => metadata.index_throughput.clone(),
        Billing::PayPerRequest => BTreeMap::new(),
    };
    let mut indexes: Vec<&str> = definition
        .global_secondary_indexes
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    for update in updates {
        match update {
            IndexUpdate::Create { index, throughput } => {
                indexes.push(&index.name);
                next.remove(&index.name);
                if let Some(given) = index_throughput_for(billing, &index.name, *throughput)? {
                    next.insert(index.name.clone(), given);
                }
            }
            IndexUpdate::Update { name, throughput } => {
                if !indexes.contains(&name.as_str()) {
                    return Err(index_not_found(name, &definition.name));
                }
                if let Some(given) = index_throughput_for(billing, name, Some(*throughput))? {
                    next.insert(name.clone(), given);
                }
            }
            IndexUpdate::Delete { name } => {
                indexes.retain(|i| i != name);
                next.remove(name);
            }
        }
    }
    match billing {
        Billing::PayPerRequest => Ok(BTreeMap::new()),
        Billing::Provisioned(_) => {
            if let Some(unprovisioned) = indexes.iter().find(|i| !next.contains_key(**i)) {
                return Err(ApiError::validation(format!(
                    "{INVALID}: ProvisionedThroughput must be specified for index: {unprovisioned}"
                )));
            }
            next.retain(|index, _| indexes.contains(&index.as_str()));
            Ok(next)
        }
    }
}

/// The index the request creates or deletes, checked against the table as
/// the engine will check it.
fn index_change(
    definition: &TableDefinition,
    updates: Vec<IndexUpdate>,
) -> Result<Option<IndexChange>, ApiError> {
    let exists = |name: &str| {
        definition
            .global_secondary_indexes
            .iter()
            .any(|i| i.name == name)
    };
    for update in updates {
        match update {
            IndexUpdate::Create { index, .. } => {
                if exists(&index.name) {
                    return Err(ApiError::validation(format!(
                        "{INVALID}: Attempting to create an index which already exists: {}",
                        index.name
                    )));
                }
                let mut next = definition.clone();
                next.global_secondary_indexes.push(index.clone());
                next.validate().map_err(ApiError::validation)?;
                return Ok(Some(IndexChange::Create(index)));
            }
            IndexUpdate::Delete { name } => {
                if !exists(&name) {
                    return Err(index_not_found(&name, &definition.name));
                }
                return Ok(Some(IndexChange::Delete(name)));
            }
            IndexUpdate::Update { .. } => {}
        }
    }
    Ok(None)
}

fn check_stream_change(
    definition: &TableDefinition,
    stream: Option<StreamViewType>,
) -> Result<(), ApiError> {
    match (definition.stream_enabled, stream) {
        (true, Some(_)) => Err(ApiError::validation(format!(
            "Table already has an enabled stream: TableName: {}",
            definition.name
        ))),
        (false, None) => Err(ApiError::validation(format!(
            "Table has no stream to disable: TableName: {}",
            definition.name
        ))),
        _ => Ok(()),
    }
}

fn index_not_found(index: &str, table: &str) -> ApiError {
    ApiError::new(
        ErrorKind::ResourceNotFound,
        format!("Requested resource not found: Index: {index} not found on table {table}"),
    )
}

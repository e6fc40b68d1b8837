//! rave's DynamoDB backend: [`rave_store::Store`] over the AWS SDK for
//! Rust, against Amazon DynamoDB or any endpoint that speaks its API
//! (DynamoDB Local in the tests).
//!
//! Requests map one to one: rave-store's `RequestExpressions` says which
//! expressions each typed operation sends, rendered with placeholders (the
//! bench's dynoxide adapter takes the same), and this crate moves them into
//! the SDK's builders (`convert` for attribute values, `client` for the
//! connection); errors map to the same kinds the embedded engine reports
//! (`error`: throttling exceptions are `Throttled`; timeouts, dispatch
//! failures and 5xx are `Unavailable`; a value that does not convert is
//! `Corrupt`); every call asks for consumed capacity (INDEXES) and reports
//! it. The SDK retries throttled requests with backoff; the unprocessed
//! part of a batch is resent with [`rave_store::Retry`] before what is left
//! is returned.
//!
//! `streams` is the aggregator's [`rave_store::ChangeFeed`] on DynamoDB
//! Streams. The crate is built only by `rave` with `--features dynamodb`,
//! so the engine, the domain and the default binary build without the SDK.

#![warn(unreachable_pub)]

mod client;
mod convert;
mod error;
mod streams;

pub use client::{Connection, DynamoStore};
pub use streams::{StreamsBatch, StreamsFeed};

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types as sdk;
use rave_store::{
    BatchGetItemInput, BatchGetItemOutput, BatchWriteItemInput, BatchWriteItemOutput,
    ConsumedCapacity, DeleteItemInput, GetItemInput, GetItemOutput, GlobalSecondaryIndex,
    IndexDrift, KeyAttribute, KeySchema, KeyType, LocalSecondaryIndex, Page, PositionLayout,
    Projection, PutItemInput, QueryInput, Result, Retry, ScanInput, Store, StoreError,
    TableDefinition, TableKeys, TransactWriteAction, TransactWriteItemsInput,
    TransactWriteItemsOutput, UpdateItemInput, WriteOutput, WriteRequest, add_by_table,
};

use convert::{item_from_sdk, item_to_sdk};
use error::{map_error, transaction_error};

impl DynamoStore {
    /// A durable consumer of `table`'s stream that keeps its position in
    /// items laid out by `positions` (the table's owner decides their keys).
    pub async fn feed(
        &self,
        table: &str,
        consumer: &str,
        positions: Box<dyn PositionLayout>,
    ) -> Result<StreamsFeed> {
        StreamsFeed::open(
            self.clone(),
            self.streams.clone(),
            table,
            consumer,
            positions,
        )
        .await
    }

    /// One BatchGetItem call.
    async fn batch_get_once(&self, requests: &[TableKeys]) -> Result<BatchGetItemOutput> {
        let mut request = HashMap::new();
        for r in requests {
            request.insert(
                r.table.clone(),
                sdk::KeysAndAttributes::builder()
                    .set_keys(Some(r.keys.iter().map(item_to_sdk).collect()))
                    .consistent_read(r.consistent_read)
                    .build()
                    .map_err(build_error)?,
            );
        }
        let out = self
            .client
            .batch_get_item()
            .set_request_items(Some(request))
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        let mut responses = Vec::new();
        for (table, items) in out.responses().into_iter().flatten() {
            responses.push((
                table.clone(),
                items.iter().map(item_from_sdk).collect::<Result<_>>()?,
            ));
        }
        let mut unprocessed = Vec::new();
        for (table, keys) in out.unprocessed_keys().into_iter().flatten() {
            unprocessed.push(TableKeys {
                table: table.clone(),
                keys: keys
                    .keys()
                    .iter()
                    .map(item_from_sdk)
                    .collect::<Result<_>>()?,
                consistent_read: keys.consistent_read().unwrap_or(false),
            });
        }
        Ok(BatchGetItemOutput {
            responses,
            unprocessed,
            consumed: out
                .consumed_capacity()
                .iter()
                .map(|c| capacity(Some(c), c.table_name().unwrap_or_default()))
                .collect(),
        })
    }

    /// One BatchWriteItem call.
    async fn batch_write_once(
        &self,
        requests: &[(String, WriteRequest)],
    ) -> Result<BatchWriteItemOutput> {
        let mut request: HashMap<String, Vec<sdk::WriteRequest>> = HashMap::new();
        for (table, write) in requests {
            let w = match write {
                WriteRequest::Put(item) => sdk::WriteRequest::builder()
                    .put_request(
                        sdk::PutRequest::builder()
                            .set_item(Some(item_to_sdk(item)))
                            .build()
                            .map_err(build_error)?,
                    )
                    .build(),
                WriteRequest::Delete(key) => sdk::WriteRequest::builder()
                    .delete_request(
                        sdk::DeleteRequest::builder()
                            .set_key(Some(item_to_sdk(key)))
                            .build()
                            .map_err(build_error)?,
                    )
                    .build(),
            };
            request.entry(table.clone()).or_default().push(w);
        }
        let out = self
            .client
            .batch_write_item()
            .set_request_items(Some(request))
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        let mut unprocessed = Vec::new();
        for (table, writes) in out.unprocessed_items().into_iter().flatten() {
            for w in writes {
                if let Some(put) = w.put_request() {
                    unprocessed
                        .push((table.clone(), WriteRequest::Put(item_from_sdk(put.item())?)));
                } else if let Some(delete) = w.delete_request() {
                    unprocessed.push((
                        table.clone(),
                        WriteRequest::Delete(item_from_sdk(delete.key())?),
                    ));
                }
            }
        }
        Ok(BatchWriteItemOutput {
            unprocessed,
            consumed: out
                .consumed_capacity()
                .iter()
                .map(|c| write_capacity(Some(c), c.table_name().unwrap_or_default()))
                .collect(),
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Creates a table billed as `billing`, waits until it is ACTIVE, and
    /// enables Time to Live when the definition names a TTL attribute.
    pub async fn create_table_with(
        &self,
        definition: TableDefinition,
        billing: Billing,
    ) -> Result<()> {
        definition.validate().map_err(StoreError::Validation)?;
        if !definition.local_secondary_indexes.is_empty() {
            return Err(StoreError::validation(
                "the DynamoDB backend does not create local secondary indexes",
            ));
        }
        let mut attributes: Vec<(String, KeyType)> = Vec::new();
        for a in definition.key_schema.attributes().chain(
            definition
                .global_secondary_indexes
                .iter()
                .flat_map(|i| i.key_schema.attributes()),
        ) {
            if !attributes.iter().any(|(n, _)| *n == a.name) {
                attributes.push((a.name.clone(), a.key_type));
            }
        }
        let mut request = self
            .client
            .create_table()
            .table_name(&definition.name)
            .set_key_schema(Some(key_schema(&definition.key_schema)?))
            .stream_specification(
                sdk::StreamSpecification::builder()
                    .stream_enabled(definition.stream_enabled)
                    .set_stream_view_type(
                        definition
                            .stream_enabled
                            .then_some(sdk::StreamViewType::NewAndOldImages),
                    )
                    .build()
                    .map_err(build_error)?,
            );
        for (name, t) in attributes {
            request = request.attribute_definitions(
                sdk::AttributeDefinition::builder()
                    .attribute_name(name)
                    .attribute_type(key_type(t))
                    .build()
                    .map_err(build_error)?,
            );
        }
        for index in &definition.global_secondary_indexes {
            request = request.global_secondary_indexes(
                sdk::GlobalSecondaryIndex::builder()
                    .index_name(&index.name)
                    .set_key_schema(Some(key_schema(&index.key_schema)?))
                    .projection(projection(&index.projection))
                    .set_provisioned_throughput(match billing {
                        Billing::OnDemand => None,
                        Billing::Provisioned { .. } => Some(throughput(billing)?),
                    })
                    .build()
                    .map_err(build_error)?,
            );
        }
        request = match billing {
            Billing::OnDemand => request.billing_mode(sdk::BillingMode::PayPerRequest),
            Billing::Provisioned { .. } => request
                .billing_mode(sdk::BillingMode::Provisioned)
                .provisioned_throughput(throughput(billing)?),
        };
        request.send().await.map_err(map_error)?;
        self.wait_active(&definition.name).await?;
        if let Some(attribute) = &definition.time_to_live_attribute {
            self.enable_time_to_live(&definition.name, attribute)
                .await?;
        }
        Ok(())
    }

    /// Brings the global secondary indexes of the existing table
    /// `definition` names up to the definition (UpdateTable): a missing
    /// index is created, one whose keys or projection differ is deleted
    /// and created again, one at a time, each waited for until ACTIVE
    /// (backfilled). A new index of a provisioned table gets the table's
    /// units. Returns what it did, one line per index, for the operator.
    pub async fn update_indexes(&self, definition: &TableDefinition) -> Result<Vec<String>> {
        let table = &definition.name;
        let current = Store::describe_table(self, table).await?;
        let billing = self.billing(table).await?;
        let mut done = Vec::new();
        for drift in definition.index_drift(&current.global_secondary_indexes) {
            let index = match drift {
                IndexDrift::Missing(index) => index,
                IndexDrift::Changed(index) => {
                    let delete = sdk::DeleteGlobalSecondaryIndexAction::builder()
                        .index_name(&index.name)
                        .build()
                        .map_err(build_error)?;
                    self.client
                        .update_table()
                        .table_name(table)
                        .global_secondary_index_updates(
                            sdk::GlobalSecondaryIndexUpdate::builder()
                                .delete(delete)
                                .build(),
                        )
                        .send()
                        .await
                        .map_err(map_error)?;
                    self.wait_index(table, &index.name, IndexWait::Gone).await?;
                    done.push(format!("deleted index {} (its layout changed)", index.name));
                    index
                }
            };
            let mut create = sdk::CreateGlobalSecondaryIndexAction::builder()
                .index_name(&index.name)
                .set_key_schema(Some(key_schema(&index.key_schema)?))
                .projection(projection(&index.projection));
            if let Billing::Provisioned { .. } = billing {
                create = create.provisioned_throughput(throughput(billing)?);
            }
            let mut request = self.client.update_table().table_name(table);
            for attribute in index.key_schema.attributes() {
                request = request.attribute_definitions(
                    sdk::AttributeDefinition::builder()
                        .attribute_name(&attribute.name)
                        .attribute_type(key_type(attribute.key_type))
                        .build()
                        .map_err(build_error)?,
                );
            }
            request
                .global_secondary_index_updates(
                    sdk::GlobalSecondaryIndexUpdate::builder()
                        .create(create.build().map_err(build_error)?)
                        .build(),
                )
                .send()
                .await
                .map_err(map_error)?;
            self.wait_index(table, &index.name, IndexWait::Active)
                .await?;
            done.push(format!("created index {}; it is ACTIVE", index.name));
        }
        Ok(done)
    }

    /// DescribeTable's description of `table`.
    pub(crate) async fn description(&self, table: &str) -> Result<sdk::TableDescription> {
        self.client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(map_error)?
            .table
            .ok_or_else(|| StoreError::ResourceNotFound(format!("Table: {table} not found")))
    }

    /// How `table` is billed, as DescribeTable reports it.
    async fn billing(&self, table: &str) -> Result<Billing> {
        let t = self.description(table).await?;
        let on_demand = t.billing_mode_summary().and_then(|b| b.billing_mode())
            == Some(&sdk::BillingMode::PayPerRequest);
        Ok(match t.provisioned_throughput() {
            Some(units) if !on_demand && units.read_capacity_units().unwrap_or(0) > 0 => {
                Billing::Provisioned {
                    read: units.read_capacity_units().unwrap_or(0),
                    write: units.write_capacity_units().unwrap_or(0),
                }
            }
            _ => Billing::OnDemand,
        })
    }

    /// Waits until index `name` of `table` is gone or ACTIVE.
    async fn wait_index(&self, table: &str, name: &str, until: IndexWait) -> Result<()> {
        for _ in 0..1200 {
            let t = self.description(table).await?;
            let index = t
                .global_secondary_indexes()
                .iter()
                .find(|i| i.index_name() == Some(name));
            let table_active = t.table_status() == Some(&sdk::TableStatus::Active);
            let reached = match until {
                IndexWait::Gone => index.is_none() && table_active,
                IndexWait::Active => index.is_some_and(|i| {
                    i.index_status() == Some(&sdk::IndexStatus::Active)
                        && i.backfilling() != Some(true)
                }),
            };
            if reached {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Err(StoreError::Unavailable(format!(
            "index {name} of table {table} did not settle in ten minutes"
        )))
    }

    /// Turns on Time to Live for `table` on `attribute` (UpdateTimeToLive).
    pub async fn enable_time_to_live(&self, table: &str, attribute: &str) -> Result<()> {
        self.client
            .update_time_to_live()
            .table_name(table)
            .time_to_live_specification(
                sdk::TimeToLiveSpecification::builder()
                    .attribute_name(attribute)
                    .enabled(true)
                    .build()
                    .map_err(build_error)?,
            )
            .send()
            .await
            .map_err(map_error)?;
        Ok(())
    }

    /// The TTL attribute of `table` while TTL is enabled (or being enabled).
    async fn time_to_live_attribute(&self, table: &str) -> Result<Option<String>> {
        let out = self
            .client
            .describe_time_to_live()
            .table_name(table)
            .send()
            .await
            .map_err(map_error)?;
        Ok(out.time_to_live_description().and_then(|d| {
            matches!(
                d.time_to_live_status(),
                Some(sdk::TimeToLiveStatus::Enabled | sdk::TimeToLiveStatus::Enabling)
            )
            .then(|| d.attribute_name().map(str::to_owned))
            .flatten()
        }))
    }

    /// Waits until the table is ACTIVE.
    pub async fn wait_active(&self, table: &str) -> Result<()> {
        for _ in 0..600 {
            let description = self.description(table).await?;
            if description.table_status() == Some(&sdk::TableStatus::Active) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {table} did not become ACTIVE in five minutes"
        )))
    }
}

/// What [`DynamoStore::wait_index`] waits for.
#[derive(Debug, Clone, Copy)]
enum IndexWait {
    Gone,
    Active,
}

fn projection(projection: &Projection) -> sdk::Projection {
    match projection {
        Projection::All => sdk::Projection::builder().projection_type(sdk::ProjectionType::All),
        Projection::KeysOnly => {
            sdk::Projection::builder().projection_type(sdk::ProjectionType::KeysOnly)
        }
        Projection::Include(names) => sdk::Projection::builder()
            .projection_type(sdk::ProjectionType::Include)
            .set_non_key_attributes(Some(names.clone())),
    }
    .build()
}

/// How a table created by rave is billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    /// On-demand (PAY_PER_REQUEST).
    OnDemand,
    /// Provisioned read and write units, for the table and each index.
    Provisioned { read: i64, write: i64 },
}

fn throughput(billing: Billing) -> Result<sdk::ProvisionedThroughput> {
    let (read, write) = match billing {
        Billing::Provisioned { read, write } => (read, write),
        Billing::OnDemand => (0, 0),
    };
    sdk::ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .map_err(build_error)
}

fn capacity(consumed: Option<&sdk::ConsumedCapacity>, table: &str) -> ConsumedCapacity {
    let mut out = ConsumedCapacity::new(table);
    if let Some(c) = consumed {
        out.read_units = c.read_capacity_units().unwrap_or(0.0);
        out.write_units = c.write_capacity_units().unwrap_or(0.0);
        // On-demand tables report only the total.
        if out.read_units == 0.0 && out.write_units == 0.0 {
            out.read_units = c.capacity_units().unwrap_or(0.0);
        }
        if let Some(indexes) = c.global_secondary_indexes() {
            for (name, units) in indexes {
                out.index_units
                    .insert(name.clone(), units.capacity_units().unwrap_or(0.0));
            }
        }
    }
    out
}

fn write_capacity(consumed: Option<&sdk::ConsumedCapacity>, table: &str) -> ConsumedCapacity {
    capacity(consumed, table).total_as_writes()
}

fn build_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Validation(e.to_string())
}

fn key_type(t: KeyType) -> sdk::ScalarAttributeType {
    match t {
        KeyType::S => sdk::ScalarAttributeType::S,
        KeyType::N => sdk::ScalarAttributeType::N,
        KeyType::B => sdk::ScalarAttributeType::B,
    }
}

fn key_schema(schema: &KeySchema) -> Result<Vec<sdk::KeySchemaElement>> {
    let element = |attribute: &KeyAttribute, kind: sdk::KeyType| {
        sdk::KeySchemaElement::builder()
            .attribute_name(&attribute.name)
            .key_type(kind)
            .build()
            .map_err(build_error)
    };
    schema
        .partition_attributes()
        .map(|a| element(a, sdk::KeyType::Hash))
        .chain(
            schema
                .sort_attributes()
                .map(|a| element(a, sdk::KeyType::Range)),
        )
        .collect()
}

fn schema_from(
    elements: &[sdk::KeySchemaElement],
    types: &HashMap<String, KeyType>,
) -> Result<KeySchema> {
    let attributes = |kind: sdk::KeyType| {
        elements
            .iter()
            .filter(|e| *e.key_type() == kind)
            .map(|e| {
                let name = e.attribute_name().to_owned();
                let t = types.get(&name).copied().unwrap_or(KeyType::S);
                KeyAttribute::new(name, t)
            })
            .collect()
    };
    KeySchema::of(
        attributes(sdk::KeyType::Hash),
        attributes(sdk::KeyType::Range),
    )
    .ok_or_else(|| StoreError::corrupt("a key schema DynamoDB described", "no partition key"))
}

impl Store for DynamoStore {
    async fn create_table(&self, definition: TableDefinition) -> Result<()> {
        self.create_table_with(definition, Billing::OnDemand).await
    }

    async fn describe_table(&self, table: &str) -> Result<TableDefinition> {
        let t = self.description(table).await?;
        let types: HashMap<String, KeyType> = t
            .attribute_definitions()
            .iter()
            .map(|d| {
                let kind = match d.attribute_type() {
                    sdk::ScalarAttributeType::N => KeyType::N,
                    sdk::ScalarAttributeType::B => KeyType::B,
                    _ => KeyType::S,
                };
                (d.attribute_name().to_owned(), kind)
            })
            .collect();
        let projection_from = |projection: Option<&sdk::Projection>| match projection
            .and_then(|p| p.projection_type())
        {
            Some(sdk::ProjectionType::KeysOnly) => Projection::KeysOnly,
            Some(sdk::ProjectionType::Include) => Projection::Include(
                projection
                    .map(|p| p.non_key_attributes().to_vec())
                    .unwrap_or_default(),
            ),
            _ => Projection::All,
        };
        let mut indexes = Vec::new();
        for index in t.global_secondary_indexes() {
            indexes.push(GlobalSecondaryIndex {
                name: index.index_name().unwrap_or_default().to_owned(),
                key_schema: schema_from(index.key_schema(), &types)?,
                projection: projection_from(index.projection()),
            });
        }
        let mut local_indexes = Vec::new();
        for index in t.local_secondary_indexes() {
            let name = index.index_name().unwrap_or_default().to_owned();
            let sort_key = schema_from(index.key_schema(), &types)?
                .sort
                .ok_or_else(|| {
                    StoreError::Internal(format!("local secondary index {name} without a sort key"))
                })?;
            local_indexes.push(LocalSecondaryIndex {
                name,
                sort_key,
                projection: projection_from(index.projection()),
            });
        }
        Ok(TableDefinition {
            name: table.to_owned(),
            key_schema: schema_from(t.key_schema(), &types)?,
            global_secondary_indexes: indexes,
            stream_enabled: t.stream_specification().is_some_and(|s| s.stream_enabled()),
            time_to_live_attribute: self.time_to_live_attribute(table).await?,
            local_secondary_indexes: local_indexes,
        })
    }

    async fn get_item(&self, input: GetItemInput) -> Result<GetItemOutput> {
        let out = self
            .client
            .get_item()
            .table_name(&input.table)
            .set_key(Some(item_to_sdk(&input.key)))
            .consistent_read(input.consistent_read)
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(GetItemOutput {
            item: out.item().map(item_from_sdk).transpose()?,
            consumed: capacity(out.consumed_capacity(), &input.table),
        })
    }

    async fn put_item(&self, input: PutItemInput) -> Result<WriteOutput> {
        let expressions = input.expressions();
        let values = expressions.values_as(convert::to_sdk);
        let out = self
            .client
            .put_item()
            .table_name(&input.table)
            .set_item(Some(item_to_sdk(&input.item)))
            .set_condition_expression(expressions.condition)
            .set_expression_attribute_names(expressions.names)
            .set_expression_attribute_values(values)
            .return_values(input.return_values.as_str().into())
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(WriteOutput {
            attributes: out.attributes().map(item_from_sdk).transpose()?,
            consumed: write_capacity(out.consumed_capacity(), &input.table),
        })
    }

    async fn update_item(&self, input: UpdateItemInput) -> Result<WriteOutput> {
        let expressions = input.expressions();
        let values = expressions.values_as(convert::to_sdk);
        let out = self
            .client
            .update_item()
            .table_name(&input.table)
            .set_key(Some(item_to_sdk(&input.key)))
            .set_update_expression(expressions.update)
            .set_condition_expression(expressions.condition)
            .set_expression_attribute_names(expressions.names)
            .set_expression_attribute_values(values)
            .return_values(input.return_values.as_str().into())
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(WriteOutput {
            attributes: out.attributes().map(item_from_sdk).transpose()?,
            consumed: write_capacity(out.consumed_capacity(), &input.table),
        })
    }

    async fn delete_item(&self, input: DeleteItemInput) -> Result<WriteOutput> {
        let expressions = input.expressions();
        let values = expressions.values_as(convert::to_sdk);
        let out = self
            .client
            .delete_item()
            .table_name(&input.table)
            .set_key(Some(item_to_sdk(&input.key)))
            .set_condition_expression(expressions.condition)
            .set_expression_attribute_names(expressions.names)
            .set_expression_attribute_values(values)
            .return_values(input.return_values.as_str().into())
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(WriteOutput {
            attributes: out.attributes().map(item_from_sdk).transpose()?,
            consumed: write_capacity(out.consumed_capacity(), &input.table),
        })
    }

    async fn query(&self, input: QueryInput) -> Result<Page> {
        let expressions = input.expressions();
        let values = expressions.values_as(convert::to_sdk);
        let limit = input.limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX));
        let out = self
            .client
            .query()
            .table_name(&input.table)
            .set_index_name(input.index.clone())
            .set_key_condition_expression(expressions.key_condition)
            .set_filter_expression(expressions.filter)
            .set_projection_expression(expressions.projection)
            .set_select(input.select.map(|select| select.as_str().into()))
            .set_expression_attribute_names(expressions.names)
            .set_expression_attribute_values(values)
            .set_limit(limit)
            .scan_index_forward(input.scan_index_forward)
            .set_exclusive_start_key(input.exclusive_start_key.as_ref().map(item_to_sdk))
            .consistent_read(input.consistent_read)
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(Page {
            items: out
                .items()
                .iter()
                .map(item_from_sdk)
                .collect::<Result<_>>()?,
            count: out.count().max(0) as usize,
            scanned_count: out.scanned_count().max(0) as usize,
            last_evaluated_key: out.last_evaluated_key().map(item_from_sdk).transpose()?,
            consumed: capacity(out.consumed_capacity(), &input.table),
        })
    }

    async fn scan(&self, input: ScanInput) -> Result<Page> {
        let expressions = input.expressions();
        let values = expressions.values_as(convert::to_sdk);
        let limit = input.limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX));
        let out = self
            .client
            .scan()
            .table_name(&input.table)
            .set_index_name(input.index.clone())
            .set_filter_expression(expressions.filter)
            .set_projection_expression(expressions.projection)
            .set_select(input.select.map(|select| select.as_str().into()))
            .set_expression_attribute_names(expressions.names)
            .set_expression_attribute_values(values)
            .set_limit(limit)
            .set_segment(input.segment.map(|s| s.segment as i32))
            .set_total_segments(input.segment.map(|s| s.total_segments as i32))
            .set_exclusive_start_key(input.exclusive_start_key.as_ref().map(item_to_sdk))
            .consistent_read(input.consistent_read)
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(map_error)?;
        Ok(Page {
            items: out
                .items()
                .iter()
                .map(item_from_sdk)
                .collect::<Result<_>>()?,
            count: out.count().max(0) as usize,
            scanned_count: out.scanned_count().max(0) as usize,
            last_evaluated_key: out.last_evaluated_key().map(item_from_sdk).transpose()?,
            consumed: capacity(out.consumed_capacity(), &input.table),
        })
    }

    /// Unprocessed keys are asked for again with [`Retry`]'s backoff, as
    /// DynamoDB advises; what is still unprocessed after the last attempt
    /// is returned as such.
    async fn batch_get_item(&self, input: BatchGetItemInput) -> Result<BatchGetItemOutput> {
        let batch = Retry::default()
            .run_batch(input.requests, |pending| async move {
                let out = self.batch_get_once(&pending).await?;
                Ok(((out.responses, out.consumed), out.unprocessed))
            })
            .await?;
        let mut responses: Vec<(String, Vec<rave_store::Item>)> = Vec::new();
        let mut consumed = Vec::new();
        for (round_responses, round_consumed) in batch.outputs {
            for (table, items) in round_responses {
                match responses.iter_mut().find(|(t, _)| *t == table) {
                    Some((_, found)) => found.extend(items),
                    None => responses.push((table, items)),
                }
            }
            for units in round_consumed {
                add_by_table(&mut consumed, units);
            }
        }
        Ok(BatchGetItemOutput {
            responses,
            unprocessed: batch.unprocessed,
            consumed,
        })
    }

    /// Unprocessed writes are sent again with [`Retry`]'s backoff, as
    /// DynamoDB advises; what is still unprocessed after the last attempt
    /// is returned as such.
    async fn batch_write_item(&self, input: BatchWriteItemInput) -> Result<BatchWriteItemOutput> {
        let batch = Retry::default()
            .run_batch(input.requests, |pending| async move {
                let out = self.batch_write_once(&pending).await?;
                Ok((out.consumed, out.unprocessed))
            })
            .await?;
        let mut consumed = Vec::new();
        for units in batch.outputs.into_iter().flatten() {
            add_by_table(&mut consumed, units);
        }
        Ok(BatchWriteItemOutput {
            unprocessed: batch.unprocessed,
            consumed,
        })
    }

    async fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> Result<TransactWriteItemsOutput> {
        let mut items = Vec::with_capacity(input.actions.len());
        for action in &input.actions {
            items.push(transact_item(action)?);
        }
        let out = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Indexes)
            .send()
            .await
            .map_err(transaction_error)?;
        Ok(TransactWriteItemsOutput {
            consumed: out
                .consumed_capacity()
                .iter()
                .map(|c| write_capacity(Some(c), c.table_name().unwrap_or_default()))
                .collect(),
        })
    }
}

/// One action of a transaction, as the SDK wants it.
fn transact_item(action: &TransactWriteAction) -> Result<sdk::TransactWriteItem> {
    let expressions = action.expressions();
    let values = expressions.values_as(convert::to_sdk);
    let names = expressions.names;
    let item = match action {
        TransactWriteAction::Put { table, item, .. } => sdk::TransactWriteItem::builder().put(
            sdk::Put::builder()
                .table_name(table)
                .set_item(Some(item_to_sdk(item)))
                .set_condition_expression(expressions.condition)
                .set_expression_attribute_names(names)
                .set_expression_attribute_values(values)
                .build()
                .map_err(build_error)?,
        ),
        TransactWriteAction::Update { table, key, .. } => sdk::TransactWriteItem::builder().update(
            sdk::Update::builder()
                .table_name(table)
                .set_key(Some(item_to_sdk(key)))
                .set_update_expression(expressions.update)
                .set_condition_expression(expressions.condition)
                .set_expression_attribute_names(names)
                .set_expression_attribute_values(values)
                .build()
                .map_err(build_error)?,
        ),
        TransactWriteAction::Delete { table, key, .. } => sdk::TransactWriteItem::builder().delete(
            sdk::Delete::builder()
                .table_name(table)
                .set_key(Some(item_to_sdk(key)))
                .set_condition_expression(expressions.condition)
                .set_expression_attribute_names(names)
                .set_expression_attribute_values(values)
                .build()
                .map_err(build_error)?,
        ),
        TransactWriteAction::ConditionCheck { table, key, .. } => sdk::TransactWriteItem::builder()
            .condition_check(
                sdk::ConditionCheck::builder()
                    .table_name(table)
                    .set_key(Some(item_to_sdk(key)))
                    .set_condition_expression(expressions.condition)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .build()
                    .map_err(build_error)?,
            ),
    };
    Ok(item.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_values_are_corrupt() {
        let number = convert::from_sdk(&sdk::AttributeValue::N("twelve".into()));
        assert!(
            matches!(number, Err(StoreError::Corrupt { .. })),
            "{number:?}"
        );
    }
}

//! TransactWriteItems: up to 100 puts, updates, deletes and condition
//! checks that commit together or not at all; TransactGetItems: up to 100
//! reads from one snapshot.
//!
//! TransactGetItems is the engine's BatchGetItem, which reads every key
//! from one read snapshot, so the reads see one commit; its units are
//! doubled as for transactional reads. Capacity is reported as read or
//! write units, and a token's replay as a transactional read. In a
//! transaction a key of the wrong type, or a looked-up key that is not the
//! table's, cancels it with a ValidationError reason for that action, while
//! an empty key value is refused outright. A Put's attribute names are read
//! before its values and the actions in order, so an empty name is "Empty
//! attribute name" ahead of the item's depth, later actions and the table's
//! lookup (`transacted_item_from_json`). With
//! `ReturnValuesOnConditionCheckFailure` = ALL_OLD, a cancellation reason
//! carries the item its condition was checked against, read in the same
//! engine transaction.

use rave_store::{
    BatchGetItemInput, CancellationReason, ConsumedCapacity, GetItemInput, Item, KeyAttribute,
    KeySchema, ReturnValuesOnConditionCheckFailure, Store, StoreError, TableDefinition, TableKeys,
    TransactWriteAction, TransactWriteItemsInput, project,
};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::collections;
use crate::error::ApiError;
use crate::expressions::{Placeholders, read_expressions};
use crate::idempotency::{Claim, fingerprint};
use crate::request::{
    CapacityDetail, Members, TransactionUnits, length_violation, lower_first, missing,
    validation_errors,
};
use crate::wire::item_to_json;
use crate::writes::{ITEM_TOO_LARGE, UPDATE_TOO_LARGE, check_index_key_update};

/// Most actions one transaction holds.
const MAX_TRANSACT_ITEMS: usize = 100;

/// The action members of a `TransactWriteItem`, exactly one of which is set.
const ACTIONS: [&str; 4] = ["ConditionCheck", "Put", "Delete", "Update"];

pub(crate) async fn transact_write_items(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    // The request's own members' constraints are reported together, the
    // token first.
    let token = body.string("ClientRequestToken")?;
    // ClientRequestToken: "Length Constraints: Minimum length of 1. Maximum length of 36."
    let violations: Vec<String> = token
        .and_then(|token| length_violation(token, "clientRequestToken", 1, 36))
        .into_iter()
        .chain(body.batch_write_enum_violations())
        .collect();
    if !violations.is_empty() {
        return Err(validation_errors(&violations));
    }
    let detail = body.capacity_detail()?;
    let metrics = collections::asked(body)?;
    let listed = body
        .list("TransactItems")?
        .ok_or_else(|| missing("TransactItems"))?;
    check_action_count(listed)?;
    let (actions, on_failure): (Vec<_>, Vec<_>) = listed
        .iter()
        .enumerate()
        .map(|(position, item)| action(item, position))
        .collect::<Result<Vec<_>, ApiError>>()?
        .into_iter()
        .unzip();
    check_key_types(api, &actions).await?;
    let running = match token {
        Some(token) => match api.client_tokens.claim(token, fingerprint(&listed))? {
            Claim::Run(running) => Some(running),
            Claim::Replay => return replay(api, &actions, detail).await,
        },
        None => None,
    };
    let updates: Vec<bool> = actions
        .iter()
        .map(|action| matches!(action, TransactWriteAction::Update { .. }))
        .collect();
    let written = api
        .engine
        .transact_write_items_with(TransactWriteItemsInput { actions }, on_failure)
        .await
        .map_err(|mut failure| {
            if let StoreError::TransactionCanceled(reasons) = &mut failure.error {
                for (reason, update) in reasons.iter_mut().zip(&updates) {
                    if let CancellationReason::ValidationError(message) = reason {
                        reword_reason(message, *update);
                    }
                }
            }
            failure
        })?;
    if let Some(running) = running {
        running.succeeded();
    }
    let mut response = json!({});
    if let Some(consumed) =
        detail.render_transaction(&written.output.consumed, TransactionUnits::Write)
    {
        response["ConsumedCapacity"] = consumed;
    }
    if let Some(metrics) = collections::per_table(metrics, &written.item_collections) {
        response["ItemCollectionMetrics"] = metrics;
    }
    Ok(response)
}

/// A ValidationError reason as DynamoDB words it: an Update's item that
/// grew too large names the item to update.
fn reword_reason(message: &mut String, update: bool) {
    if update && message == ITEM_TOO_LARGE {
        *message = UPDATE_TOO_LARGE.to_owned();
    }
}

/// The answer to a transaction repeated with the token of one that
/// succeeded: nothing is written again, but its items are read
/// transactionally, and that read is what `ConsumedCapacity` reports
/// (DynamoDB's rule).
async fn replay(
    api: &DynamoApi,
    actions: &[TransactWriteAction],
    detail: CapacityDetail,
) -> Result<Value, ApiError> {
    if detail == CapacityDetail::None {
        return Ok(json!({}));
    }
    let mut definitions = Definitions::default();
    let mut consumed = Vec::with_capacity(actions.len());
    for action in actions {
        let key = match action {
            TransactWriteAction::Put { table, item, .. } => {
                definitions.of(api, table).await?.key_schema.key_of(item)
            }
            TransactWriteAction::Update { key, .. }
            | TransactWriteAction::Delete { key, .. }
            | TransactWriteAction::ConditionCheck { key, .. } => key.clone(),
        };
        let read = api
            .engine
            .get_item(GetItemInput {
                table: action.table().to_owned(),
                key,
                consistent_read: true,
            })
            .await?;
        let mut read = read.consumed;
        charge_as_transactional_read(&mut read);
        consumed.push(read);
    }
    let mut response = json!({});
    if let Some(rendered) = detail.render_transaction(&consumed, TransactionUnits::Read) {
        response["ConsumedCapacity"] = rendered;
    }
    Ok(response)
}

/// A key of the wrong type cancels the transaction, each such action
/// with a ValidationError reason and every other with None, where
/// PutItem, UpdateItem and DeleteItem refuse the request outright. A Put
/// names the key and both types (an index's key, the first index by name
/// whose key it is); the other actions' keys must be the key schema's
/// attributes, of its types.
async fn check_key_types(api: &DynamoApi, actions: &[TransactWriteAction]) -> Result<(), ApiError> {
    let mut definitions = Definitions::default();
    let mut reasons = Vec::with_capacity(actions.len());
    for action in actions {
        let definition = definitions.of(api, action.table()).await?;
        let mismatch = match action {
            TransactWriteAction::Put { item, .. } => put_key_mismatch(definition, item),
            TransactWriteAction::Update { key, update, .. } => {
                check_index_key_update(definition, update)?;
                (!key_fits(definition, key)).then(|| KEY_MISMATCH.to_owned())
            }
            TransactWriteAction::Delete { key, .. }
            | TransactWriteAction::ConditionCheck { key, .. } => {
                (!key_fits(definition, key)).then(|| KEY_MISMATCH.to_owned())
            }
        };
        reasons.push(mismatch.map_or(
            CancellationReason::None,
            CancellationReason::ValidationError,
        ));
    }
    cancel_if_any(reasons)
}

const KEY_MISMATCH: &str = "The provided key element does not match the schema";

/// The definitions of the tables one request names, each read once.
#[derive(Default)]
struct Definitions(Vec<TableDefinition>);

impl Definitions {
    async fn of(&mut self, api: &DynamoApi, table: &str) -> Result<&TableDefinition, ApiError> {
        let position = match self.0.iter().position(|d| d.name == table) {
            Some(position) => position,
            None => {
                self.0.push(api.engine.describe_table(table).await?);
                self.0.len() - 1
            }
        };
        Ok(&self.0[position])
    }
}

/// Whether `key` is exactly the table's key: its attributes, of their types.
fn key_fits(definition: &TableDefinition, key: &Item) -> bool {
    key.len() == definition.key_schema.attributes().count()
        && definition.key_schema.attributes().all(|attr| {
            key.get(&attr.name)
                .is_some_and(|v| attr.key_type.matches(v))
        })
}

/// The transaction cancelled when any action has a reason to be.
fn cancel_if_any(reasons: Vec<CancellationReason>) -> Result<(), ApiError> {
    if reasons
        .iter()
        .all(|reason| *reason == CancellationReason::None)
    {
        return Ok(());
    }
    Err(ApiError::from(rave_store::StoreError::TransactionCanceled(
        reasons,
    )))
}

/// What is wrong with the type of a key attribute of a Put's item, if anything.
fn put_key_mismatch(definition: &TableDefinition, item: &Item) -> Option<String> {
    // The attribute's name, the type it must have and the one it has.
    let mismatch = |attr: &KeyAttribute| {
        item.get(&attr.name)
            .filter(|value| !attr.key_type.matches(value))
            .map(|value| {
                (
                    attr.name.clone(),
                    attr.key_type.attribute_type().as_str(),
                    value.attribute_type().as_str(),
                )
            })
    };
    if let Some((name, expected, actual)) = definition.key_schema.attributes().find_map(mismatch) {
        return Some(format!(
            "One or more parameter values were invalid: Type mismatch for key {name} expected: {expected} actual: {actual}"
        ));
    }
    let partition = &definition.key_schema.partition;
    let mut indexes: Vec<(&str, KeySchema)> = definition
        .global_secondary_indexes
        .iter()
        .map(|index| (index.name.as_str(), index.key_schema.clone()))
        .chain(
            definition
                .local_secondary_indexes
                .iter()
                .map(|index| (index.name.as_str(), index.key_schema(partition))),
        )
        .collect();
    indexes.sort_by(|a, b| a.0.cmp(b.0));
    indexes.iter().find_map(|(index, schema)| {
        schema.attributes().find_map(mismatch).map(|(name, expected, actual)| {
            format!(
                "One or more parameter values were invalid: Type mismatch for Index Key {name} Expected: {expected} Actual: {actual} IndexName: {index}"
            )
        })
    })
}

/// DynamoDB's length constraint on `TransactItems`, in its words: the
/// list echoed (an empty one, or the whole request's when it is too long).
fn check_action_count(listed: &[Value]) -> Result<(), ApiError> {
    if listed.is_empty() {
        return Err(ApiError::validation(
            "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
        ));
    }
    if listed.len() > MAX_TRANSACT_ITEMS {
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '{}' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to {MAX_TRANSACT_ITEMS}",
            Value::Array(listed.to_vec())
        )));
    }
    Ok(())
}

/// One action and what it hands back if its condition fails.
/// One action (the `position`th, from 0) and what it hands back if its
/// condition fails. DynamoDB places a missing or bad member by its path,
/// `transactItems.1.member.put.item`.
fn action(
    item: &Value,
    position: usize,
) -> Result<(TransactWriteAction, ReturnValuesOnConditionCheckFailure), ApiError> {
    let Value::Object(item) = item else {
        return Err(ApiError::serialization("TransactItems must be structures"));
    };
    let item = Members(item);
    let mut present = ACTIONS
        .iter()
        .filter_map(|name| item.object(name).transpose().map(|m| (*name, m)));
    let (name, members) = match (present.next(), present.next()) {
        (Some((name, members)), None) => (name, members?),
        // DynamoDB's validation framework is replacing this sentence with a
        // constraint on `transactItems` region by region; most still give it.
        (None, _) => {
            return Err(ApiError::validation(
                "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::validation(
                "TransactItems can only contain one of Check, Put, Update or Delete",
            ));
        }
    };
    let at = format!(
        "transactItems.{}.member.{}",
        position + 1,
        lower_first(name)
    );
    let required = |member: &str| missing(&format!("{at}.{member}"));
    let on_failure = match members.choice_at(
        "ReturnValuesOnConditionCheckFailure",
        &format!("{at}.returnValuesOnConditionCheckFailure"),
        &["ALL_OLD", "NONE"],
    )? {
        Some("ALL_OLD") => ReturnValuesOnConditionCheckFailure::AllOld,
        _ => ReturnValuesOnConditionCheckFailure::None,
    };
    let table = members
        .table_name_at(&format!("{at}.tableName"))?
        .to_owned();
    let placeholders = Placeholders::read(members)?;
    let mut parser = placeholders.parser()?;
    let condition = members
        .string("ConditionExpression")?
        .map(|text| parser.condition(text))
        .transpose()?;
    let action = match name {
        "Put" => TransactWriteAction::Put {
            table,
            item: members
                .transacted_item("Item")?
                .ok_or_else(|| required("Item"))?,
            condition,
        },
        "Delete" => TransactWriteAction::Delete {
            table,
            key: members.item("Key")?.ok_or_else(|| required("Key"))?,
            condition,
        },
        "Update" => {
            let text = members
                .string("UpdateExpression")?
                .ok_or_else(|| required("UpdateExpression"))?;
            TransactWriteAction::Update {
                table,
                key: members.item("Key")?.ok_or_else(|| required("Key"))?,
                update: parser.update(text)?,
                condition,
            }
        }
        _ => TransactWriteAction::ConditionCheck {
            table,
            key: members.item("Key")?.ok_or_else(|| required("Key"))?,
            condition: condition.ok_or_else(|| required("ConditionExpression"))?,
        },
    };
    parser.finish()?;
    Ok((action, on_failure))
}

/// The engine's BatchGetItem reads every key from one read snapshot, which
/// is what makes these reads a transaction: they all see the same commit.
pub(crate) async fn transact_get_items(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let detail = body.capacity_detail()?;
    let listed = body
        .list("TransactItems")?
        .ok_or_else(|| missing("TransactItems"))?;
    check_action_count(listed)?;
    let mut requests: Vec<TableKeys> = Vec::with_capacity(listed.len());
    let mut projections = Vec::with_capacity(listed.len());
    for (position, entry) in listed.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(ApiError::serialization("TransactItems must be structures"));
        };
        let at = format!("transactItems.{}.member.get", position + 1);
        let get = Members(entry).object("Get")?.ok_or_else(|| missing(&at))?;
        let table = get.table_name_at(&format!("{at}.tableName"))?.to_owned();
        let key = get
            .item("Key")?
            .ok_or_else(|| missing(&format!("{at}.key")))?;
        if requests
            .iter()
            .any(|r| r.table == table && r.keys == [key.clone()])
        {
            return Err(ApiError::validation(
                "Transaction request cannot include multiple operations on one item",
            ));
        }
        projections.push(read_expressions(get, None)?.projection);
        requests.push(TableKeys {
            table,
            keys: vec![key],
            consistent_read: true,
        });
    }
    let mut definitions = Definitions::default();
    let mut reasons = Vec::with_capacity(requests.len());
    for request in &requests {
        let definition = definitions.of(api, &request.table).await?;
        let fits = request.keys.iter().all(|key| key_fits(definition, key));
        reasons.push(match fits {
            true => CancellationReason::None,
            false => CancellationReason::ValidationError(KEY_MISMATCH.to_owned()),
        });
    }
    cancel_if_any(reasons)?;
    let output = api
        .engine
        .batch_get_item(BatchGetItemInput {
            requests: requests.clone(),
        })
        .await?;
    if !output.unprocessed.is_empty() {
        return Err(ApiError::validation(
            "Transaction request size exceeds the limit of what one request may read",
        ));
    }
    let responses: Vec<Value> = requests
        .iter()
        .zip(&projections)
        .map(|(request, projection)| {
            let found = output
                .responses
                .iter()
                .filter(|(table, _)| *table == request.table)
                .flat_map(|(_, items)| items)
                .find(|item| request.keys.iter().any(|key| holds_key(item, key)));
            match (found, projection) {
                // Unlike GetItem's empty `Item`, a transactional read whose
                // projection matches nothing on the item leaves `Item` out.
                (Some(item), Some(paths)) => {
                    let projected = project(item, paths);
                    match projected.is_empty() {
                        true => json!({}),
                        false => json!({"Item": item_to_json(&projected)}),
                    }
                }
                (Some(item), None) => json!({"Item": item_to_json(item)}),
                (None, _) => json!({}),
            }
        })
        .collect();
    let mut consumed = output.consumed;
    consumed.iter_mut().for_each(charge_as_transactional_read);
    let mut response = json!({ "Responses": responses });
    if let Some(rendered) = detail.render_transaction(&consumed, TransactionUnits::Read) {
        response["ConsumedCapacity"] = rendered;
    }
    Ok(response)
}

/// A transactional read costs twice a strongly consistent one.
fn charge_as_transactional_read(consumed: &mut ConsumedCapacity) {
    consumed.read_units *= 2.0;
    consumed
        .index_units
        .values_mut()
        .for_each(|units| *units *= 2.0);
}

fn holds_key(item: &Item, key: &Item) -> bool {
    key.iter()
        .all(|(name, value)| item.get(name) == Some(value))
}

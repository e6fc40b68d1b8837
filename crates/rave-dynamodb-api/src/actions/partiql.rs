//! ExecuteStatement, BatchExecuteStatement and ExecuteTransaction: PartiQL
//! statements run as the operations `crate::partiql` translates them into,
//! through those operations' own functions, so each answers, charges and
//! records its change as the equivalent call does.
//!
//! * ExecuteStatement: a SELECT pages with `Limit` and `NextToken` (the
//!   Query's or Scan's `LastEvaluatedKey`, opaque: base64 JSON); a write
//!   answers `Items`, the item `RETURNING` asks for.
//! * BatchExecuteStatement: 1 to 25 statements, all reads (each naming one
//!   item, read as GetItem) or all writes, no item twice; each answers for
//!   itself, an `Error` with the code of its exception, and the capacity is
//!   summed per table.
//! * ExecuteTransaction: 1 to 100 statements, all reads (TransactGetItems)
//!   or all writes (TransactWriteItems, whose token and cancellation reasons
//!   it keeps; an INSERT whose key is taken is that action's ValidationError
//!   "Duplicate primary key exists in table").

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use rave_store::{
    CancellationReason, ReturnValues, Statement, StatementKind, Store, TableDefinition, project,
};
use serde_json::{Map, Value, json};

use crate::actions::{items, query_scan, transact};
use crate::api::DynamoApi;
use crate::error::{ApiError, ErrorKind};
use crate::partiql::{self, DUPLICATE_ITEM, Write};
use crate::request::{Members, missing, validation_errors};
use crate::wire::{Answer, item_from_json, item_to_json};

/// Most statements a BatchExecuteStatement holds.
const MAX_BATCH_STATEMENTS: usize = 25;
/// Most statements an ExecuteTransaction holds.
const MAX_TRANSACTION_STATEMENTS: usize = 100;

const MIXED_BATCH: &str = "Read and write requests together in the same batch is not supported.";
const MIXED_TRANSACTION: &str =
    "ExecuteTransaction API does not support both read and write operations in the same request.";
const DUPLICATE_KEYS: &str = "Provided list of item keys contains duplicates";
const BATCH_READ_KEY: &str = "Select statements within BatchExecuteStatement must specify the primary key in the where clause.";

pub(crate) async fn execute_statement(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let limit = body.integer("Limit")?;
    if let Some(limit) = limit.filter(|limit| *limit < 1) {
        return Err(validation_errors(&[format!(
            "Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
        )]));
    }
    let statement = partiql::statement(body)?;
    let definition = api.engine.describe_table(&statement.table).await?;
    let passed_on = |request: &mut Map<String, Value>, members: &[&str]| {
        for member in members {
            if let Some(value) = body.0.get(*member).filter(|v| !v.is_null()) {
                request.insert((*member).to_owned(), value.clone());
            }
        }
    };
    if let StatementKind::Select { index, .. } = &statement.kind {
        let (is_query, mut request) = partiql::select_request(&statement, &definition)?;
        let global = index.as_deref().and_then(|index| definition.index(index));
        if global.is_some() && body.bool("ConsistentRead")? {
            return Err(ApiError::validation(
                "Strongly consistent read is not supported on Global Secondary Indexes",
            ));
        }
        passed_on(
            &mut request,
            &["Limit", "ConsistentRead", "ReturnConsumedCapacity"],
        );
        if let Some(token) = body.string("NextToken")? {
            request.insert("ExclusiveStartKey".into(), start_key(token)?);
        }
        let request = Value::Object(request);
        let page = match is_query {
            true => query_scan::query(api, Members::of(&request)?).await?,
            false => query_scan::scan(api, Members::of(&request)?).await?,
        }
        .into_value()?;
        let items = page.get("Items").cloned().unwrap_or(json!([]));
        let mut response = json!({"Items": selected(items, partiql::projection(&statement))?});
        if let Some(key) = page.get("LastEvaluatedKey") {
            response["NextToken"] = json!(BASE64.encode(key.to_string()));
        }
        if let Some(consumed) = page.get("ConsumedCapacity") {
            response["ConsumedCapacity"] = consumed.clone();
        }
        return Ok(response);
    }
    let write = Write::of(&statement, &definition)?;
    let (operation, mut request) = write.request();
    passed_on(
        &mut request,
        &[
            "ReturnConsumedCapacity",
            "ReturnValuesOnConditionCheckFailure",
        ],
    );
    let answer = run_write(api, &write, operation, Value::Object(request)).await?;
    let mut response =
        json!({"Items": answer.get("Attributes").into_iter().cloned().collect::<Vec<_>>()});
    if let Some(consumed) = answer.get("ConsumedCapacity") {
        response["ConsumedCapacity"] = consumed.clone();
    }
    Ok(response)
}

/// Items (JSON) a read projected with `paths` as the SELECT listing them
/// returns them (`partiql::selected`).
fn selected(items: Value, paths: Option<&[rave_store::Path]>) -> Result<Value, ApiError> {
    match (paths, items) {
        (Some(paths), Value::Array(items)) => items
            .iter()
            .map(|item| selected_item(item, paths))
            .collect(),
        (_, items) => Ok(items),
    }
}

fn selected_item(item: &Value, paths: &[rave_store::Path]) -> Result<Value, ApiError> {
    Ok(item_to_json(&partiql::selected(
        &item_from_json(item)?,
        paths,
    )))
}

/// A write's operation, an INSERT's failed condition being a taken key.
async fn run_write(
    api: &DynamoApi,
    write: &Write,
    operation: &str,
    request: Value,
) -> Result<Value, ApiError> {
    let members = Members::of(&request)?;
    let answer = match operation {
        "PutItem" => items::put_item(api, members).await,
        "UpdateItem" => items::update_item(api, members).await,
        _ => items::delete_item(api, members).await,
    };
    answer.map_err(|error| match error.kind {
        ErrorKind::ConditionalCheckFailed if write.is_insert() => {
            ApiError::new(ErrorKind::DuplicateItem, DUPLICATE_ITEM)
        }
        _ => error,
    })
}

/// The `ExclusiveStartKey` a `NextToken` stands for.
fn start_key(token: &str) -> Result<Value, ApiError> {
    let invalid = || ApiError::validation("Invalid NextToken");
    let json = BASE64.decode(token).map_err(|_| invalid())?;
    let key: Value = serde_json::from_slice(&json).map_err(|_| invalid())?;
    match key {
        Value::Object(_) => Ok(key),
        _ => Err(invalid()),
    }
}

/// A list member's length constraint, in the validation framework's words.
fn check_count(listed: &[Value], member: &str, max: usize) -> Result<(), ApiError> {
    let bound = match listed.len() {
        0 => "greater than or equal to 1".to_owned(),
        n if n > max => format!("less than or equal to {max}"),
        _ => return Ok(()),
    };
    Err(validation_errors(&[format!(
        "Value '{}' at '{member}' failed to satisfy constraint: Member must have length {bound}",
        Value::Array(listed.to_vec())
    )]))
}

/// Each table's definition, looked up once per request.
#[derive(Default)]
struct Definitions(Vec<TableDefinition>);

impl Definitions {
    async fn of(&mut self, api: &DynamoApi, table: &str) -> Result<&TableDefinition, ApiError> {
        if let Some(at) = self.0.iter().position(|d| d.name == table) {
            return Ok(&self.0[at]);
        }
        let definition = api.engine.describe_table(table).await?;
        self.0.push(definition);
        Ok(&self.0[self.0.len() - 1])
    }
}

/// One statement's error, as a batch answers it.
fn statement_error(error: &ApiError) -> Value {
    let message = match error.kind {
        // DynamoDB names the missing table in the control plane's answers only.
        ErrorKind::ResourceNotFound => "Requested resource not found".to_owned(),
        _ => error.message.clone().unwrap_or_default(),
    };
    let mut answer = json!({"Code": error.kind.statement_code(), "Message": message});
    if let Some(item) = error.envelope().get("Item") {
        answer["Item"] = item.clone();
    }
    answer
}

/// One batch entry, translated: a read or a write on a table that exists,
/// or why not.
enum Entry {
    Read {
        statement: Statement,
        request: Map<String, Value>,
        rest: Option<rave_store::Condition>,
    },
    Write(Write),
    Refused(ApiError),
}

pub(crate) async fn batch_execute_statement(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let detail = body.capacity_detail()?;
    let listed = body
        .list("Statements")?
        .ok_or_else(|| missing("Statements"))?;
    check_count(listed, "statements", MAX_BATCH_STATEMENTS)?;
    let mut parsed = Vec::with_capacity(listed.len());
    for entry in listed {
        let Value::Object(entry) = entry else {
            return Err(ApiError::serialization("Statements must be structures"));
        };
        parsed.push((Members(entry), partiql::statement(Members(entry))));
    }
    let reads = parsed
        .iter()
        .filter(|(_, s)| matches!(s, Ok(s) if matches!(s.kind, StatementKind::Select { .. })))
        .count();
    let writes = parsed.iter().filter(|(_, s)| s.is_ok()).count() - reads;
    if reads > 0 && writes > 0 {
        return Err(ApiError::validation(MIXED_BATCH));
    }
    let mut definitions = Definitions::default();
    let mut entries = Vec::with_capacity(parsed.len());
    let mut keys = Vec::new();
    for (members, statement) in parsed {
        let statement = match statement {
            Ok(statement) => statement,
            Err(error) => {
                entries.push(Entry::Refused(error));
                continue;
            }
        };
        let definition = match definitions.of(api, &statement.table).await {
            Ok(definition) => definition,
            Err(error) => {
                entries.push(Entry::Refused(error));
                continue;
            }
        };
        if let StatementKind::Select { index, .. } = &statement.kind {
            // An index's own refusals (a multi-attribute key) come first.
            if let Err(error) = partiql::read_schema(definition, index.as_deref()) {
                entries.push(Entry::Refused(error));
                continue;
            }
            let Some((mut request, rest)) = partiql::item_read(&statement, definition) else {
                entries.push(Entry::Refused(ApiError::validation(BATCH_READ_KEY)));
                continue;
            };
            keys.push((statement.table.clone(), request["Key"].clone()));
            if let Some(consistent) = members.0.get("ConsistentRead") {
                request.insert("ConsistentRead".into(), consistent.clone());
            }
            entries.push(Entry::Read {
                statement,
                request,
                rest,
            });
            continue;
        }
        match Write::of(&statement, definition) {
            Ok(write) => {
                let key = item_to_json(&write.key(&definition.key_schema));
                keys.push((statement.table.clone(), key));
                entries.push(Entry::Write(write));
            }
            Err(error) => entries.push(Entry::Refused(error)),
        }
    }
    if keys
        .iter()
        .enumerate()
        .any(|(at, key)| keys[..at].contains(key))
    {
        return Err(ApiError::validation(DUPLICATE_KEYS));
    }
    let capacity = body.0.get("ReturnConsumedCapacity").cloned();
    let mut responses = Vec::with_capacity(entries.len());
    let mut consumed = Vec::new();
    for entry in entries {
        let (table, answer) = match entry {
            Entry::Refused(error) => {
                responses.push(json!({"Error": statement_error(&error)}));
                continue;
            }
            Entry::Read {
                statement,
                mut request,
                rest,
            } => {
                if let Some(capacity) = &capacity {
                    request.insert("ReturnConsumedCapacity".into(), capacity.clone());
                }
                let request = Value::Object(request);
                let answer = items::get_item(api, Members::of(&request)?)
                    .await
                    .and_then(Answer::into_value)
                    .and_then(|mut answer| {
                        held_to(&mut answer, rest.as_ref(), partiql::projection(&statement))?;
                        Ok(answer)
                    });
                (statement.table, answer)
            }
            Entry::Write(write) => {
                // A batch's statements honour RETURNING (as `Item`), never
                // ReturnValuesOnConditionCheckFailure.
                let (operation, mut request) = write.request();
                if let Some(capacity) = &capacity {
                    request.insert("ReturnConsumedCapacity".into(), capacity.clone());
                }
                let answer = run_write(api, &write, operation, Value::Object(request)).await;
                (write.table().to_owned(), answer)
            }
        };
        match answer {
            Ok(mut answer) => {
                consumed.extend(answer.get("ConsumedCapacity").cloned());
                let mut response = json!({"TableName": table});
                let member = match answer.get("Item") {
                    Some(_) => "Item",
                    None => "Attributes",
                };
                let returned = answer
                    .get_mut(member)
                    .map(Value::take)
                    .filter(|item| item.as_object().is_some_and(|item| !item.is_empty()));
                if let Some(item) = returned {
                    response["Item"] = item;
                }
                responses.push(response);
            }
            Err(error) => {
                responses.push(json!({"Error": statement_error(&error), "TableName": table}));
            }
        }
    }
    let mut response = json!({"Responses": responses});
    if detail != crate::request::CapacityDetail::None {
        response["ConsumedCapacity"] = Value::Array(summed_per_table(consumed));
    }
    Ok(response)
}

/// A batch read's item held to the rest of its WHERE, then projected.
fn held_to(
    answer: &mut Value,
    rest: Option<&rave_store::Condition>,
    projection: Option<&[rave_store::Path]>,
) -> Result<(), ApiError> {
    let Some(found) = answer.get("Item") else {
        return Ok(());
    };
    let item = item_from_json(found)?;
    if rest.is_some_and(|rest| !rest.evaluate(&item)) {
        if let Value::Object(answer) = answer {
            answer.remove("Item");
        }
        return Ok(());
    }
    if let Some(paths) = projection {
        answer["Item"] = item_to_json(&partiql::selected(&project(&item, paths), paths));
    }
    Ok(())
}

/// Consumed capacity answers summed per table, member by member.
fn summed_per_table(consumed: Vec<Value>) -> Vec<Value> {
    fn add(into: &mut Value, from: &Value) {
        match (into, from) {
            (Value::Object(into), Value::Object(from)) => {
                for (name, value) in from {
                    match into.get_mut(name) {
                        Some(existing) => add(existing, value),
                        None => {
                            into.insert(name.clone(), value.clone());
                        }
                    }
                }
            }
            (Value::Number(into), Value::Number(from)) => {
                let sum = into.as_f64().unwrap_or(0.0) + from.as_f64().unwrap_or(0.0);
                if let Some(sum) = serde_json::Number::from_f64(sum) {
                    *into = sum;
                }
            }
            _ => {}
        }
    }
    let mut tables: Vec<Value> = Vec::new();
    for answer in consumed {
        match tables
            .iter_mut()
            .find(|table| table.get("TableName") == answer.get("TableName"))
        {
            Some(table) => add(table, &answer),
            None => tables.push(answer),
        }
    }
    tables
}

pub(crate) async fn execute_transaction(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let listed = body
        .list("TransactStatements")?
        .ok_or_else(|| missing("TransactStatements"))?;
    check_count(listed, "transactStatements", MAX_TRANSACTION_STATEMENTS)?;
    let mut statements = Vec::with_capacity(listed.len());
    for entry in listed {
        let Value::Object(entry) = entry else {
            return Err(ApiError::serialization(
                "TransactStatements must be structures",
            ));
        };
        statements.push((Members(entry), partiql::statement(Members(entry))?));
    }
    let reads = statements
        .iter()
        .filter(|(_, s)| matches!(s.kind, StatementKind::Select { .. }))
        .count();
    if reads > 0 && reads < statements.len() {
        return Err(ApiError::validation(MIXED_TRANSACTION));
    }
    let mut request = Map::new();
    for member in ["ReturnConsumedCapacity", "ClientRequestToken"] {
        if let Some(value) = body.0.get(member).filter(|v| !v.is_null()) {
            request.insert(member.to_owned(), value.clone());
        }
    }
    let refused = |position: usize, why: &str| {
        ApiError::validation(format!(
            "Validation failed in TransactStatements[{position}]: {why}"
        ))
    };
    for (position, (_, statement)) in statements.iter().enumerate() {
        match &statement.kind {
            StatementKind::Update { returning, .. } | StatementKind::Delete { returning }
                if *returning != ReturnValues::None =>
            {
                return Err(refused(
                    position,
                    "RETURNING clause is not supported in ExecuteTransaction.",
                ));
            }
            StatementKind::Select { index: Some(_), .. } => {
                return Err(refused(
                    position,
                    "Reads on indices are not supported within transactions.",
                ));
            }
            _ => {}
        }
    }
    let mut definitions = Definitions::default();
    if reads > 0 {
        let mut gets = Vec::with_capacity(statements.len());
        for (position, (_, statement)) in statements.iter().enumerate() {
            let definition = definitions.of(api, &statement.table).await?;
            let named =
                partiql::item_read(statement, definition).filter(|(_, rest)| rest.is_none());
            let Some((mut get, _)) = named else {
                return Err(refused(
                    position,
                    "Select statements within ExecuteTransaction must specify the primary key in the where clause.",
                ));
            };
            if let Some(paths) = partiql::projection(statement) {
                let mut renderer = rave_store::Renderer::default();
                get.insert(
                    "ProjectionExpression".into(),
                    json!(renderer.projection(paths)),
                );
                let (names, _) = renderer.finish();
                get.insert("ExpressionAttributeNames".into(), json!(names));
            }
            gets.push(json!({"Get": get}));
        }
        request.insert("TransactItems".into(), Value::Array(gets));
        let request = Value::Object(request);
        let mut answer = transact::transact_get_items(api, Members::of(&request)?).await?;
        if let Some(Value::Array(responses)) = answer.get_mut("Responses") {
            for (response, (_, statement)) in responses.iter_mut().zip(&statements) {
                let paths = partiql::projection(statement);
                if let (Some(item), Some(paths)) = (response.get_mut("Item"), paths) {
                    *item = selected_item(item, paths)?;
                }
            }
        }
        return Ok(answer);
    }
    let mut writes = Vec::with_capacity(statements.len());
    let mut actions = Vec::with_capacity(statements.len());
    for (members, statement) in &statements {
        let definition = definitions.of(api, &statement.table).await?;
        let write = Write::of(statement, definition)?;
        let mut action = write.transact_item();
        let on_failure = members.0.get("ReturnValuesOnConditionCheckFailure");
        let inner = action.as_object_mut().and_then(|a| a.values_mut().next());
        if let (Some(on_failure), Some(Value::Object(inner))) = (on_failure, inner) {
            inner.insert(
                "ReturnValuesOnConditionCheckFailure".into(),
                on_failure.clone(),
            );
        }
        actions.push(action);
        writes.push(write);
    }
    request.insert("TransactItems".into(), Value::Array(actions));
    let request = Value::Object(request);
    let answer = transact::transact_write_items(api, Members::of(&request)?)
        .await
        .map_err(|error| {
            error.recast_cancellation(|position, reason| match reason {
                CancellationReason::ConditionalCheckFailed
                    if writes.get(position).is_some_and(Write::is_insert) =>
                {
                    CancellationReason::ValidationError(DUPLICATE_ITEM.to_owned())
                }
                reason => reason,
            })
        })?;
    let mut response = json!({"Responses": []});
    if let Some(consumed) = answer.get("ConsumedCapacity") {
        response["ConsumedCapacity"] = consumed.clone();
    }
    Ok(response)
}

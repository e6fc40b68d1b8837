//! TransactWriteItems: up to 100 puts, updates, deletes and condition
//! checks that commit together or not at all.

use rave_store::{Store, TransactWriteAction, TransactWriteItemsInput};
use serde_json::{Value, json};

use crate::DynamoApi;
use crate::error::ApiError;
use crate::expressions::{Placeholders, refuse_old_values_on_failure};
use crate::idempotency::{Claim, fingerprint};
use crate::request::{Members, missing};

/// The action members of a `TransactWriteItem`, exactly one of which is set.
const ACTIONS: [&str; 4] = ["ConditionCheck", "Put", "Delete", "Update"];

pub async fn transact_write_items(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let detail = body.capacity_detail()?;
    let listed = body
        .list("TransactItems")?
        .ok_or_else(|| missing("TransactItems"))?;
    let actions = listed
        .iter()
        .map(action)
        .collect::<Result<Vec<_>, ApiError>>()?;
    let running = match body.string("ClientRequestToken")? {
        Some(token) => match api.client_tokens.claim(token, fingerprint(&listed))? {
            Claim::Run(running) => Some(running),
            // Done already; nothing is read or written, so nothing is charged.
            Claim::Replay => return Ok(json!({})),
        },
        None => None,
    };
    let output = api
        .engine
        .transact_write_items(TransactWriteItemsInput { actions })
        .await?;
    if let Some(running) = running {
        running.succeeded();
    }
    let mut response = json!({});
    if let Some(consumed) = detail.render_per_table(&output.consumed) {
        response["ConsumedCapacity"] = consumed;
    }
    Ok(response)
}

fn action(item: &Value) -> Result<TransactWriteAction, ApiError> {
    let Value::Object(item) = item else {
        return Err(ApiError::serialization("TransactItems must be structures"));
    };
    let item = Members(item);
    let mut present = ACTIONS
        .iter()
        .filter_map(|name| item.object(name).transpose().map(|m| (*name, m)));
    let (name, members) = match (present.next(), present.next()) {
        (Some((name, members)), None) => (name, members?),
        _ => {
            return Err(ApiError::validation(
                "TransactItems can only contain one of Check, Put, Update or Delete",
            ));
        }
    };
    refuse_old_values_on_failure(members)?;
    let table = members.table_name()?.to_owned();
    let placeholders = Placeholders::read(members)?;
    let mut parser = placeholders.parser()?;
    let condition = members
        .string("ConditionExpression")?
        .map(|text| parser.condition(text))
        .transpose()?;
    let action = match name {
        "Put" => TransactWriteAction::Put {
            table,
            item: members.required_item("Item")?,
            condition,
        },
        "Delete" => TransactWriteAction::Delete {
            table,
            key: members.required_item("Key")?,
            condition,
        },
        "Update" => {
            let text = members.required_string("UpdateExpression")?;
            TransactWriteAction::Update {
                table,
                key: members.required_item("Key")?,
                update: parser.update(text)?,
                condition,
            }
        }
        _ => TransactWriteAction::ConditionCheck {
            table,
            key: members.required_item("Key")?,
            condition: condition.ok_or_else(|| missing("ConditionExpression"))?,
        },
    };
    parser.finish()?;
    Ok(action)
}

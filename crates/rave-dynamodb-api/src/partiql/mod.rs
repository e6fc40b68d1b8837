//! PartiQL statements as the operations they stand for: one translation,
//! into the typed inputs of GetItem, Query, Scan, PutItem, UpdateItem,
//! DeleteItem and TransactWriteItems' actions, sent on as those
//! operations' own requests (`rave_store`'s `expressions()` renders their
//! trees back into expressions), so that every rule (validation, the key
//! checks, conditions, item sizes, capacity, change stream records, the
//! errors) is the operation's, written once.
//!
//! * `SELECT` whose WHERE fixes the partition key is a Query (on the index
//!   `"table"."index"` names), otherwise a Scan (`keys`); `ORDER BY ...
//!   DESC` reads the Query backwards. In a batch or a transaction a SELECT
//!   must name one item, which GetItem (or TransactGetItems) reads.
//! * `INSERT` is a PutItem on the condition that no item has its key: not
//!   an upsert, and a DuplicateItemException when one does.
//! * `UPDATE` and `DELETE` name their item by an equality on each key
//!   attribute; the rest of the WHERE is their condition, and an UPDATE's
//!   condition also requires the item (it never creates one).
//!
//! The parser is `rave_store::Statement`; the operations that run the
//! statements are in `actions::partiql`.

mod keys;

use std::collections::BTreeSet;

use rave_store::{
    AttributeValue, Condition, DeleteItemInput, Item, KeySchema, Path, PathElement, Projection,
    PutItemInput, QueryInput, RequestExpressions, ReturnValues, ScanInput, Statement,
    StatementKind, TableDefinition, TransactWriteAction, UpdateItemInput,
};
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::request::Members;
use crate::wire::{item_to_json, value_from_json, value_to_json};

pub(crate) use keys::{Read, named_item};

/// DynamoDB's refusal of an UPDATE or DELETE that does not name its item.
pub(crate) const KEY_EQUALITY: &str =
    "Where clause does not contain a mandatory equality on all key attributes";
/// DynamoDB's refusal of a read of a global secondary index whose key has
/// several HASH or RANGE attributes.
const MULTI_ATTRIBUTE_KEYS: &str = "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys.";
/// DynamoDB's refusal of an INSERT whose key is taken.
pub(crate) const DUPLICATE_ITEM: &str = "Duplicate primary key exists in table";

/// The `Statement` and `Parameters` of a request (or of one of a batch's or
/// transaction's entries), parsed.
pub(crate) fn statement(members: Members<'_>) -> Result<Statement, ApiError> {
    let text = members.string("Statement")?.ok_or_else(|| {
        ApiError::validation(
            "1 validation error detected: Value null at 'statement' failed to satisfy constraint: Member must not be null",
        )
    })?;
    let parameters = members
        .list("Parameters")?
        .unwrap_or_default()
        .iter()
        .map(value_from_json)
        .collect::<Result<Vec<AttributeValue>, ApiError>>()?;
    Statement::parse(text, &parameters).map_err(|error| ApiError::validation(error.to_string()))
}

/// The key schema a SELECT reads: its table's, or its index's.
pub(crate) fn read_schema(
    definition: &TableDefinition,
    index: Option<&str>,
) -> Result<KeySchema, ApiError> {
    let Some(index) = index else {
        return Ok(definition.key_schema.clone());
    };
    if let Some(global) = definition.index(index) {
        if global.key_schema.is_multi_attribute() {
            return Err(ApiError::validation(MULTI_ATTRIBUTE_KEYS));
        }
        return Ok(global.key_schema.clone());
    }
    definition
        .local_secondary_indexes
        .iter()
        .find(|local| local.name == index)
        .map(|local| local.key_schema(&definition.key_schema.partition))
        // Unlike Query's, this refusal does not name the index.
        .ok_or_else(|| ApiError::validation("The table does not have the specified index"))
}

/// An index read may only filter on what the index projects, and a global
/// index's may only select it (a local one fetches the rest from the
/// table): PartiQL refuses the read, naming the other attributes in the
/// order the statement does.
fn check_projected(
    definition: &TableDefinition,
    index: &str,
    schema: &KeySchema,
    filter: Option<&Condition>,
    selected: Option<&[Path]>,
) -> Result<(), ApiError> {
    let (projection, global) = match definition.index(index) {
        Some(global) => (&global.projection, true),
        None => match definition
            .local_secondary_indexes
            .iter()
            .find(|local| local.name == index)
        {
            Some(local) => (&local.projection, false),
            None => return Ok(()),
        },
    };
    let included: &[String] = match projection {
        Projection::All => return Ok(()),
        Projection::KeysOnly => &[],
        Projection::Include(names) => names,
    };
    let unprojected = |paths: Vec<&Path>| {
        let mut names: Vec<String> = Vec::new();
        for name in paths.into_iter().filter_map(Path::top) {
            let projected = included.iter().any(|included| included == name)
                || definition
                    .key_schema
                    .attributes()
                    .any(|key| key.name == name)
                || schema.attributes().any(|key| key.name == name);
            if !projected && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        names
    };
    let filtered = unprojected(filter.map(Condition::paths).unwrap_or_default());
    if !filtered.is_empty() {
        return Err(ApiError::validation(format!(
            "One or more parameter values were invalid: Secondary index {index} does not project one or more filter attributes: [{}]",
            filtered.join(", ")
        )));
    }
    let selected = unprojected(selected.unwrap_or_default().iter().collect());
    if global && !selected.is_empty() {
        return Err(ApiError::validation(format!(
            "One or more parameter values were invalid: Global secondary index {index} does not project [{}]",
            selected.join(", ")
        )));
    }
    Ok(())
}

/// A SELECT's Query or Scan request (without paging and capacity, which
/// the caller adds), and whether it is a Query.
pub(crate) fn select_request(
    statement: &Statement,
    definition: &TableDefinition,
) -> Result<(bool, Map<String, Value>), ApiError> {
    let StatementKind::Select {
        index,
        projection,
        descending,
    } = &statement.kind
    else {
        return Err(ApiError::validation("A read must be a SELECT statement"));
    };
    let schema = read_schema(definition, index.as_deref())?;
    let read = keys::read(&schema, statement.condition.as_ref());
    if let Some(index) = index {
        let filter = match &read {
            Read::Query { filter, .. } | Read::Scan { filter } => filter.as_ref(),
        };
        check_projected(definition, index, &schema, filter, projection.as_deref())?;
    }
    let (is_query, expressions, forward) = match read {
        Read::Query {
            key_condition,
            filter,
        } => {
            let mut input = QueryInput::new(&statement.table, index.as_deref(), *key_condition);
            input.filter = filter;
            input.projection = projection.clone();
            (true, input.expressions(), !descending.unwrap_or(false))
        }
        Read::Scan { filter } => {
            if descending.is_some() {
                return Err(ApiError::validation(
                    "ORDER BY needs a WHERE clause that fixes the partition key: a Scan reads in no order",
                ));
            }
            let mut input = ScanInput::new(&statement.table);
            input.filter = filter;
            input.projection = projection.clone();
            (false, input.expressions(), true)
        }
    };
    let mut body = Map::new();
    body.insert("TableName".into(), json!(statement.table));
    if let Some(index) = index {
        body.insert("IndexName".into(), json!(index));
    }
    if !forward {
        body.insert("ScanIndexForward".into(), json!(false));
    }
    with_expressions(&mut body, expressions);
    Ok((is_query, body))
}

/// A SELECT naming one item of its table, as GetItem's request (without
/// its projection), and the rest of its WHERE, which the caller holds the
/// item to: `None` when it names no one item.
pub(crate) fn item_read(
    statement: &Statement,
    definition: &TableDefinition,
) -> Option<(Map<String, Value>, Option<Condition>)> {
    let StatementKind::Select { index: None, .. } = &statement.kind else {
        return None;
    };
    let named = named_item(&definition.key_schema, statement.condition.as_ref())?;
    let mut body = Map::new();
    body.insert("TableName".into(), json!(statement.table));
    body.insert("Key".into(), item_to_json(&named.key));
    Some((body, named.rest))
}

/// An item as a SELECT listing `paths` returns it, from the item their
/// ProjectionExpression gave (`projected`): each path's value under the name
/// of its last step (`m.l[1]` as `l[1]`), where the projection nests it.
pub(crate) fn selected(projected: &Item, paths: &[Path]) -> Item {
    paths
        .iter()
        .filter_map(|path| {
            let value = renumbered(path, paths).resolve(projected)?;
            let last_name = path
                .0
                .iter()
                .rposition(|element| matches!(element, PathElement::Attr(_)))?;
            let name: String = path.0[last_name..]
                .iter()
                .map(|element| match element {
                    PathElement::Attr(name) => name.clone(),
                    PathElement::Index(index) => format!("[{index}]"),
                })
                .collect();
            Some((name, value.clone()))
        })
        .collect()
}

/// `path` in the item `rave_store::project` makes of `paths`, which keeps
/// only the list elements the paths pick, in index order: each index
/// renumbered to its rank among those picked from its list.
fn renumbered(path: &Path, paths: &[Path]) -> Path {
    let elements = path
        .0
        .iter()
        .enumerate()
        .map(|(at, element)| match element {
            PathElement::Index(index) => {
                let picked: BTreeSet<usize> = paths
                    .iter()
                    .filter(|other| other.0.len() > at && other.0[..at] == path.0[..at])
                    .filter_map(|other| match other.0[at] {
                        PathElement::Index(picked) => Some(picked),
                        PathElement::Attr(_) => None,
                    })
                    .collect();
                let rank = picked.iter().position(|picked| picked == index);
                PathElement::Index(rank.unwrap_or(*index))
            }
            attribute => attribute.clone(),
        })
        .collect();
    Path(elements)
}

/// The paths a SELECT returns, `None` for all.
pub(crate) fn projection(statement: &Statement) -> Option<&[Path]> {
    match &statement.kind {
        StatementKind::Select { projection, .. } => projection.as_deref(),
        _ => None,
    }
}

/// A write statement's operation.
#[derive(Debug, Clone)]
pub(crate) enum Write {
    Insert(PutItemInput),
    Update(UpdateItemInput),
    Delete(DeleteItemInput),
}

impl Write {
    /// The write `statement` stands for on the table `definition` describes.
    pub(crate) fn of(
        statement: &Statement,
        definition: &TableDefinition,
    ) -> Result<Write, ApiError> {
        let table = statement.table.clone();
        let named = || {
            named_item(&definition.key_schema, statement.condition.as_ref())
                .ok_or_else(|| ApiError::validation(KEY_EQUALITY))
        };
        Ok(match &statement.kind {
            StatementKind::Insert { item } => {
                check_insert_key(&definition.key_schema, item)?;
                let partition = &definition.key_schema.partition.name;
                Write::Insert(PutItemInput {
                    table,
                    item: item.clone(),
                    condition: Some(Condition::not_exists(partition.clone())),
                    return_values: ReturnValues::None,
                })
            }
            StatementKind::Update { update, returning } => {
                let named = named()?;
                let partition = &definition.key_schema.partition.name;
                let exists = Condition::exists(partition.clone());
                Write::Update(UpdateItemInput {
                    table,
                    key: named.key,
                    update: update.clone(),
                    condition: Some(match named.rest {
                        Some(rest) => exists.and(rest),
                        None => exists,
                    }),
                    return_values: *returning,
                })
            }
            StatementKind::Delete { returning } => {
                let named = named()?;
                // The rest of the WHERE is asked of an item that is there:
                // deleting none is no failure.
                let partition = &definition.key_schema.partition.name;
                let absent = Condition::not_exists(partition.clone());
                Write::Delete(DeleteItemInput {
                    table,
                    key: named.key,
                    condition: named.rest.map(|rest| absent.or(rest)),
                    return_values: *returning,
                })
            }
            StatementKind::Select { .. } => {
                return Err(ApiError::validation(
                    "A write must be an INSERT, UPDATE or DELETE",
                ));
            }
        })
    }

    pub(crate) fn table(&self) -> &str {
        match self {
            Write::Insert(input) => &input.table,
            Write::Update(input) => &input.table,
            Write::Delete(input) => &input.table,
        }
    }

    /// The key of the item it writes.
    pub(crate) fn key(&self, schema: &KeySchema) -> Item {
        match self {
            Write::Insert(input) => schema.key_of(&input.item),
            Write::Update(input) => input.key.clone(),
            Write::Delete(input) => input.key.clone(),
        }
    }

    pub(crate) fn is_insert(&self) -> bool {
        matches!(self, Write::Insert(_))
    }

    pub(crate) fn returns(&self) -> ReturnValues {
        match self {
            Write::Insert(input) => input.return_values,
            Write::Update(input) => input.return_values,
            Write::Delete(input) => input.return_values,
        }
    }

    /// The operation's name and its request.
    pub(crate) fn request(&self) -> (&'static str, Map<String, Value>) {
        let mut body = Map::new();
        body.insert("TableName".into(), json!(self.table()));
        let (operation, expressions) = match self {
            Write::Insert(input) => {
                body.insert("Item".into(), item_to_json(&input.item));
                ("PutItem", input.expressions())
            }
            Write::Update(input) => {
                body.insert("Key".into(), item_to_json(&input.key));
                ("UpdateItem", input.expressions())
            }
            Write::Delete(input) => {
                body.insert("Key".into(), item_to_json(&input.key));
                ("DeleteItem", input.expressions())
            }
        };
        if self.returns() != ReturnValues::None {
            body.insert("ReturnValues".into(), json!(self.returns().as_str()));
        }
        with_expressions(&mut body, expressions);
        (operation, body)
    }

    /// The action of a TransactWriteItems request.
    pub(crate) fn transact_item(&self) -> Value {
        let mut body = Map::new();
        body.insert("TableName".into(), json!(self.table()));
        let (member, action) = match self.clone() {
            Write::Insert(input) => {
                body.insert("Item".into(), item_to_json(&input.item));
                let action = TransactWriteAction::Put {
                    table: input.table,
                    item: input.item,
                    condition: input.condition,
                };
                ("Put", action)
            }
            Write::Update(input) => {
                body.insert("Key".into(), item_to_json(&input.key));
                let action = TransactWriteAction::Update {
                    table: input.table,
                    key: input.key,
                    update: input.update,
                    condition: input.condition,
                };
                ("Update", action)
            }
            Write::Delete(input) => {
                body.insert("Key".into(), item_to_json(&input.key));
                let action = TransactWriteAction::Delete {
                    table: input.table,
                    key: input.key,
                    condition: input.condition,
                };
                ("Delete", action)
            }
        };
        with_expressions(&mut body, action.expressions());
        json!({ member: body })
    }
}

/// An INSERT's item must hold the table's key, each attribute of its type,
/// checked before the write as DynamoDB does, in its words.
fn check_insert_key(schema: &KeySchema, item: &Item) -> Result<(), ApiError> {
    for attribute in schema.attributes() {
        match item.get(&attribute.name) {
            None => {
                return Err(ApiError::validation(format!(
                    "Key attribute should be present in the item: Key {}",
                    attribute.name
                )));
            }
            Some(value) if !attribute.key_type.matches(value) => {
                return Err(ApiError::validation(format!(
                    "Key attribute's data type should match its data type in table's schema: Key {}",
                    attribute.name
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// An operation's expressions and placeholder maps, as request members.
fn with_expressions(body: &mut Map<String, Value>, expressions: RequestExpressions) {
    let members = [
        ("KeyConditionExpression", expressions.key_condition),
        ("UpdateExpression", expressions.update),
        ("ConditionExpression", expressions.condition),
        ("FilterExpression", expressions.filter),
        ("ProjectionExpression", expressions.projection),
    ];
    for (member, text) in members {
        if let Some(text) = text {
            body.insert(member.into(), json!(text));
        }
    }
    if let Some(names) = expressions.names {
        body.insert("ExpressionAttributeNames".into(), json!(names));
    }
    if let Some(values) = expressions.values {
        let values: Map<String, Value> = values
            .iter()
            .map(|(placeholder, value)| (placeholder.clone(), value_to_json(value)))
            .collect();
        body.insert("ExpressionAttributeValues".into(), Value::Object(values));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_paths_are_named_by_their_last_step() {
        let item: Item = [
            ("pk".to_owned(), AttributeValue::S("a".into())),
            (
                "m".to_owned(),
                AttributeValue::M(
                    [(
                        "l".to_owned(),
                        AttributeValue::L(vec![
                            AttributeValue::S("zero".into()),
                            AttributeValue::S("one".into()),
                            AttributeValue::S("two".into()),
                        ]),
                    )]
                    .into(),
                ),
            ),
        ]
        .into();
        let paths = [
            Path::attr("pk"),
            Path::attr("m").key("l").index(2),
            Path::attr("m").key("l").index(1),
            Path::attr("gone"),
        ];
        let projected = rave_store::project(&item, &paths);
        let selected = selected(&projected, &paths);
        assert_eq!(selected["pk"], AttributeValue::S("a".into()));
        assert_eq!(selected["l[2]"], AttributeValue::S("two".into()));
        assert_eq!(selected["l[1]"], AttributeValue::S("one".into()));
        assert_eq!(selected.len(), 3);
    }
}

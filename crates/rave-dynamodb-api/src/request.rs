//! Reading request members with DynamoDB's errors: a member of the wrong
//! JSON type is a SerializationException, a missing required one a
//! ValidationException naming it ("Value null at 'tableName'…"), and a
//! member rave does not implement yet is refused rather than ignored. Enums
//! are placed by their path in the request (`keySchema.1.member.keyType`),
//! names are checked against their pattern and length, and every broken
//! constraint of a request is listed in one "N validation errors detected"
//! envelope, as DynamoDB lists them. Also the rendering of
//! `ReturnConsumedCapacity` (TOTAL; INDEXES splits table and index units).

use rave_store::{ConsumedCapacity, Item, ReturnValues};
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ErrorKind};
use crate::wire::{item_from_json, transacted_item_from_json};

/// The members of one JSON object of a request (the body, or a nested
/// shape such as a `PutRequest`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Members<'a>(pub(crate) &'a Map<String, Value>);

impl<'a> Members<'a> {
    /// The body of a request; DynamoDB requires a JSON object.
    pub(crate) fn of(body: &'a Value) -> Result<Members<'a>, ApiError> {
        match body {
            Value::Object(members) => Ok(Members(members)),
            _ => Err(ApiError::serialization(
                "Start of structure or map found where not expected",
            )),
        }
    }

    fn get(&self, member: &str) -> Option<&'a Value> {
        self.0.get(member).filter(|value| !value.is_null())
    }

    pub(crate) fn string(&self, member: &str) -> Result<Option<&'a str>, ApiError> {
        self.get(member)
            .map(|value| value.as_str().ok_or_else(|| wrong_type(member, "a string")))
            .transpose()
    }

    pub(crate) fn required_string(&self, member: &str) -> Result<&'a str, ApiError> {
        self.string(member)?.ok_or_else(|| missing(member))
    }

    /// `TableName`, checked as DynamoDB checks it before anything else: the
    /// name of a table (or its ARN, which DynamoDB accepts where a table
    /// exists, hence a minimum of one character).
    pub(crate) fn table_name(&self) -> Result<&'a str, ApiError> {
        self.table_name_at("tableName")
    }

    /// [`Members::table_name`] of a member nested in a list, which
    /// DynamoDB's message places by its path
    /// (`transactItems.1.member.get.tableName`).
    pub(crate) fn table_name_at(&self, at: &str) -> Result<&'a str, ApiError> {
        let name = self.required_string("TableName")?;
        check_name(name, at, 1)?;
        Ok(name)
    }

    /// CreateTable's `TableName`: a new table's name, three characters or more.
    pub(crate) fn new_table_name(&self) -> Result<&'a str, ApiError> {
        let name = self.string("TableName")?.ok_or_else(|| {
            ApiError::validation(
                "The parameter 'TableName' is required but was not present in the request",
            )
        })?;
        check_name(name, "tableName", 3)?;
        Ok(name)
    }

    /// A boolean member, false when absent.
    pub(crate) fn bool(&self, member: &str) -> Result<bool, ApiError> {
        Ok(self.optional_bool(member)?.unwrap_or(false))
    }

    pub(crate) fn optional_bool(&self, member: &str) -> Result<Option<bool>, ApiError> {
        self.get(member)
            .map(|value| {
                value
                    .as_bool()
                    .ok_or_else(|| wrong_type(member, "a boolean"))
            })
            .transpose()
    }

    pub(crate) fn integer(&self, member: &str) -> Result<Option<i64>, ApiError> {
        self.get(member)
            .map(|value| {
                value
                    .as_i64()
                    .ok_or_else(|| wrong_type(member, "an integer"))
            })
            .transpose()
    }

    pub(crate) fn object(&self, member: &str) -> Result<Option<Members<'a>>, ApiError> {
        self.get(member)
            .map(|value| match value {
                Value::Object(members) => Ok(Members(members)),
                _ => Err(wrong_type(member, "a structure")),
            })
            .transpose()
    }

    pub(crate) fn required_object(&self, member: &str) -> Result<Members<'a>, ApiError> {
        self.object(member)?.ok_or_else(|| missing(member))
    }

    pub(crate) fn list(&self, member: &str) -> Result<Option<&'a [Value]>, ApiError> {
        self.get(member)
            .map(|value| match value {
                Value::Array(values) => Ok(values.as_slice()),
                _ => Err(wrong_type(member, "a list")),
            })
            .transpose()
    }

    pub(crate) fn item(&self, member: &str) -> Result<Option<Item>, ApiError> {
        self.get(member).map(item_from_json).transpose()
    }

    /// [`Members::item`] as TransactWriteItems reads a Put's item
    /// ([`transacted_item_from_json`]).
    pub(crate) fn transacted_item(&self, member: &str) -> Result<Option<Item>, ApiError> {
        self.get(member).map(transacted_item_from_json).transpose()
    }

    pub(crate) fn required_item(&self, member: &str) -> Result<Item, ApiError> {
        self.item(member)?.ok_or_else(|| missing(member))
    }

    /// Refuses the members rave does not implement yet.
    pub(crate) fn refuse(&self, unsupported: &[&str]) -> Result<(), ApiError> {
        match unsupported.iter().find(|member| self.get(member).is_some()) {
            Some(member) => Err(ApiError::not_supported_yet(member)),
            None => Ok(()),
        }
    }

    /// A member whose value must be one of `allowed` (DynamoDB's enums).
    pub(crate) fn choice(
        &self,
        member: &str,
        allowed: &[&str],
    ) -> Result<Option<&'a str>, ApiError> {
        // The member's path is spelled only for a refusal.
        match self.string(member)? {
            Some(value) if !allowed.contains(&value) => {
                self.choice_at(member, &lower_first(member), allowed)
            }
            value => Ok(value),
        }
    }

    /// Every member of `enums` whose value is not one of its allowed ones,
    /// reported together as DynamoDB reports broken constraints.
    pub(crate) fn check_enums(&self, enums: &[(&str, &[&str])]) -> Result<(), ApiError> {
        let violations = self.enum_violations(enums);
        match violations.is_empty() {
            true => Ok(()),
            false => Err(validation_errors(&violations)),
        }
    }

    /// What [`Members::check_enums`] reports, for joining with other
    /// broken constraints.
    pub(crate) fn enum_violations(&self, enums: &[(&str, &[&str])]) -> Vec<String> {
        enums
            .iter()
            .filter_map(|(member, allowed)| {
                let value = self.get(member)?.as_str()?;
                (!allowed.contains(&value)).then(|| {
                    format!(
                        "Value '{value}' at '{}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                        lower_first(member),
                        allowed.join(", ")
                    )
                })
            })
            .collect()
    }

    /// [`Members::choice`] of a member nested in a list, which DynamoDB's
    /// message places by its path (`keySchema.1.member.keyType`).
    pub(crate) fn choice_at(
        &self,
        member: &str,
        at: &str,
        allowed: &[&str],
    ) -> Result<Option<&'a str>, ApiError> {
        let Some(value) = self.string(member)? else {
            return Ok(None);
        };
        if allowed.contains(&value) {
            return Ok(Some(value));
        }
        Err(validation_errors(&[format!(
            "Value '{value}' at '{at}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            allowed.join(", ")
        )]))
    }

    /// [`Members::choice`] whose refusal carries the words of DynamoDB's
    /// current validation layer too, as a refused value's do
    /// ([`ApiError::value_fault`]): they name neither the member nor the
    /// value, and list the set as that layer does (`listed`, which need not
    /// be `allowed`).
    pub(crate) fn choice_in_both_words(
        &self,
        member: &str,
        allowed: &[&str],
        listed: &[&str],
    ) -> Result<Option<&'a str>, ApiError> {
        self.choice(member, allowed)
            .map_err(|older| match older.message {
                Some(message) if older.kind == ErrorKind::Validation => ApiError::value_fault(
                    message,
                    format!(
                        "Failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                        listed.join(", ")
                    ),
                ),
                _ => older,
            })
    }

    pub(crate) fn capacity_detail(&self) -> Result<CapacityDetail, ApiError> {
        Ok(self
            .choice("ReturnConsumedCapacity", &CAPACITY_DETAILS)?
            .and_then(CapacityDetail::named)
            .unwrap_or(CapacityDetail::None))
    }

    /// A write's enums (`ReturnConsumedCapacity`,
    /// `ReturnItemCollectionMetrics`, `ReturnValues`), all checked at once.
    pub(crate) fn check_write_enums(&self) -> Result<(), ApiError> {
        self.check_enums(&[
            ("ReturnConsumedCapacity", &CAPACITY_DETAILS),
            ("ReturnItemCollectionMetrics", &COLLECTION_METRICS),
            ("ReturnValues", &RETURN_VALUES),
        ])
    }

    /// What [`Members::capacity_detail`] refuses, for joining with other
    /// broken constraints.
    pub(crate) fn capacity_violations(&self) -> Vec<String> {
        self.enum_violations(&[("ReturnConsumedCapacity", &CAPACITY_DETAILS)])
    }

    /// The enums of a write of many items (BatchWriteItem,
    /// TransactWriteItems), reported together.
    pub(crate) fn batch_write_enum_violations(&self) -> Vec<String> {
        self.enum_violations(&[
            ("ReturnConsumedCapacity", &CAPACITY_DETAILS),
            ("ReturnItemCollectionMetrics", &COLLECTION_METRICS),
        ])
    }

    /// `ReturnValues` of a PutItem or a DeleteItem: only NONE and ALL_OLD
    /// mean something there; any other value is refused with `refusal`
    /// (the two operations word it differently).
    pub(crate) fn return_values(
        &self,
        refusal: impl FnOnce() -> ApiError,
    ) -> Result<ReturnValues, ApiError> {
        let chosen = self
            .choice("ReturnValues", &RETURN_VALUES)?
            .and_then(ReturnValues::from_wire)
            .unwrap_or_default();
        // The rule is the store's; DynamoDB checks it before the other
        // members, so it is asked here, and worded by the operation.
        match chosen.at_most_the_old_item() {
            true => Ok(chosen),
            false => Err(refusal()),
        }
    }
}

/// A table or index name held to DynamoDB's constraints (its pattern, then
/// its length), every one it breaks listed.
pub(crate) fn check_name(name: &str, at: &str, min: usize) -> Result<(), ApiError> {
    let violations = name_violations(name, at, min);
    match violations.is_empty() {
        true => Ok(()),
        false => Err(validation_errors(&violations)),
    }
}

/// The constraints of a table or index name that `name` breaks.
pub(crate) fn name_violations(name: &str, at: &str, min: usize) -> Vec<String> {
    let mut violations = Vec::new();
    let fits_pattern = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    // Where a table's ARN may stand for its name (the data plane), DynamoDB
    // reports an empty name by its length alone.
    let reported_by_length = name.is_empty() && min == 1;
    if !(fits_pattern || reported_by_length) {
        violations.push(format!(
            "Value '{name}' at '{at}' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
        ));
    }
    violations.extend(length_violation(name, at, min, 255));
    violations
}

/// The length constraint `value` breaks, if any.
pub(crate) fn length_violation(value: &str, at: &str, min: usize, max: usize) -> Option<String> {
    let bound = if value.len() < min {
        format!("greater than or equal to {min}")
    } else if value.len() > max {
        format!("less than or equal to {max}")
    } else {
        return None;
    };
    Some(format!(
        "Value '{value}' at '{at}' failed to satisfy constraint: Member must have length {bound}"
    ))
}

/// DynamoDB's envelope for constraint violations found before the request
/// is run: "N validation error(s) detected: " and each, `; `-separated.
pub(crate) fn validation_errors(violations: &[String]) -> ApiError {
    let count = violations.len();
    ApiError::validation(format!(
        "{count} validation error{} detected: {}",
        if count == 1 { "" } else { "s" },
        violations.join("; ")
    ))
}

/// The start of DynamoDB's refusals of a parameter value.
pub(crate) const INVALID: &str = "One or more parameter values were invalid";

/// `ReturnConsumedCapacity`'s values, in the order DynamoDB lists them.
const CAPACITY_DETAILS: [&str; 3] = ["INDEXES", "TOTAL", "NONE"];
/// `ReturnItemCollectionMetrics`' values.
pub(crate) const COLLECTION_METRICS: [&str; 2] = ["SIZE", "NONE"];
/// `ReturnValues`' values, in the order DynamoDB lists them.
pub(crate) const RETURN_VALUES: [&str; 5] =
    ["ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"];

/// DynamoDB names members in its messages in lower camel case, each step
/// of a path (`timeToLiveSpecification.attributeName`).
pub(crate) fn lower_first(member: &str) -> String {
    let lower = |step: &str| {
        let mut chars = step.chars();
        match chars.next() {
            Some(first) => first.to_lowercase().chain(chars).collect(),
            None => String::new(),
        }
    };
    member
        .split('.')
        .map(lower)
        .collect::<Vec<String>>()
        .join(".")
}

pub(crate) fn missing(member: &str) -> ApiError {
    ApiError::validation(format!(
        "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
        lower_first(member)
    ))
}

fn wrong_type(member: &str, expected: &str) -> ApiError {
    ApiError::serialization(format!("{member} must be {expected}"))
}

/// What a transaction's capacity units were spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransactionUnits {
    Read,
    Write,
}

/// How much of the consumed capacity a response reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CapacityDetail {
    None,
    Total,
    Indexes,
}

impl CapacityDetail {
    /// The detail a `ReturnConsumedCapacity` names, if it names one.
    pub(crate) fn named(name: &str) -> Option<CapacityDetail> {
        match name {
            "INDEXES" => Some(CapacityDetail::Indexes),
            "TOTAL" => Some(CapacityDetail::Total),
            "NONE" => Some(CapacityDetail::None),
            _ => None,
        }
    }

    /// The `ConsumedCapacity` of one request on one table.
    pub(crate) fn render(self, consumed: &ConsumedCapacity) -> Option<Value> {
        if self == CapacityDetail::None {
            return None;
        }
        let mut rendered = json!({
            "TableName": consumed.table,
            "CapacityUnits": consumed.total(),
        });
        if self == CapacityDetail::Indexes {
            rendered["Table"] = json!({"CapacityUnits": consumed.total() - consumed.on_indexes()});
            for (member, units) in [
                ("GlobalSecondaryIndexes", &consumed.index_units),
                ("LocalSecondaryIndexes", &consumed.local_index_units),
            ] {
                if !units.is_empty() {
                    rendered[member] = units
                        .iter()
                        .map(|(index, units)| (index.clone(), json!({"CapacityUnits": units})))
                        .collect::<Map<_, _>>()
                        .into();
                }
            }
        }
        Some(rendered)
    }

    /// The `ConsumedCapacity` list of a transaction: one entry per table,
    /// which, unlike other operations', also names its units as reads or
    /// writes, at every level of detail.
    pub(crate) fn render_transaction(
        self,
        consumed: &[ConsumedCapacity],
        units: TransactionUnits,
    ) -> Option<Value> {
        let key = match units {
            TransactionUnits::Read => "ReadCapacityUnits",
            TransactionUnits::Write => "WriteCapacityUnits",
        };
        let split = |level: &mut Value| {
            let total = level["CapacityUnits"].clone();
            level[key] = total;
        };
        let mut rendered = self.render_per_table(consumed)?;
        for entry in rendered.as_array_mut().into_iter().flatten() {
            split(entry);
            if let Some(table) = entry.get_mut("Table") {
                split(table);
            }
            for member in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
                if let Some(Value::Object(indexes)) = entry.get_mut(member) {
                    indexes.values_mut().for_each(split);
                }
            }
        }
        Some(rendered)
    }

    /// The `ConsumedCapacity` list of a batch: one entry per table.
    pub(crate) fn render_per_table(self, consumed: &[ConsumedCapacity]) -> Option<Value> {
        let mut per_table: Vec<ConsumedCapacity> = Vec::new();
        for entry in consumed {
            match per_table.iter_mut().find(|t| t.table == entry.table) {
                Some(total) => total.absorb(entry),
                None => per_table.push(entry.clone()),
            }
        }
        per_table
            .iter()
            .map(|entry| self.render(entry))
            .collect::<Option<Vec<Value>>>()
            .map(Value::Array)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_reported_at_the_detail_asked_for() {
        let mut consumed = ConsumedCapacity::new("t");
        consumed.write_units = 3.0;
        consumed.index_units.insert("byX".into(), 1.0);
        assert_eq!(CapacityDetail::None.render(&consumed), None);
        assert_eq!(
            CapacityDetail::Total.render(&consumed),
            Some(json!({"TableName": "t", "CapacityUnits": 3.0}))
        );
        assert_eq!(
            CapacityDetail::Indexes.render(&consumed),
            Some(json!({
                "TableName": "t",
                "CapacityUnits": 3.0,
                "Table": {"CapacityUnits": 2.0},
                "GlobalSecondaryIndexes": {"byX": {"CapacityUnits": 1.0}},
            }))
        );
        let batch = [consumed.clone(), consumed, ConsumedCapacity::new("u")];
        assert_eq!(
            CapacityDetail::Total.render_per_table(&batch),
            Some(json!([
                {"TableName": "t", "CapacityUnits": 6.0},
                {"TableName": "u", "CapacityUnits": 0.0},
            ]))
        );
    }

    #[test]
    fn members_report_dynamodbs_errors() {
        let body = json!({"TableName": 5, "Limit": 3, "ReturnConsumedCapacity": "SOME"});
        let members = Members::of(&body).expect("an object");
        assert_eq!(
            members.string("TableName").map_err(|e| e.kind),
            Err(crate::error::ErrorKind::Serialization)
        );
        assert_eq!(
            members.required_string("IndexName").map_err(|e| e.message),
            Err(Some("1 validation error detected: Value null at 'indexName' failed to satisfy constraint: Member must not be null".into()))
        );
        assert_eq!(members.integer("Limit"), Ok(Some(3)));
        for (name, message) in [
            (
                json!(""),
                "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1",
            ),
            (
                json!("abc;"),
                "1 validation error detected: Value 'abc;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
            ),
        ] {
            let body = json!({"TableName": name});
            assert_eq!(
                Members::of(&body)
                    .and_then(|m| m.table_name())
                    .map_err(|e| e.message),
                Err(Some(message.to_owned()))
            );
        }
        let body = json!({"TableName": "a.B-9_"});
        assert_eq!(
            Members::of(&body).and_then(|m| m.table_name()),
            Ok("a.B-9_")
        );
        assert_eq!(
            members.capacity_detail().map_err(|e| e.message),
            Err(Some("1 validation error detected: Value 'SOME' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]".into()))
        );
        assert_eq!(
            members.refuse(&["Limit"]).map_err(|e| e.message),
            Err(Some("rave does not support Limit yet".into()))
        );
    }
}

//! GetItem's and Query's requests, the ones served most, read straight
//! into their inputs: serde reads the body into the members these
//! operations take, and the key and placeholder values into attribute
//! values, with no `serde_json::Value` tree built, searched and dropped on
//! the way.
//!
//! Only a plain request is read so: each member one these list, of its JSON
//! type, given once; key and placeholder values strings, numbers or
//! binaries; no string escaped where it is borrowed; and nothing rave's
//! checks refuse. Anything else is left to the general path (`protocol`),
//! which reads the body as a `Value` and answers in DynamoDB's words and
//! order: what is read here is what the general path would accept, into
//! the same input.

use std::collections::HashMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_store::{AttributeValue, GetItemInput, Item, QueryInput};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::actions::items::GetItemRead;
use crate::actions::query_scan::named_select;
use crate::expressions::{ExpressionTexts, Placeholders};
use crate::request::{CapacityDetail, check_name};

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct GetItemRequest<'a> {
    table_name: &'a str,
    key: Scalars<Item>,
    #[serde(borrow)]
    projection_expression: Option<&'a str>,
    expression_attribute_names: Option<HashMap<String, String>>,
    consistent_read: Option<bool>,
    #[serde(borrow)]
    return_consumed_capacity: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct QueryRequest<'a> {
    table_name: &'a str,
    #[serde(borrow)]
    index_name: Option<&'a str>,
    #[serde(borrow)]
    key_condition_expression: Option<&'a str>,
    #[serde(borrow)]
    filter_expression: Option<&'a str>,
    #[serde(borrow)]
    projection_expression: Option<&'a str>,
    expression_attribute_names: Option<HashMap<String, String>>,
    expression_attribute_values: Option<Scalars<HashMap<String, AttributeValue>>>,
    limit: Option<i64>,
    exclusive_start_key: Option<Scalars<Item>>,
    scan_index_forward: Option<bool>,
    consistent_read: Option<bool>,
    #[serde(borrow)]
    select: Option<&'a str>,
    #[serde(borrow)]
    return_consumed_capacity: Option<&'a str>,
}

/// A plain GetItem, or `None` for the general path.
pub(crate) fn get_item(body: &[u8]) -> Option<GetItemRead> {
    let request: GetItemRequest<'_> = serde_json::from_slice(body).ok()?;
    check_name(request.table_name, "tableName", 1).ok()?;
    let detail = capacity_detail(request.return_consumed_capacity)?;
    let placeholders = Placeholders::new(request.expression_attribute_names, None);
    let expressions = ExpressionTexts {
        key_condition: Ok(None),
        filter: Ok(None),
        projection: Ok(request.projection_expression),
    }
    .parse(&placeholders)
    .ok()?;
    Some(GetItemRead {
        input: GetItemInput {
            table: request.table_name.to_owned(),
            key: request.key.0,
            consistent_read: request.consistent_read.unwrap_or(false),
        },
        projection: expressions.projection,
        detail,
    })
}

/// A plain Query, or `None` for the general path.
pub(crate) fn query(body: &[u8]) -> Option<(QueryInput, CapacityDetail)> {
    let request: QueryRequest<'_> = serde_json::from_slice(body).ok()?;
    check_name(request.table_name, "tableName", 1).ok()?;
    let detail = capacity_detail(request.return_consumed_capacity)?;
    let placeholders = Placeholders::new(
        request.expression_attribute_names,
        request.expression_attribute_values.map(|values| values.0),
    );
    let expressions = ExpressionTexts {
        key_condition: Ok(request.key_condition_expression),
        filter: Ok(request.filter_expression),
        projection: Ok(request.projection_expression),
    }
    .parse(&placeholders)
    .ok()?;
    let mut input = QueryInput::new(
        request.table_name,
        request.index_name,
        expressions.key_condition?,
    );
    input.filter = expressions.filter;
    input.limit = match request.limit {
        Some(limit) => Some(usize::try_from(limit).ok().filter(|limit| *limit >= 1)?),
        None => None,
    };
    input.scan_index_forward = request.scan_index_forward.unwrap_or(true);
    input.exclusive_start_key = request.exclusive_start_key.map(|key| key.0);
    input.consistent_read = request.consistent_read.unwrap_or(false);
    input.select = match request.select {
        Some(name) => Some(named_select(name)?),
        None => None,
    };
    input.projection = expressions.projection;
    Some((input, detail))
}

/// `ReturnConsumedCapacity`, NONE when absent; `None` when it names no
/// detail.
fn capacity_detail(named: Option<&str>) -> Option<CapacityDetail> {
    named.map_or(Some(CapacityDetail::None), CapacityDetail::named)
}

/// A map of attribute values that are all strings, numbers or binaries
/// (a key, or placeholder values), collected into `M`.
struct Scalars<M>(M);

impl<'de, M: Default + Extend<(String, AttributeValue)>> Deserialize<'de> for Scalars<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<M>(std::marker::PhantomData<M>);
        impl<'de, M: Default + Extend<(String, AttributeValue)>> Visitor<'de> for Entries<M> {
            type Value = Scalars<M>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of attribute values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalars<M>, A::Error> {
                let mut values = M::default();
                while let Some((name, Scalar(value))) = map.next_entry::<String, Scalar>()? {
                    values.extend([(name, value)]);
                }
                Ok(Scalars(values))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A string, number or binary attribute value: `{"S": "..."}`.
struct Scalar(AttributeValue);

#[derive(Deserialize)]
enum ScalarTag {
    S,
    N,
    B,
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Tagged;
        impl<'de> Visitor<'de> for Tagged {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or binary attribute value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                let refused = |what: &str| de::Error::custom(format_args!("not {what}"));
                let value = match map.next_key::<ScalarTag>()? {
                    Some(ScalarTag::S) => AttributeValue::S(map.next_value()?),
                    Some(ScalarTag::N) => AttributeValue::N(
                        map.next_value::<&str>()?
                            .parse()
                            .map_err(|_| refused("a number"))?,
                    ),
                    Some(ScalarTag::B) => AttributeValue::B(
                        STANDARD
                            .decode(map.next_value::<&str>()?)
                            .map_err(|_| refused("base64"))?,
                    ),
                    None => return Err(refused("typed")),
                };
                match map.next_key::<IgnoredAny>()? {
                    None => Ok(Scalar(value)),
                    Some(_) => Err(refused("of one type")),
                }
            }
        }
        deserializer.deserialize_map(Tagged)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::actions::query_scan::query_input;
    use crate::request::Members;

    fn general<T>(
        body: &str,
        read: impl Fn(Members<'_>) -> Result<T, crate::error::ApiError>,
    ) -> Option<T> {
        let value: Value = serde_json::from_str(body).ok()?;
        Members::of(&value).and_then(read).ok()
    }

    const KEY: &str = r#""Key": {"pk": {"S": "a"}, "sk": {"N": "1.50E2"}}"#;

    #[test]
    fn a_plain_get_item_is_read_as_the_general_path_reads_it() {
        let plain = [
            format!(r#"{{"TableName": "t1", {KEY}}}"#),
            format!(
                r##"{{"TableName": "t1", {KEY}, "ProjectionExpression": "#b, c[1].d",
                "ExpressionAttributeNames": {{"#b": "body"}}, "ConsistentRead": true,
                "ReturnConsumedCapacity": "TOTAL"}}"##
            ),
            format!(r#"{{"TableName": "t1", {KEY}, "ProjectionExpression": null}}"#),
            r#"{"TableName": "t1", "Key": {"pk": {"B": "AAEC"}, "pk": {"S": "last"}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"S": "tab\tquote\""}}}"#.into(),
        ];
        for body in &plain {
            let read = get_item(body.as_bytes());
            assert!(read.is_some(), "{body}");
            assert_eq!(read, general(body, GetItemRead::from_members), "{body}");
        }
    }

    #[test]
    fn anything_but_a_plain_get_item_is_left_to_the_general_path() {
        let left = [
            String::new(),
            "[]".into(),
            format!(r#"{{"TableName": "t1", {KEY}}} x"#),
            r#"{"TableName": "t1"}"#.into(),
            r#"{"TableName": "t1", "Key": null}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"S": "a", "N": "1"}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"S": "a", "X": 1}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"SS": ["a"]}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"N": "x"}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"B": "!!"}}}"#.into(),
            r#"{"TableName": "t1", "Key": {"pk": {"N": "1", "N": "2"}}}"#.into(),
            format!(r#"{{"TableName": "t1", {KEY}, "TableName": "t2"}}"#),
            format!(r#"{{"TableName": "a;b", {KEY}}}"#),
            format!(r#"{{"TableName": "t\u0031", {KEY}}}"#),
            format!(r#"{{"TableName": 1, {KEY}}}"#),
            format!(r#"{{"TableName": "t1", {KEY}, "AttributesToGet": ["pk"]}}"#),
            format!(r#"{{"TableName": "t1", {KEY}, "ReturnConsumedCapacity": "SOME"}}"#),
            format!(r#"{{"TableName": "t1", {KEY}, "ConsistentRead": "yes"}}"#),
            format!(r##"{{"TableName": "t1", {KEY}, "ProjectionExpression": "#b"}}"##),
            format!(
                r##"{{"TableName": "t1", {KEY}, "ExpressionAttributeNames": {{"#b": "body"}}}}"##
            ),
            format!(r#"{{"TableName": "t1", {KEY}, "ExpressionAttributeValues": {{}}}}"#),
        ];
        for body in &left {
            assert_eq!(get_item(body.as_bytes()), None, "{body}");
        }
    }

    const KEY_CONDITION: &str =
        r#""KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}"#;

    #[test]
    fn a_plain_query_is_read_as_the_general_path_reads_it() {
        let plain = [
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Limit": 20}}"#),
            r##"{"TableName": "t1", "IndexName": "byOwner",
                "KeyConditionExpression": "#o = :o AND begins_with(#r, :r)",
                "FilterExpression": "stars > :s", "ProjectionExpression": "#o, body",
                "ExpressionAttributeNames": {"#o": "owner", "#r": "rank"},
                "ExpressionAttributeValues": {":o": {"S": "u1"}, ":r": {"S": "0"},
                    ":s": {"N": "2"}},
                "ScanIndexForward": false, "ConsistentRead": false, "Limit": 1,
                "ExclusiveStartKey": {"pk": {"S": "p1"}, "sk": {"B": "AAEC"}},
                "Select": "SPECIFIC_ATTRIBUTES", "ReturnConsumedCapacity": "INDEXES"}"##
                .into(),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Select": "COUNT", "Limit": null}}"#),
        ];
        for body in &plain {
            let read = query(body.as_bytes());
            assert!(read.is_some(), "{body}");
            assert_eq!(read, general(body, query_input), "{body}");
        }
    }

    #[test]
    fn anything_but_a_plain_query_is_left_to_the_general_path() {
        let left = [
            r#"{"TableName": "t1"}"#.into(),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Limit": 0}}"#),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Limit": -3}}"#),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Limit": 1.5}}"#),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "Select": "SOME"}}"#),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "QueryFilter": {{}}}}"#),
            format!(r#"{{"TableName": "t1", {KEY_CONDITION}, "ScanIndexForward": 0}}"#),
            r#"{"TableName": "t1", "KeyConditions": {"pk": {"ComparisonOperator": "EQ",
                "AttributeValueList": [{"S": "a"}]}}}"#
                .into(),
            r#"{"TableName": "t1", "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"BOOL": true}}}"#
                .into(),
            r#"{"TableName": "t1", "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": "a"}, ":q": {"S": "b"}}}"#
                .into(),
        ];
        for body in &left {
            assert_eq!(query(body.as_bytes()), None, "{body}");
        }
    }
}

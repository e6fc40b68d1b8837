//! Readers of the table shapes CreateTable and UpdateTable both take:
//! attribute definitions, key schemas, projections, throughput, billing and
//! stream specifications, each refused in DynamoDB's words.

use rave_store::{KeyAttribute, KeySchema, KeyType, MAX_INDEX_KEY_ATTRIBUTES, Projection};
use serde_json::Value;

use crate::error::ApiError;
use crate::metadata::{Billing, StreamViewType, Throughput};
use crate::request::{INVALID, Members, missing, validation_errors};

pub(crate) fn object<'a>(value: &'a Value, member: &str) -> Result<Members<'a>, ApiError> {
    match value {
        Value::Object(members) => Ok(Members(members)),
        _ => Err(ApiError::serialization(format!(
            "the members of {member} must be structures"
        ))),
    }
}

/// An `AttributeDefinitions` list: each attribute's name and type.
pub(crate) fn attribute_definitions(listed: &[Value]) -> Result<Vec<(String, KeyType)>, ApiError> {
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
pub(crate) fn key_schema(
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
pub(crate) fn global_index_key_schema(
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

pub(crate) fn projection(projection: Members<'_>) -> Result<Projection, ApiError> {
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
pub(crate) fn throughput(members: Members<'_>) -> Result<Option<Throughput>, ApiError> {
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
pub(crate) fn index_throughput_for(
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

pub(crate) fn billing(body: Members<'_>) -> Result<Billing, ApiError> {
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
pub(crate) fn stream_specification(
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

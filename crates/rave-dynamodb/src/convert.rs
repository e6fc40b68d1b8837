//! rave's attribute values to and from the SDK's.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue as Sdk;
use rave_store::{AttributeValue, Item, Number, Result, StoreError};

pub(crate) fn to_sdk(value: &AttributeValue) -> Sdk {
    match value {
        AttributeValue::S(s) => Sdk::S(s.clone()),
        AttributeValue::N(n) => Sdk::N(n.to_string()),
        AttributeValue::B(b) => Sdk::B(Blob::new(b.clone())),
        AttributeValue::Bool(b) => Sdk::Bool(*b),
        AttributeValue::Null => Sdk::Null(true),
        AttributeValue::L(l) => Sdk::L(l.iter().map(to_sdk).collect()),
        AttributeValue::M(m) => Sdk::M(item_to_sdk(m)),
        AttributeValue::Ss(s) => Sdk::Ss(s.iter().cloned().collect()),
        AttributeValue::Ns(s) => Sdk::Ns(s.iter().map(Number::to_string).collect()),
        AttributeValue::Bs(s) => Sdk::Bs(s.iter().map(|b| Blob::new(b.clone())).collect()),
    }
}

pub(crate) fn item_to_sdk(item: &Item) -> HashMap<String, Sdk> {
    item.iter().map(|(k, v)| (k.clone(), to_sdk(v))).collect()
}

fn number(text: &str) -> Result<Number> {
    text.parse().map_err(|e| {
        StoreError::corrupt(
            "an attribute value DynamoDB returned",
            format!("malformed number {text:?}: {e}"),
        )
    })
}

pub(crate) fn from_sdk(value: &Sdk) -> Result<AttributeValue> {
    Ok(match value {
        Sdk::S(s) => AttributeValue::S(s.clone()),
        Sdk::N(n) => AttributeValue::N(number(n)?),
        Sdk::B(b) => AttributeValue::B(b.as_ref().to_vec()),
        Sdk::Bool(b) => AttributeValue::Bool(*b),
        Sdk::Null(_) => AttributeValue::Null,
        Sdk::L(l) => AttributeValue::L(l.iter().map(from_sdk).collect::<Result<_>>()?),
        Sdk::M(m) => AttributeValue::M(item_from_sdk(m)?),
        Sdk::Ss(s) => AttributeValue::Ss(s.iter().cloned().collect()),
        Sdk::Ns(s) => AttributeValue::Ns(s.iter().map(|n| number(n)).collect::<Result<_>>()?),
        Sdk::Bs(s) => AttributeValue::Bs(s.iter().map(|b| b.as_ref().to_vec()).collect()),
        other => {
            return Err(StoreError::corrupt(
                "an attribute value DynamoDB returned",
                format!("unknown type {other:?}"),
            ));
        }
    })
}

pub(crate) fn item_from_sdk(item: &HashMap<String, Sdk>) -> Result<Item> {
    item.iter()
        .map(|(k, v)| Ok((k.clone(), from_sdk(v)?)))
        .collect::<Result<BTreeMap<_, _>>>()
}

/// Whether a stream record is a deletion by Time to Live: DynamoDB marks
/// those with the `userIdentity` `{ type: Service, principalId:
/// dynamodb.amazonaws.com }`.
pub(crate) fn removed_by_ttl(record: &aws_sdk_dynamodbstreams::types::Record) -> bool {
    record.user_identity().is_some_and(|identity| {
        identity.r#type() == Some("Service")
            && identity.principal_id() == Some("dynamodb.amazonaws.com")
    })
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodbstreams::types::{Identity, Record};

    use super::*;

    #[test]
    fn only_the_service_identity_marks_a_ttl_deletion() {
        let by = |kind: &str, principal: &str| {
            Record::builder()
                .user_identity(
                    Identity::builder()
                        .r#type(kind)
                        .principal_id(principal)
                        .build(),
                )
                .build()
        };
        assert!(removed_by_ttl(&by("Service", "dynamodb.amazonaws.com")));
        assert!(!removed_by_ttl(&by("Service", "someone.else")));
        assert!(!removed_by_ttl(&by("User", "dynamodb.amazonaws.com")));
        assert!(!removed_by_ttl(&Record::builder().build()));
    }
}

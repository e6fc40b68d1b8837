//! The webhooks table's layout: the only module of this crate that names an
//! attribute or builds a key.
//!
//! Webhook state lives in a table of its own (`<table>-webhooks`), not in
//! the comments table: delivery records written there never appear on the
//! comments table's change stream (which would wake every consumer for
//! nothing, and feed the webhooks consumer its own writes), and the
//! comments table's layout stays rave-comments' alone.
//!
//! | item      | PK                      | SK               | index keys                                  |
//! |-----------|-------------------------|------------------|---------------------------------------------|
//! | endpoint  | `ENDPOINTS`             | `ENDPOINT#<id>`  | none                                        |
//! | delivery  | `DELIVERIES#<endpoint>` | `<delivery id>`  | while pending: `QUEUE` = endpoint id, `QUEUESK` = delivery id |
//!
//! A delivery id is a ULID made when the change was read, so an endpoint's
//! deliveries sort in stream order; the sparse `pending` index holds only
//! the ones still to send, oldest first, which makes an endpoint's durable
//! position "the first entry of its queue". Finished deliveries expire
//! (`expires_at`, Time to Live) after a retention period.

use rave_store::{
    AttributeValue, Condition, GlobalSecondaryIndex, Item, KeyAttribute, KeyCondition, KeySchema,
    KeyType, Number, Projection, TableDefinition,
};

use crate::delivery::{Delivery, DeliveryStatus};
use crate::endpoint::Endpoint;
use crate::error::Malformed;
use crate::events::EventType;
use crate::signing::Secret;

const PK: &str = "PK";
const SK: &str = "SK";
pub(crate) const QUEUE_INDEX: &str = "pending";
const QUEUE: &str = "QUEUE";
const QUEUE_SK: &str = "QUEUESK";
const EXPIRES_AT: &str = "expires_at";

const ENDPOINTS_PK: &str = "ENDPOINTS";
const ENDPOINT_PREFIX: &str = "ENDPOINT#";
const DELIVERIES_PREFIX: &str = "DELIVERIES#";

const URL: &str = "url";
const EVENTS: &str = "events";
const SECRET: &str = "secret";
const CREATED_AT: &str = "created_at";
const EVENT: &str = "event";
const BODY: &str = "body";
const STATUS: &str = "status";
const ATTEMPTS: &str = "attempts";
const LAST_ERROR: &str = "last_error";
const NEXT_ATTEMPT_AT: &str = "next_attempt_at";
const GIVE_UP_AT: &str = "give_up_at";
const FINISHED_AT: &str = "finished_at";

/// The webhooks table of the comments table `comments_table`.
pub fn table_name(comments_table: &str) -> String {
    format!("{comments_table}-webhooks")
}

pub(crate) fn table_definition(name: &str) -> TableDefinition {
    TableDefinition {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(PK, KeyType::S),
            Some(KeyAttribute::new(SK, KeyType::S)),
        ),
        global_secondary_indexes: vec![GlobalSecondaryIndex {
            name: QUEUE_INDEX.into(),
            key_schema: KeySchema::new(
                KeyAttribute::new(QUEUE, KeyType::S),
                Some(KeyAttribute::new(QUEUE_SK, KeyType::S)),
            ),
            // The worker rereads the item consistently before sending.
            projection: Projection::KeysOnly,
        }],
        stream_enabled: false,
        time_to_live_attribute: Some(EXPIRES_AT.into()),
        local_secondary_indexes: Vec::new(),
    }
}

fn key(pk: String, sk: String) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(pk)),
        (SK.into(), AttributeValue::S(sk)),
    ])
}

fn describe_key(item: &Item) -> String {
    let part = |name| item.get(name).and_then(AttributeValue::as_s).unwrap_or("?");
    format!("{}/{}", part(PK), part(SK))
}

fn malformed(item: &Item, what: impl Into<String>) -> Malformed {
    Malformed {
        key: describe_key(item),
        what: what.into(),
    }
}

fn text<'a>(item: &'a Item, name: &str) -> Result<&'a str, Malformed> {
    item.get(name)
        .and_then(AttributeValue::as_s)
        .ok_or_else(|| malformed(item, format!("{name} is not a string")))
}

fn integer(item: &Item, name: &str) -> Result<i64, Malformed> {
    item.get(name)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .ok_or_else(|| malformed(item, format!("{name} is not an integer")))
}

pub(crate) mod endpoints {
    use super::*;

    /// Every endpoint is in one partition: a Query lists them all.
    pub(crate) fn partition() -> KeyCondition {
        KeyCondition::partition(PK, ENDPOINTS_PK)
    }

    pub(crate) fn key(id: &str) -> Item {
        super::key(ENDPOINTS_PK.into(), format!("{ENDPOINT_PREFIX}{id}"))
    }

    /// The condition that the endpoint a write names is stored.
    pub(crate) fn stored() -> Condition {
        Condition::exists(SK)
    }

    pub(crate) fn encode(endpoint: &Endpoint) -> Item {
        let mut item = key(&endpoint.id);
        item.insert(URL.into(), AttributeValue::s(&endpoint.url));
        item.insert(
            EVENTS.into(),
            AttributeValue::L(
                endpoint
                    .events
                    .iter()
                    .map(|e| AttributeValue::s(e.as_str()))
                    .collect(),
            ),
        );
        item.insert(
            SECRET.into(),
            AttributeValue::s(endpoint.secret.to_string()),
        );
        item.insert(
            CREATED_AT.into(),
            AttributeValue::from(endpoint.created_at_ms),
        );
        item
    }

    pub(crate) fn decode(item: &Item) -> Result<Endpoint, Malformed> {
        let sk = text(item, SK)?;
        let id = sk
            .strip_prefix(ENDPOINT_PREFIX)
            .ok_or_else(|| malformed(item, "SK is not an endpoint's"))?;
        let events = match item.get(EVENTS) {
            Some(AttributeValue::L(values)) => values
                .iter()
                .map(|v| {
                    v.as_s()
                        .and_then(|s| s.parse::<EventType>().ok())
                        .ok_or_else(|| malformed(item, "events holds an unknown event"))
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(malformed(item, "events is not a list")),
        };
        Ok(Endpoint {
            id: id.to_owned(),
            url: text(item, URL)?.to_owned(),
            events,
            secret: Secret::parse(text(item, SECRET)?)
                .map_err(|e| malformed(item, e.to_string()))?,
            created_at_ms: integer(item, CREATED_AT)?,
        })
    }
}

pub(crate) mod deliveries {
    use super::*;

    pub(crate) fn partition(endpoint_id: &str) -> KeyCondition {
        KeyCondition::partition(PK, format!("{DELIVERIES_PREFIX}{endpoint_id}"))
    }

    /// An endpoint's queue of pending deliveries, in the `pending` index.
    pub(crate) fn queue(endpoint_id: &str) -> KeyCondition {
        KeyCondition::partition(QUEUE, endpoint_id)
    }

    pub(crate) fn key(endpoint_id: &str, id: &str) -> Item {
        super::key(format!("{DELIVERIES_PREFIX}{endpoint_id}"), id.to_owned())
    }

    /// The delivery id of a key from the `pending` index or the table.
    pub(crate) fn id_of(item: &Item) -> Result<&str, Malformed> {
        text(item, SK)
    }

    /// The condition that a delivery about to be written is not stored yet:
    /// a batch of the stream read twice writes each delivery once.
    pub(crate) fn not_stored() -> Condition {
        Condition::not_exists(PK)
    }

    /// The condition that the stored delivery still has status `expected`.
    pub(crate) fn still(expected: DeliveryStatus) -> Condition {
        Condition::eq(STATUS, expected.as_str())
    }

    pub(crate) fn encode(delivery: &Delivery) -> Item {
        let mut item = key(&delivery.endpoint_id, &delivery.id);
        let mut set = |name: &str, value: AttributeValue| {
            item.insert(name.into(), value);
        };
        set(EVENT, AttributeValue::s(delivery.event.as_str()));
        set(BODY, AttributeValue::s(&delivery.body));
        set(STATUS, AttributeValue::s(delivery.status.as_str()));
        set(ATTEMPTS, AttributeValue::from(i64::from(delivery.attempts)));
        set(CREATED_AT, AttributeValue::from(delivery.created_at_ms));
        set(
            NEXT_ATTEMPT_AT,
            AttributeValue::from(delivery.next_attempt_at_ms),
        );
        set(GIVE_UP_AT, AttributeValue::from(delivery.give_up_at_ms));
        if let Some(error) = &delivery.last_error {
            set(LAST_ERROR, AttributeValue::s(error));
        }
        if let Some(finished) = delivery.finished_at_ms {
            set(FINISHED_AT, AttributeValue::from(finished));
            set(
                EXPIRES_AT,
                AttributeValue::from(finished / 1000 + delivery.retention_seconds()),
            );
        }
        if delivery.status == DeliveryStatus::Pending {
            set(QUEUE, AttributeValue::s(&delivery.endpoint_id));
            set(QUEUE_SK, AttributeValue::s(&delivery.id));
        }
        item
    }

    pub(crate) fn decode(item: &Item) -> Result<Delivery, Malformed> {
        let pk = text(item, PK)?;
        let endpoint_id = pk
            .strip_prefix(DELIVERIES_PREFIX)
            .ok_or_else(|| malformed(item, "PK is not a delivery's"))?;
        let status = DeliveryStatus::parse(text(item, STATUS)?)
            .ok_or_else(|| malformed(item, "status is unknown"))?;
        let event = text(item, EVENT)?
            .parse::<EventType>()
            .map_err(|e| malformed(item, e.to_string()))?;
        let attempts = u32::try_from(integer(item, ATTEMPTS)?)
            .map_err(|_| malformed(item, "attempts is out of range"))?;
        let finished_at_ms = match item.get(FINISHED_AT) {
            Some(_) => Some(integer(item, FINISHED_AT)?),
            None => None,
        };
        Ok(Delivery {
            endpoint_id: endpoint_id.to_owned(),
            id: text(item, SK)?.to_owned(),
            event,
            body: text(item, BODY)?.to_owned(),
            status,
            attempts,
            last_error: item
                .get(LAST_ERROR)
                .and_then(AttributeValue::as_s)
                .map(str::to_owned),
            created_at_ms: integer(item, CREATED_AT)?,
            next_attempt_at_ms: integer(item, NEXT_ATTEMPT_AT)?,
            give_up_at_ms: integer(item, GIVE_UP_AT)?,
            finished_at_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(status: DeliveryStatus) -> Delivery {
        Delivery {
            endpoint_id: "ep1".into(),
            id: "01J00000000000000000000000".into(),
            event: EventType::Created,
            body: "{}".into(),
            status,
            attempts: 2,
            last_error: Some("HTTP 500".into()),
            created_at_ms: 1_000,
            next_attempt_at_ms: 2_000,
            give_up_at_ms: 3_000,
            finished_at_ms: (status != DeliveryStatus::Pending).then_some(2_500),
        }
    }

    #[test]
    fn deliveries_round_trip_and_only_pending_ones_are_queued() {
        for status in [
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Failed,
        ] {
            let item = deliveries::encode(&delivery(status));
            assert_eq!(deliveries::decode(&item).unwrap(), delivery(status));
            assert_eq!(item.contains_key(QUEUE), status == DeliveryStatus::Pending);
            assert_eq!(
                item.contains_key(EXPIRES_AT),
                status != DeliveryStatus::Pending
            );
        }
    }

    #[test]
    fn endpoints_round_trip() {
        let endpoint = Endpoint {
            id: "ep1".into(),
            url: "https://example.com/hook".into(),
            events: vec![EventType::Created, EventType::Deleted],
            secret: Secret::generate().unwrap(),
            created_at_ms: 5,
        };
        assert_eq!(
            endpoints::decode(&endpoints::encode(&endpoint)).unwrap(),
            endpoint
        );
    }

    #[test]
    fn a_malformed_item_names_its_key() {
        let mut item = deliveries::encode(&delivery(DeliveryStatus::Pending));
        item.insert(STATUS.into(), AttributeValue::s("lost"));
        let error = deliveries::decode(&item).unwrap_err();
        assert_eq!(error.key, "DELIVERIES#ep1/01J00000000000000000000000");
    }
}

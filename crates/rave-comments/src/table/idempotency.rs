//! The idempotency record: which comment a create with a given
//! `Idempotency-Key` made, and a fingerprint of the request that made it.

use rave_store::{AttributeValue, Condition, Item};

use super::{Malformed, PK, text};

const FINGERPRINT: &str = "fingerprint";
const COMMENT_ID: &str = "comment_id";

/// What a create left behind for its retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub fingerprint: String,
    pub comment_id: String,
}

pub(crate) fn key(idempotency_key: &str) -> Item {
    super::key(
        format!("IDEMPOTENCY#{idempotency_key}"),
        "IDEMPOTENCY".to_owned(),
    )
}

/// The first create with a key writes the record; later ones must not.
pub(crate) fn absent() -> Condition {
    Condition::not_exists(PK)
}

pub(crate) fn encode(idempotency_key: &str, record: &Record) -> Item {
    let mut item = key(idempotency_key);
    item.insert(FINGERPRINT.into(), AttributeValue::s(&record.fingerprint));
    item.insert(COMMENT_ID.into(), AttributeValue::s(&record.comment_id));
    item
}

pub(crate) fn decode(item: &Item) -> Result<Record, Malformed> {
    Ok(Record {
        fingerprint: text(item, FINGERPRINT)?.to_owned(),
        comment_id: text(item, COMMENT_ID)?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_a_malformed_record() {
        let record = Record {
            fingerprint: "f".into(),
            comment_id: "c".into(),
        };
        let mut item = encode("k", &record);
        assert_eq!(decode(&item).unwrap(), record);
        item.remove(COMMENT_ID);
        assert_eq!(decode(&item).unwrap_err().key, "IDEMPOTENCY#k/IDEMPOTENCY");
    }
}

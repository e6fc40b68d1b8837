//! The idempotency record: which comment a create with a given
//! `Idempotency-Key` made, and a fingerprint of the request that made it.
//! It carries the table's Time to Live attribute, so the store deletes it
//! once it expires; a create with the same key after that is a new create.

use rave_store::{AttributeValue, Condition, Item};

use super::{Malformed, PK, text};

const FINGERPRINT: &str = "fingerprint";
const COMMENT_ID: &str = "comment_id";
/// The table's Time to Live attribute: epoch seconds after which the store
/// may delete the item.
pub(super) const EXPIRES_AT: &str = "expires_at";

/// What a create left behind for its retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub fingerprint: String,
    pub comment_id: String,
    /// Epoch seconds.
    pub expires_at: u64,
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
    item.insert(EXPIRES_AT.into(), super::number(record.expires_at));
    item
}

pub(crate) fn decode(item: &Item) -> Result<Record, Malformed> {
    Ok(Record {
        fingerprint: text(item, FINGERPRINT)?.to_owned(),
        comment_id: text(item, COMMENT_ID)?.to_owned(),
        expires_at: super::count(item, EXPIRES_AT)?,
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
            expires_at: 1_790_000_000,
        };
        let mut item = encode("k", &record);
        assert_eq!(decode(&item).unwrap(), record);
        item.remove(COMMENT_ID);
        assert_eq!(decode(&item).unwrap_err().key, "IDEMPOTENCY#k/IDEMPOTENCY");
    }
}

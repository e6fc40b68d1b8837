//! Time to Live, as DynamoDB defines it: an item whose TTL attribute holds
//! a Number of epoch seconds earlier than now has expired, and is deleted
//! in the background, through the writer like any delete, with a REMOVE
//! stream record marked as made by TTL. Until then it is still read,
//! queried and scanned. A TTL attribute that is not a Number, or whose
//! value lies more than five years in the past, never expires the item.
//!
//! `Engine::update_time_to_live` and `describe_time_to_live` follow
//! DynamoDB's UpdateTimeToLive and DescribeTimeToLive: enabling needs TTL
//! disabled, disabling names the enabled attribute, and changing the
//! attribute is a disable then an enable. The engine applies a change at
//! once, so DynamoDB's hour between two changes has nothing to wait for.
//!
//! This module holds the rules and the API's types; the deleting is the
//! write path's: the queue of items by TTL value (`write::expiries`), the
//! sweeper thread that reads the expired ones off it (`write::sweeper`)
//! and the writer's deletion of those still expired when it commits
//! (`write::expire`).

use rave_store::{AttributeValue, Item, Number, Result, StoreError, valid_time_to_live_attribute};

/// TTL values further in the past than this never expire an item.
const NEVER_EXPIRES_AFTER_SECONDS: u64 = 5 * 365 * 24 * 60 * 60;

/// Whether Time to Live is on for a table (DescribeTimeToLive's
/// `TimeToLiveStatus`). A table that had items when TTL was enabled is
/// `Enabling` while its queue fills from them (`write::expiries`); a
/// disable applies at once, so it is never DISABLING.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeToLiveStatus {
    Enabling,
    Enabled,
    Disabled,
}

/// DescribeTimeToLive's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeToLiveDescription {
    pub status: TimeToLiveStatus,
    /// The TTL attribute while TTL is enabled.
    pub attribute_name: Option<String>,
}

/// UpdateTimeToLive's request (DynamoDB's `TimeToLiveSpecification`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeToLiveSpecification {
    pub attribute_name: String,
    pub enabled: bool,
}

/// The TTL attribute a table has after `change`, under DynamoDB's rules:
/// TTL is enabled only when disabled, and disabled only when enabled on the
/// same attribute, so changing the attribute takes a disable and an enable.
/// (DynamoDB also refuses a second change within the hour the first takes
/// to spread through its fleet; the engine applies a change at once, and
/// has no such delay to wait for.)
pub(crate) fn changed_attribute(
    current: Option<&str>,
    change: &TimeToLiveSpecification,
) -> Result<Option<String>> {
    valid_time_to_live_attribute(&change.attribute_name).map_err(StoreError::Validation)?;
    match (current, change.enabled) {
        (None, true) => Ok(Some(change.attribute_name.clone())),
        (Some(_), true) => Err(StoreError::validation("TimeToLive is already enabled")),
        (None, false) => Err(StoreError::validation("TimeToLive is already disabled")),
        (Some(attribute), false) if attribute == change.attribute_name => Ok(None),
        (Some(attribute), false) => Err(StoreError::validation(format!(
            "TimeToLive is enabled on attribute {attribute}, not {}",
            change.attribute_name
        ))),
    }
}

/// The value of `item`'s TTL attribute if it has expired the item at
/// `now_ms`.
pub(crate) fn expired_value(item: &Item, attribute: &str, now_ms: u64) -> Option<Number> {
    let AttributeValue::N(value) = item.get(attribute)? else {
        return None;
    };
    let (oldest, now) = expiry_window(now_ms)?;
    (*value < now && *value >= oldest).then_some(*value)
}

/// The TTL values that have expired an item at `now_ms`: from the first
/// (included) to the second (excluded), in epoch seconds.
pub(crate) fn expiry_window(now_ms: u64) -> Option<(Number, Number)> {
    let now = Number::from_parts(false, u128::from(now_ms), -3).ok()?;
    let oldest_ms = now_ms.saturating_sub(NEVER_EXPIRES_AFTER_SECONDS * 1000);
    let oldest = Number::from_parts(false, u128::from(oldest_ms), -3).ok()?;
    Some((oldest, now))
}

/// An item found expired: its stored key and the TTL value that expired it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expired {
    pub(crate) key: Vec<u8>,
    pub(crate) value: Number,
}

#[cfg(test)]
mod tests {
    use rave_store::item;

    use super::*;

    const NOW_MS: u64 = 1_700_000_000_000;

    fn expired(value: AttributeValue) -> bool {
        expired_value(&item! {"PK" => "a", "ttl" => value}, "ttl", NOW_MS).is_some()
    }

    fn seconds(text: &str) -> AttributeValue {
        AttributeValue::N(text.parse().expect("a number"))
    }

    #[test]
    fn only_numbers_in_the_past_five_years_expire() {
        assert!(expired(seconds("1699999999")));
        assert!(expired(seconds("1699999999.999")));
        assert!(!expired(seconds("1700000000")), "now is not yet expired");
        assert!(!expired(seconds("1700000001")));
        let five_years = NEVER_EXPIRES_AFTER_SECONDS;
        assert!(expired(seconds(&(1_700_000_000 - five_years).to_string())));
        assert!(!expired(seconds(
            &(1_700_000_000 - five_years - 1).to_string()
        )));
        assert!(!expired(AttributeValue::S("1".into())));
        assert!(!expired(AttributeValue::Ns([Number::from(1i64)].into())));
        assert!(
            expired_value(&item! {"PK" => "a"}, "ttl", NOW_MS).is_none(),
            "no attribute, no expiry"
        );
    }

    #[test]
    fn changes_follow_dynamodbs_rules() {
        let enable = |name: &str| TimeToLiveSpecification {
            attribute_name: name.into(),
            enabled: true,
        };
        let disable = |name: &str| TimeToLiveSpecification {
            attribute_name: name.into(),
            enabled: false,
        };
        assert_eq!(
            changed_attribute(None, &enable("ttl")),
            Ok(Some("ttl".into()))
        );
        assert_eq!(changed_attribute(Some("ttl"), &disable("ttl")), Ok(None));
        for refused in [
            changed_attribute(Some("ttl"), &enable("ttl")),
            changed_attribute(Some("ttl"), &enable("other")),
            changed_attribute(Some("ttl"), &disable("other")),
            changed_attribute(None, &disable("ttl")),
            changed_attribute(None, &enable("")),
        ] {
            assert!(
                matches!(refused, Err(StoreError::Validation(_))),
                "{refused:?}"
            );
        }
    }
}

//! The moderation figures: partial items (`MODERATION#FIGURES#<slot>` /
//! `FIGURES`, 16 of them), each the net change of the aggregator commits
//! that wrote it, summed on read, as the global totals are (`totals`): a
//! commit picks a slot at random, so aggregators seldom contend on one.
//!
//! A partial holds reports by reason, holds by rule, the comments that
//! entered and left the queue (pending and flagged), and decision times as
//! a histogram: a map from a duration's bucket (its first second, as
//! digits) to how many decisions took it. Buckets are one second wide below
//! ten minutes, one minute wide below a day and one hour wide beyond, so
//! the median is exact to that width while an item holds at most a few
//! thousand buckets a year (a DynamoDB item holds 400 KB).

use std::collections::BTreeMap;

use rave_store::{AttributeValue, Item, Number};

use crate::reports::ReportReason;
use crate::table::{Malformed, signed};

const PK_PREFIX: &str = "MODERATION#FIGURES";
const SORT_KEY: &str = "FIGURES";
/// How many partial items there are.
const SLOTS: u128 = 16;

const REPORTS: &str = "reports";
const HOLDS: &str = "holds";
const PENDING: &str = "pending";
const FLAGGED: &str = "flagged";
const DECISIONS: &str = "decisions";

/// One partial of the figures; every count is signed (a comment can enter
/// the queue in one partial and leave it in another), only sums mean
/// anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FiguresPart {
    pub(crate) reports: BTreeMap<ReportReason, i64>,
    pub(crate) holds: BTreeMap<String, i64>,
    pub(crate) pending: i64,
    pub(crate) flagged: i64,
    /// Decisions by the first second of their duration's bucket.
    pub(crate) decisions: BTreeMap<u64, i64>,
}

impl FiguresPart {
    pub(crate) fn add(&mut self, other: &FiguresPart) {
        for (reason, n) in &other.reports {
            *self.reports.entry(*reason).or_default() += n;
        }
        for (rule, n) in &other.holds {
            *self.holds.entry(rule.clone()).or_default() += n;
        }
        self.pending += other.pending;
        self.flagged += other.flagged;
        for (bucket, n) in &other.decisions {
            *self.decisions.entry(*bucket).or_default() += n;
        }
    }

    /// Drops the entries that add nothing.
    pub(crate) fn prune(&mut self) {
        self.reports.retain(|_, n| *n != 0);
        self.holds.retain(|_, n| *n != 0);
        self.decisions.retain(|_, n| *n != 0);
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.reports.values().all(|n| *n == 0)
            && self.holds.values().all(|n| *n == 0)
            && self.pending == 0
            && self.flagged == 0
            && self.decisions.values().all(|n| *n == 0)
    }
}

/// The bucket a decision that took `seconds` is counted in: its first
/// second.
pub(crate) fn bucket(seconds: u64) -> u64 {
    const TEN_MINUTES: u64 = 600;
    const DAY: u64 = 86_400;
    match seconds {
        s if s < TEN_MINUTES => s,
        s if s < DAY => s - s % 60,
        s => s - s % 3_600,
    }
}

/// A slot for a commit: any will do, a random one seldom meets another
/// aggregator's.
pub(crate) fn random_slot() -> usize {
    (ulid::Ulid::generate().random() % SLOTS) as usize
}

pub(crate) fn key(slot: usize) -> Item {
    crate::table::key(format!("{PK_PREFIX}#{slot}"), SORT_KEY.to_owned())
}

/// Every partial a reader sums.
pub(crate) fn all_keys() -> Vec<Item> {
    (0..SLOTS as usize).map(key).collect()
}

/// The counts that are not zero as a map, or `None` when all are: an
/// empty map is left out of the item (DynamoDB Local's streams cannot
/// carry one), and an absent map reads as all zero.
fn signed_map<K: ToString>(counts: impl Iterator<Item = (K, i64)>) -> Option<AttributeValue> {
    let counts: BTreeMap<String, AttributeValue> = counts
        .filter(|(_, n)| *n != 0)
        .map(|(k, n)| (k.to_string(), AttributeValue::N(Number::from(n))))
        .collect();
    (!counts.is_empty()).then_some(AttributeValue::M(counts))
}

pub(crate) fn encode(slot: usize, part: &FiguresPart) -> Item {
    let mut item = key(slot);
    let maps = [
        (
            REPORTS,
            signed_map(part.reports.iter().map(|(r, n)| (r.as_str(), *n))),
        ),
        (
            HOLDS,
            signed_map(part.holds.iter().map(|(r, n)| (r.as_str(), *n))),
        ),
        (
            DECISIONS,
            signed_map(part.decisions.iter().map(|(b, n)| (b, *n))),
        ),
    ];
    for (name, counts) in maps {
        if let Some(counts) = counts {
            item.insert(name.into(), counts);
        }
    }
    item.insert(
        PENDING.into(),
        AttributeValue::N(Number::from(part.pending)),
    );
    item.insert(
        FLAGGED.into(),
        AttributeValue::N(Number::from(part.flagged)),
    );
    item
}

fn decode_map<K: Ord>(
    item: &Item,
    name: &str,
    key: impl Fn(&str) -> Option<K>,
) -> Result<BTreeMap<K, i64>, Malformed> {
    let bad = || Malformed::new(item, format!("{name} is not a map of counts"));
    let map = match item.get(name) {
        None => return Ok(BTreeMap::new()),
        Some(AttributeValue::M(map)) => map,
        Some(_) => return Err(bad()),
    };
    map.iter()
        .map(|(k, v)| {
            let n = v.as_n().and_then(Number::to_i64).ok_or_else(bad)?;
            Ok((key(k).ok_or_else(bad)?, n))
        })
        .collect()
}

pub(crate) fn decode(item: &Item) -> Result<FiguresPart, Malformed> {
    Ok(FiguresPart {
        reports: decode_map(item, REPORTS, |r| ReportReason::parse(r).ok())?,
        holds: decode_map(item, HOLDS, |r| Some(r.to_owned()))?,
        pending: signed(item, PENDING)?,
        flagged: signed(item, FLAGGED)?,
        decisions: decode_map(item, DECISIONS, |b| b.parse().ok())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::describe_key;

    #[test]
    fn a_partial_round_trips_and_partials_sum() {
        let part = FiguresPart {
            reports: [(ReportReason::Spam, 3), (ReportReason::Fake, -1)].into(),
            holds: [("too_many_links".to_owned(), 2)].into(),
            pending: -1,
            flagged: 4,
            decisions: [(5, 1), (660, 2)].into(),
        };
        let item = encode(3, &part);
        assert_eq!(describe_key(&item), "MODERATION#FIGURES#3/FIGURES");
        assert_eq!(decode(&item).unwrap(), part);
        let mut sum = part.clone();
        sum.add(&part);
        assert_eq!(sum.reports[&ReportReason::Spam], 6);
        assert_eq!(sum.decisions[&660], 4);
        let mut undone = sum.clone();
        let mut negated = part.clone();
        negated.reports.values_mut().for_each(|n| *n *= -2);
        negated.holds.values_mut().for_each(|n| *n *= -2);
        negated.decisions.values_mut().for_each(|n| *n *= -2);
        negated.pending = -2 * part.pending;
        negated.flagged = -2 * part.flagged;
        undone.add(&negated);
        assert!(undone.is_zero());
        undone.prune();
        assert_eq!(undone, FiguresPart::default());
        let empty = encode(0, &FiguresPart::default());
        assert!(
            ![REPORTS, HOLDS, DECISIONS]
                .iter()
                .any(|m| empty.contains_key(*m))
        );
        assert_eq!(decode(&empty).unwrap(), FiguresPart::default());
        let mut broken = item;
        broken.insert(DECISIONS.into(), AttributeValue::s("many"));
        assert!(decode(&broken).unwrap_err().what.contains(DECISIONS));
    }

    #[test]
    fn buckets_are_seconds_then_minutes_then_hours() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(599), 599);
        assert_eq!(bucket(601), 600);
        assert_eq!(bucket(3_659), 3_600);
        assert_eq!(bucket(86_399), 86_340);
        assert_eq!(bucket(89_999), 86_400);
        assert_eq!(bucket(90_000), 90_000);
        assert_eq!(all_keys().len(), 16);
    }
}

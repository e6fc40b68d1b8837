//! The answers to a product's attributes, counted on its statistics items
//! (overall and per language) beside the star counts: one map, `attributes`,
//! from attribute name to a map from answer (a rating's digit `1`–`5`, a
//! choice's name; `AttributeAnswer::key`) to how many counted comments gave
//! it. A count of zero is not stored, and an item without answers has no
//! map, so items written before attributes existed read (and compare) as
//! counting none. The distribution is exact; an average is worked out from
//! it when read.

use std::collections::BTreeMap;

use rave_store::{AttributeRef, AttributeValue, Item, ItemView};

use crate::attributes::{AttributeAnswer, AttributeAnswers, AttributeName};
use crate::table::{Malformed, number};

const ATTRIBUTES: &str = "attributes";

/// Counted comments by attribute and answer; `T` is `i64` for the
/// differences a batch of changes makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AttributeCounts<T = u64>(
    pub(crate) BTreeMap<AttributeName, BTreeMap<AttributeAnswer, T>>,
);

impl<T: Copy + Default + PartialEq + std::ops::AddAssign> AttributeCounts<T> {
    /// What one comment's answers count for: `one` (1, or -1) each.
    pub(crate) fn of_answers(answers: &AttributeAnswers, one: T) -> AttributeCounts<T> {
        let mut counts = AttributeCounts::default();
        for (name, answer) in answers.iter() {
            counts
                .0
                .entry(name.clone())
                .or_default()
                .insert(answer.clone(), one);
        }
        counts
    }

    pub(crate) fn is_zero(&self) -> bool {
        let zero = T::default();
        self.0.values().flatten().all(|(_, count)| *count == zero)
    }

    pub(crate) fn add(&mut self, other: &AttributeCounts<T>) {
        for (name, answers) in &other.0 {
            let counts = self.0.entry(name.clone()).or_default();
            for (answer, count) in answers {
                *counts.entry(answer.clone()).or_default() += *count;
            }
        }
    }
}

impl AttributeCounts {
    /// These counts moved by `delta`, never below zero (as every count the
    /// aggregator keeps), zeros dropped.
    pub(crate) fn moved(&self, delta: &AttributeCounts<i64>) -> AttributeCounts {
        let mut moved = self.clone();
        for (name, answers) in &delta.0 {
            let counts = moved.0.entry(name.clone()).or_default();
            for (answer, d) in answers {
                let count = counts.entry(answer.clone()).or_default();
                *count = (*count as i64 + d).max(0) as u64;
            }
        }
        moved.without_zeros()
    }

    fn without_zeros(mut self) -> AttributeCounts {
        for answers in self.0.values_mut() {
            answers.retain(|_, count| *count > 0);
        }
        self.0.retain(|_, answers| !answers.is_empty());
        self
    }
}

/// Stores `counts` on a statistics item (nothing when there are none).
pub(crate) fn encode(item: &mut Item, counts: &AttributeCounts) {
    let counts = counts.clone().without_zeros();
    if counts.0.is_empty() {
        return;
    }
    let map = counts
        .0
        .iter()
        .map(|(name, answers)| {
            let answers = answers
                .iter()
                .map(|(answer, count)| (answer.key(), number(*count)))
                .collect();
            (name.as_str().to_owned(), AttributeValue::M(answers))
        })
        .collect();
    item.insert(ATTRIBUTES.into(), AttributeValue::M(map));
}

/// The counts a statistics item stores (none when it has no map).
pub(crate) fn decode(item: &(impl ItemView + ?Sized)) -> Result<AttributeCounts, Malformed> {
    let Some(value) = item.attribute(ATTRIBUTES) else {
        return Ok(AttributeCounts::default());
    };
    let bad = |what: String| Malformed::new(item, format!("{ATTRIBUTES}{what} is not valid"));
    let AttributeRef::Other(AttributeValue::M(map)) = value else {
        return Err(bad(String::new()));
    };
    let mut counts = AttributeCounts::default();
    for (name, answers) in map {
        let at = format!(".{name}");
        let parsed = AttributeName::parse(name).map_err(|_| bad(at.clone()))?;
        let AttributeValue::M(answers) = answers else {
            return Err(bad(at));
        };
        let mut by_answer = BTreeMap::new();
        for (key, count) in answers {
            let at = format!("{at}.{key}");
            let answer = AttributeAnswer::from_key(key).ok_or_else(|| bad(at.clone()))?;
            let count = count
                .as_n()
                .and_then(|n| n.to_i64())
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| bad(at))?;
            by_answer.insert(answer, count);
        }
        counts.0.insert(parsed, by_answer);
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::test_answers;

    #[test]
    fn answers_count_round_trip_and_zeros_are_not_stored() {
        let mut counts = AttributeCounts::of_answers(&test_answers(), 1u64);
        counts.add(&AttributeCounts::of_answers(&test_answers(), 1));
        let mut item = Item::new();
        encode(&mut item, &counts);
        assert_eq!(decode(&item).unwrap(), counts);
        let quality = AttributeName::parse("quality").unwrap();
        let four = counts.0[&quality].keys().next().unwrap().clone();
        assert_eq!(counts.0[&quality][&four], 2);
        let gone = counts.moved(&AttributeCounts::of_answers(&test_answers(), -2));
        assert_eq!(gone, AttributeCounts::default());
        let mut empty = Item::new();
        encode(&mut empty, &gone);
        assert!(!empty.contains_key(ATTRIBUTES), "absent when none");
        assert_eq!(decode(&empty).unwrap(), AttributeCounts::default());
        let too_many = counts.moved(&AttributeCounts::of_answers(&test_answers(), -5));
        assert_eq!(too_many, AttributeCounts::default(), "never below zero");
    }

    #[test]
    fn differences_that_cancel_are_zero() {
        let mut delta = AttributeCounts::of_answers(&test_answers(), 1i64);
        assert!(!delta.is_zero());
        delta.add(&AttributeCounts::of_answers(&test_answers(), -1));
        assert!(delta.is_zero());
    }

    #[test]
    fn a_malformed_count_names_its_place() {
        let mut item = Item::new();
        encode(&mut item, &AttributeCounts::of_answers(&test_answers(), 1));
        let Some(AttributeValue::M(map)) = item.get_mut(ATTRIBUTES) else {
            unreachable!("encoded as a map")
        };
        map.insert(
            "fit".into(),
            AttributeValue::M([("Huge".to_owned(), number(1))].into()),
        );
        let error = decode(&item).unwrap_err();
        assert!(error.what.contains("attributes.fit.Huge"), "{error}");
    }
}

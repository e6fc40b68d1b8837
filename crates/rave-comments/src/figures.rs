//! The moderation figures as staff read them: the partial items the
//! aggregator keeps (`table::stats::moderation`), summed, with the median
//! time to a decision worked out from their histogram.

use std::collections::BTreeMap;

use rave_store::Store;

use crate::access::TableAccess;
use crate::error::Result;
use crate::reports::ReportReason;
use crate::table::stats::moderation::{self, FiguresPart};

/// What moderation has seen since the figures were kept: every count exact
/// (each change applied once by the aggregator, as the statistics are).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModerationFigures {
    /// Reports by reason, every report counted.
    pub reports_by_reason: BTreeMap<ReportReason, u64>,
    /// Comments held, by the rule (or `moderation_hook`) that held them.
    pub holds_by_rule: BTreeMap<String, u64>,
    /// Comments waiting now: pending, and flagged.
    pub pending: u64,
    pub flagged: u64,
    /// Decisions taken: a queued comment published or deleted.
    pub decisions: u64,
    /// The median time from entering the queue to the decision, in seconds
    /// (exact to the second below ten minutes, to the minute below a day,
    /// to the hour beyond); `None` before the first decision.
    pub median_decision_seconds: Option<f64>,
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The median of a histogram of values (each bucket's first second) with
/// their counts: the middle value, or the mean of the two middle ones.
fn median(histogram: &BTreeMap<u64, u64>) -> Option<f64> {
    let total: u64 = histogram.values().sum();
    if total == 0 {
        return None;
    }
    // The values at 1-based ranks `low` and `high` of the sorted list.
    let (low, high) = (total.div_ceil(2), total / 2 + 1);
    let mut seen = 0;
    let (mut at_low, mut at_high) = (None, None);
    for (value, n) in histogram {
        seen += n;
        if at_low.is_none() && seen >= low {
            at_low = Some(*value);
        }
        if seen >= high {
            at_high = Some(*value);
            break;
        }
    }
    Some((at_low? + at_high?) as f64 / 2.0)
}

pub(crate) async fn read<S: Store>(access: &TableAccess<S>) -> Result<ModerationFigures> {
    let mut sum = FiguresPart::default();
    for item in access.get_many(&moderation::all_keys()).await? {
        sum.add(&moderation::decode(&item)?);
    }
    let decisions: BTreeMap<u64, u64> = sum
        .decisions
        .iter()
        .map(|(bucket, n)| (*bucket, count(*n)))
        .filter(|(_, n)| *n > 0)
        .collect();
    Ok(ModerationFigures {
        reports_by_reason: sum
            .reports
            .iter()
            .map(|(reason, n)| (*reason, count(*n)))
            .collect(),
        holds_by_rule: sum
            .holds
            .iter()
            .map(|(rule, n)| (rule.clone(), count(*n)))
            .filter(|(_, n)| *n > 0)
            .collect(),
        pending: count(sum.pending),
        flagged: count(sum.flagged),
        decisions: decisions.values().sum(),
        median_decision_seconds: median(&decisions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value_or_the_mean_of_the_two() {
        assert_eq!(median(&BTreeMap::new()), None);
        assert_eq!(median(&[(7, 1)].into()), Some(7.0));
        assert_eq!(median(&[(1, 1), (3, 1), (9, 1)].into()), Some(3.0));
        assert_eq!(median(&[(1, 2), (3, 1), (9, 1)].into()), Some(2.0));
        assert_eq!(median(&[(1, 1), (60, 5), (600, 1)].into()), Some(60.0));
        assert_eq!(median(&[(10, 2), (20, 2)].into()), Some(15.0));
    }
}

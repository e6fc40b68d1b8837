//! What a change of a comment adds to the moderation figures
//! (`table::stats::moderation`): the reports it gained, by reason (an
//! approval clears a comment's reports, which takes nothing back), the rule
//! that held it, its entering or leaving the queue, and the time a
//! decision took: from when it entered the queue to the commit that
//! published or deleted it (an approval, a rejection, a deletion).
//!
//! Everything here is a function of the record's two images and its commit
//! time, so a record applied with `sign` -1 takes back exactly what it
//! added (the aggregator does so with the record that did not fit a
//! commit).

use rave_store::ChangeRecord;

use crate::model::{Comment, Status};
use crate::reports::ReportReason;
use crate::table::stats::moderation::{FiguresPart, bucket};
use crate::table::{ItemKind, Malformed, comment};

/// The comment an image holds, if it is a comment's (not a vote's).
fn comment_of(image: Option<&rave_store::Item>) -> Result<Option<Comment>, Malformed> {
    match image {
        Some(item) if ItemKind::of(item) == ItemKind::Comment => Ok(Some(comment::decode(item)?)),
        _ => Ok(None),
    }
}

fn queued(comment: Option<&Comment>) -> Option<&Comment> {
    comment.filter(|c| c.status != Status::Published)
}

/// Adds what `record` means to the figures to `part`, times `sign`.
pub(super) fn add(
    part: &mut FiguresPart,
    record: &ChangeRecord,
    sign: i64,
) -> Result<(), Malformed> {
    let before = comment_of(record.old_image.as_ref())?;
    let after = comment_of(record.new_image.as_ref())?;
    if before.is_none() && after.is_none() {
        return Ok(());
    }
    for (comment, side) in [(&before, -sign), (&after, sign)] {
        match comment.as_ref().map(|c| c.status) {
            Some(Status::Pending) => part.pending += side,
            Some(Status::Flagged) => part.flagged += side,
            _ => {}
        }
    }
    for reason in ReportReason::ALL {
        let was = before.as_ref().map_or(0, |c| c.reports.count(reason));
        let is = after.as_ref().map_or(0, |c| c.reports.count(reason));
        if is > was {
            *part.reports.entry(reason).or_default() += sign * (is - was) as i64;
        }
    }
    if let Some(rule) = after.as_ref().and_then(|c| c.held_by.as_ref())
        && before.as_ref().and_then(|c| c.held_by.as_ref()) != Some(rule)
    {
        *part.holds.entry(rule.clone()).or_default() += sign;
    }
    let decided = after.as_ref().is_none_or(|c| c.status == Status::Published);
    if let Some(left) = queued(before.as_ref())
        && decided
    {
        // Comments queued before the time was kept count from creation.
        let since = left.queued_at.unwrap_or(left.created_at).millis();
        let took_ms = (record.commit_time_ms as i64).saturating_sub(since).max(0);
        *part
            .decisions
            .entry(bucket(took_ms as u64 / 1000))
            .or_default() += sign;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Timestamp;
    use crate::reports::Report;

    use crate::model::sample_comment as comment;

    fn record(old: Option<&Comment>, new: Option<&Comment>, at_ms: u64) -> ChangeRecord {
        ChangeRecord {
            old_image: old.map(|c| comment::encode(c, 1)),
            new_image: new.map(|c| comment::encode(c, 2)),
            commit_time_ms: at_ms,
            removed_by_ttl: false,
        }
    }

    #[test]
    fn a_hold_a_report_and_a_decision_are_counted_and_undone_exactly() {
        let mut held = comment(Status::Pending);
        held.held_by = Some("too_many_links".into());
        held.queued_at = Some(Timestamp::from_millis(1_700_000_010_000).unwrap());
        let mut part = FiguresPart::default();
        let created = record(None, Some(&held), 1_700_000_010_000);
        add(&mut part, &created, 1).unwrap();
        assert_eq!(part.pending, 1);
        assert_eq!(part.holds["too_many_links"], 1);

        let published = comment(Status::Published);
        let mut flagged = published.clone();
        flagged.status = Status::Flagged;
        flagged.queued_at = Some(Timestamp::from_millis(1_700_000_020_000).unwrap());
        for reason in [ReportReason::Spam, ReportReason::Spam, ReportReason::Fake] {
            flagged.reports.record(Report::new(reason, None).unwrap());
        }
        add(&mut part, &record(Some(&published), Some(&flagged), 1), 1).unwrap();
        assert_eq!(part.flagged, 1);
        assert_eq!(part.reports[&ReportReason::Spam], 2);
        // Approved 90 s after the flag: the reports go, the counts stay.
        let approve = record(Some(&flagged), Some(&published), 1_700_000_110_000);
        add(&mut part, &approve, 1).unwrap();
        assert_eq!(part.flagged, 0);
        assert_eq!(part.reports[&ReportReason::Spam], 2);
        assert_eq!(part.decisions[&90], 1);
        // Rejected (deleted) 5 s after it was held.
        let reject = record(Some(&held), None, 1_700_000_015_000);
        add(&mut part, &reject, 1).unwrap();
        assert_eq!(part.pending, 0);
        assert_eq!(part.decisions[&5], 1);
        // A vote count's rewrite of a published comment is nothing here.
        let mut voted = published.clone();
        voted.votes.helpful = 1;
        let before = part.clone();
        add(&mut part, &record(Some(&published), Some(&voted), 9), 1).unwrap();
        assert_eq!(part, before);
        for r in [&reject, &approve, &created] {
            add(&mut part, r, -1).unwrap();
        }
        add(&mut part, &record(Some(&published), Some(&flagged), 1), -1).unwrap();
        assert!(part.is_zero(), "{part:?}");
    }
}

//! Readers' reports of a comment: why they flagged it (one of five reasons,
//! as Coral's report flow asks) and, optionally, a short note.
//!
//! A comment keeps its reports since the last moderator's decision: the
//! count of each reason and the latest few notes, in the comment item's
//! `details` map (`table::comment`), which every listing index projects, so
//! the moderation queue shows them with no second read. An approval clears
//! them (the moderator has judged them); the moderation figures keep the
//! totals (`aggregator`), counted from the change stream.

use std::collections::BTreeMap;

use crate::error::CommentsError;

/// Why a reader reported a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReportReason {
    Spam,
    Offensive,
    OffTopic,
    Fake,
    /// Anything else, and a report that gives no reason.
    Other,
}

impl ReportReason {
    pub const ALL: [ReportReason; 5] = [
        ReportReason::Spam,
        ReportReason::Offensive,
        ReportReason::OffTopic,
        ReportReason::Fake,
        ReportReason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReportReason::Spam => "spam",
            ReportReason::Offensive => "offensive",
            ReportReason::OffTopic => "off_topic",
            ReportReason::Fake => "fake",
            ReportReason::Other => "other",
        }
    }

    /// One of the five names; anything else is an error naming `reason`.
    pub fn parse(value: &str) -> Result<ReportReason, CommentsError> {
        ReportReason::ALL
            .into_iter()
            .find(|reason| reason.as_str() == value)
            .ok_or_else(|| CommentsError::Invalid {
                field: "reason",
                message: "must be spam, offensive, off_topic, fake or other".into(),
            })
    }
}

/// The longest note a report may carry, in characters: a sentence or two
/// for the moderator, not a second review.
pub const MAX_NOTE_CHARS: usize = 500;

/// How many notes a comment keeps: the latest ones. Every listing entry
/// copies them, so they stay few; the counts keep every report.
pub const KEPT_NOTES: usize = 3;

/// One reader's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub reason: ReportReason,
    /// What the reader added, if anything (never empty).
    pub note: Option<String>,
}

impl Report {
    /// A report, its note checked: at most [`MAX_NOTE_CHARS`] characters,
    /// no control characters but line breaks; a blank note is no note.
    pub fn new(reason: ReportReason, note: Option<&str>) -> Result<Report, CommentsError> {
        let note = note.map(str::trim).filter(|note| !note.is_empty());
        if let Some(note) = note {
            let bad = |message: &str| CommentsError::Invalid {
                field: "note",
                message: message.into(),
            };
            if note.chars().count() > MAX_NOTE_CHARS {
                return Err(bad("must be at most 500 characters"));
            }
            if note.chars().any(|c| c.is_control() && c != '\n') {
                return Err(bad("must not hold control characters"));
            }
        }
        Ok(Report {
            reason,
            note: note.map(str::to_owned),
        })
    }
}

/// A comment's reports since the last decision on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reports {
    /// Reports by reason; a reason nobody gave is absent.
    pub counts: BTreeMap<ReportReason, u64>,
    /// The latest notes, oldest first, at most [`KEPT_NOTES`].
    pub notes: Vec<Report>,
}

impl Reports {
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn count(&self, reason: ReportReason) -> u64 {
        self.counts.get(&reason).copied().unwrap_or(0)
    }

    /// Counts one more report, and keeps its note among the latest.
    pub(crate) fn record(&mut self, report: Report) {
        *self.counts.entry(report.reason).or_default() += 1;
        if report.note.is_some() {
            self.notes.push(report);
            let excess = self.notes.len().saturating_sub(KEPT_NOTES);
            self.notes.drain(..excess);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_parse_by_name_and_an_unknown_one_names_the_field() {
        for reason in ReportReason::ALL {
            assert_eq!(ReportReason::parse(reason.as_str()).unwrap(), reason);
        }
        let error = ReportReason::parse("rude").unwrap_err();
        assert!(matches!(
            error,
            CommentsError::Invalid {
                field: "reason",
                ..
            }
        ));
    }

    #[test]
    fn notes_are_bounded_trimmed_and_free_of_control_characters() {
        let long = "x".repeat(MAX_NOTE_CHARS + 1);
        for bad in [long.as_str(), "a\u{7}b"] {
            let error = Report::new(ReportReason::Spam, Some(bad)).unwrap_err();
            assert!(matches!(
                error,
                CommentsError::Invalid { field: "note", .. }
            ));
        }
        let fine = "é".repeat(MAX_NOTE_CHARS);
        assert!(Report::new(ReportReason::Spam, Some(&fine)).is_ok());
        assert_eq!(
            Report::new(ReportReason::Fake, Some("  \n ")).unwrap().note,
            None
        );
        assert_eq!(
            Report::new(ReportReason::Fake, Some(" two\nlines "))
                .unwrap()
                .note,
            Some("two\nlines".into())
        );
    }

    #[test]
    fn every_report_is_counted_and_only_the_latest_notes_kept() {
        let mut reports = Reports::default();
        for n in 0..5 {
            reports.record(Report::new(ReportReason::Spam, Some(&format!("n{n}"))).unwrap());
        }
        reports.record(Report::new(ReportReason::Other, None).unwrap());
        assert_eq!(reports.count(ReportReason::Spam), 5);
        assert_eq!(reports.count(ReportReason::Other), 1);
        assert_eq!(reports.count(ReportReason::Fake), 0);
        let notes: Vec<_> = reports
            .notes
            .iter()
            .filter_map(|r| r.note.clone())
            .collect();
        assert_eq!(notes, ["n2", "n3", "n4"]);
    }
}

//! Reasons for reports and the incentive disclosure over HTTP: the body of
//! `POST /v1/comments/{id}/flag` (a reason and a note, or no body at all),
//! what the moderation queue shows of a comment's reports, and
//! the body of `PUT /v1/comments/{id}/incentivized`, a staff decision, and
//! the moderation figures' body.

use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::StatusCode;
use std::collections::BTreeMap;

use rave_comments::{AuthorPage, ModerationFigures, QueuePage, Report, ReportReason, Reports};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::CommentBody;
use crate::error::{ApiError, ApiResult};
use crate::extract::{JsonBody, MAX_BODY_BYTES};
use crate::media::MediaLinks;

/// Why a reader reports a comment.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReasonBody {
    /// Advertising, links, repeated text.
    Spam,
    /// Abusive, hateful or obscene.
    Offensive,
    /// Not about this product.
    OffTopic,
    /// Not a genuine customer's review.
    Fake,
    /// Anything else.
    Other,
}

impl From<ReasonBody> for ReportReason {
    fn from(reason: ReasonBody) -> ReportReason {
        match reason {
            ReasonBody::Spam => ReportReason::Spam,
            ReasonBody::Offensive => ReportReason::Offensive,
            ReasonBody::OffTopic => ReportReason::OffTopic,
            ReasonBody::Fake => ReportReason::Fake,
            ReasonBody::Other => ReportReason::Other,
        }
    }
}

/// A reader's report. No body at all is a report with reason `other`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlagBody {
    /// Why the comment is reported (`other` when left out).
    #[serde(default)]
    pub reason: Option<ReasonBody>,
    /// What the reader adds for the moderator: at most 500 characters,
    /// no control characters but line breaks. Only the latest three notes
    /// of a comment are kept.
    #[schema(max_length = 500, example = "Links to another shop.")]
    #[serde(default)]
    pub note: Option<String>,
}

impl FlagBody {
    /// The report this body makes (the domain checks the note).
    pub(crate) fn report(body: Option<FlagBody>) -> ApiResult<Report> {
        let body = body.unwrap_or(FlagBody {
            reason: None,
            note: None,
        });
        let reason = body.reason.map_or(ReportReason::Other, ReportReason::from);
        Ok(Report::new(reason, body.note.as_deref())?)
    }
}

/// An optional JSON body: a request whose body is empty has none (with or
/// without a Content-Type); any other is read as [`JsonBody`] reads it.
impl<S: Send + Sync, T: serde::de::DeserializeOwned> OptionalFromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body must be at most {MAX_BODY_BYTES} bytes"),
                )
            })?;
        if bytes.is_empty() {
            return Ok(None);
        }
        let request = Request::from_parts(parts, axum::body::Body::from(bytes));
        <JsonBody<T> as FromRequest<S>>::from_request(request, state)
            .await
            .map(Some)
    }
}

/// A comment's reports since the last decision on it, by reason.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReportCountsBody {
    #[schema(minimum = 0)]
    pub spam: u64,
    #[schema(minimum = 0)]
    pub offensive: u64,
    #[schema(minimum = 0)]
    pub off_topic: u64,
    #[schema(minimum = 0)]
    pub fake: u64,
    #[schema(minimum = 0)]
    pub other: u64,
}

impl From<&Reports> for ReportCountsBody {
    fn from(reports: &Reports) -> ReportCountsBody {
        ReportCountsBody {
            spam: reports.count(ReportReason::Spam),
            offensive: reports.count(ReportReason::Offensive),
            off_topic: reports.count(ReportReason::OffTopic),
            fake: reports.count(ReportReason::Fake),
            other: reports.count(ReportReason::Other),
        }
    }
}

/// A note a reader left with a report.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReportNoteBody {
    #[schema(value_type = ReasonBody)]
    pub reason: &'static str,
    pub note: String,
}

/// A comment in the moderation queue (or an author's listing): the comment
/// and its readers' reports since the last decision.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct QueueItemBody {
    #[serde(flatten)]
    pub comment: CommentBody,
    pub reports: ReportCountsBody,
    /// The latest notes (at most three), oldest first.
    pub report_notes: Vec<ReportNoteBody>,
}

impl QueueItemBody {
    fn new(comment: rave_comments::Comment, links: &MediaLinks) -> QueueItemBody {
        let reports = ReportCountsBody::from(&comment.reports);
        let report_notes = comment
            .reports
            .notes
            .iter()
            .filter_map(|report| {
                Some(ReportNoteBody {
                    reason: report.reason.as_str(),
                    note: report.note.clone()?,
                })
            })
            .collect();
        QueueItemBody {
            comment: CommentBody::staff(comment, links),
            reports,
            report_notes,
        }
    }
}

/// A page of the moderation queue, or of an author's comments.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct QueuePageBody {
    pub items: Vec<QueueItemBody>,
    pub next_cursor: Option<String>,
}

impl QueuePageBody {
    /// A page of an author's comments, every photo shown with its status.
    pub(crate) fn of_author(page: AuthorPage, links: &MediaLinks) -> QueuePageBody {
        QueuePageBody {
            items: page
                .items
                .into_iter()
                .map(|comment| QueueItemBody::new(comment, links))
                .collect(),
            next_cursor: page.next_cursor,
        }
    }

    /// A page of the moderation queue, every photo shown with its status.
    pub(crate) fn of_queue(page: QueuePage, links: &MediaLinks) -> QueuePageBody {
        QueuePageBody {
            items: page
                .items
                .into_iter()
                .map(|comment| QueueItemBody::new(comment, links))
                .collect(),
            next_cursor: page.next_cursor,
        }
    }
}

/// Whether a review was written for a reward.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IncentivizedBody {
    /// true: the reviewer received a free product or a discount for it.
    pub incentivized: bool,
}

/// What moderation has seen, counted exactly from the change stream by the
/// aggregator (so it trails the latest writes by the aggregator's lag).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ModerationFiguresBody {
    /// Every report readers made, by reason.
    pub reports_by_reason: ReportCountsBody,
    /// Comments a rule or the moderation hook held, by rule.
    #[schema(example = json!({"too_many_links": 3, "moderation_hook": 1}))]
    pub holds_by_rule: BTreeMap<String, u64>,
    /// Comments waiting now, pending (awaiting approval).
    #[schema(minimum = 0)]
    pub pending: u64,
    /// Comments waiting now, flagged (reported, still shown).
    #[schema(minimum = 0)]
    pub flagged: u64,
    /// Decisions taken: queued comments approved, rejected or deleted.
    #[schema(minimum = 0)]
    pub decisions: u64,
    /// The median time from entering the queue to the decision, in
    /// seconds: exact to the second below ten minutes, to the minute below
    /// a day, to the hour beyond; null before the first decision.
    #[schema(minimum = 0, example = 95.5)]
    pub median_decision_seconds: Option<f64>,
}

impl From<ModerationFigures> for ModerationFiguresBody {
    fn from(figures: ModerationFigures) -> ModerationFiguresBody {
        let reported = |reason| figures.reports_by_reason.get(&reason).copied().unwrap_or(0);
        ModerationFiguresBody {
            reports_by_reason: ReportCountsBody {
                spam: reported(ReportReason::Spam),
                offensive: reported(ReportReason::Offensive),
                off_topic: reported(ReportReason::OffTopic),
                fake: reported(ReportReason::Fake),
                other: reported(ReportReason::Other),
            },
            holds_by_rule: figures.holds_by_rule,
            pending: figures.pending,
            flagged: figures.flagged,
            decisions: figures.decisions,
            median_decision_seconds: figures.median_decision_seconds,
        }
    }
}

//! The JSON shapes of the API (API.md), with their OpenAPI schemas. They
//! mirror the domain types so that the domain stays free of HTTP concerns.

use rave_comments::{Comment, Plan, QueuePage};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A comment.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommentBody {
    /// Server-generated, URL-safe, sorts by creation time.
    #[schema(example = "01JD3X5Z8Q9W2E4R6T8Y0U1I3O")]
    pub id: String,
    #[schema(example = "42")]
    pub product_id: String,
    #[schema(example = "alice")]
    pub author: String,
    #[schema(example = "en")]
    pub language: String,
    #[schema(minimum = 1, maximum = 5, example = 5)]
    pub rating: u8,
    #[schema(example = "Great")]
    pub title: String,
    #[schema(example = "Works well.")]
    pub body: String,
    /// RFC 3339, UTC, milliseconds.
    #[schema(example = "2026-11-21T10:00:00.123Z")]
    pub created_at: String,
    /// `published`, `pending` (awaiting moderation) or `flagged` (reported, still visible).
    #[schema(example = "published")]
    pub status: String,
}

impl From<Comment> for CommentBody {
    fn from(c: Comment) -> CommentBody {
        CommentBody {
            id: c.id,
            product_id: c.product_id.to_string(),
            author: c.author,
            language: c.language.to_string(),
            rating: c.rating.get(),
            title: c.title,
            body: c.body,
            created_at: c.created_at.to_string(),
            status: c.status.as_str().to_owned(),
        }
    }
}

/// A new comment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCommentBody {
    /// 1-64 characters, no control characters.
    pub author: String,
    /// Lowercase ISO 639 code of 2-3 letters.
    pub language: String,
    /// An integer from 1 to 5.
    pub rating: i64,
    /// 0-200 characters.
    #[serde(default)]
    pub title: Option<String>,
    /// 1-10,000 characters.
    pub body: String,
    /// Only with the admin token (imports); otherwise set by the server.
    #[serde(default)]
    pub created_at: Option<String>,
}

/// An edit: any of these fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditCommentBody {
    pub language: Option<String>,
    pub rating: Option<i64>,
    pub title: Option<String>,
    pub body: Option<String>,
}

/// One sub-query of a plan.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlannedQueryBody {
    pub index: String,
    pub partition_key: String,
    pub limit: usize,
}

/// A sub-query the plan did not run.
#[derive(Debug, Serialize, ToSchema)]
pub struct SkippedBody {
    pub partition_key: String,
    pub reason: String,
}

/// How a listing was answered (`explain=true`).
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanBody {
    /// `all`, `language`, `rating`, `language_rating`, `ratings_fan_out`,
    /// `language_ratings_fan_out` or `empty`.
    pub strategy: String,
    pub queries: Vec<PlannedQueryBody>,
    pub skipped: Vec<SkippedBody>,
    /// Read capacity units the page consumed.
    pub read_units: f64,
    /// Items read from the store for this page.
    pub items_read: usize,
}

impl From<Plan> for PlanBody {
    fn from(plan: Plan) -> PlanBody {
        let strategy = serde_json::to_value(plan.strategy)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        PlanBody {
            strategy,
            queries: plan
                .queries
                .into_iter()
                .map(|q| PlannedQueryBody {
                    index: q.index.to_owned(),
                    partition_key: q.partition_key,
                    limit: q.limit,
                })
                .collect(),
            skipped: plan
                .skipped
                .into_iter()
                .map(|s| SkippedBody {
                    partition_key: s.partition_key,
                    reason: s.reason.to_owned(),
                })
                .collect(),
            read_units: plan.read_units,
            items_read: plan.items_read,
        }
    }
}

/// A page of comments.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommentPageBody {
    pub items: Vec<CommentBody>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanBody>,
}

/// A page of the moderation queue.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueuePageBody {
    pub items: Vec<CommentBody>,
    pub next_cursor: Option<String>,
}

impl From<QueuePage> for QueuePageBody {
    fn from(page: QueuePage) -> QueuePageBody {
        QueuePageBody {
            items: page.items.into_iter().map(CommentBody::from).collect(),
            next_cursor: page.next_cursor,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthBody {
    pub status: String,
}

//! The JSON shapes of the API (API.md), with their OpenAPI schemas. They
//! mirror the domain types so that the domain stays free of HTTP concerns.

use std::collections::BTreeMap;

use rave_comments::{Comment, GlobalStats, Leader, Plan, ProductStats, QueuePage};
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
    /// The moderation rule that held a pending comment (`too_many_links`,
    /// `blocked_words`, `duplicate`, `too_fast`, `moderation_hook`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "too_many_links")]
    pub held_by: Option<String>,
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
            held_by: c.held_by,
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

/// Counts by rating of a product (AP7-AP10).
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductStatsBody {
    pub product_id: String,
    /// The language counted, or null for all languages.
    pub language: Option<String>,
    /// Published and flagged comments per rating, keys "1" to "5".
    #[schema(example = json!({"1": 0, "2": 3, "3": 1, "4": 0, "5": 10}))]
    pub counts: BTreeMap<String, u64>,
    pub total: u64,
}

impl From<ProductStats> for ProductStatsBody {
    fn from(stats: ProductStats) -> ProductStatsBody {
        ProductStatsBody {
            product_id: stats.product_id.to_string(),
            language: stats.language.map(|l| l.to_string()),
            counts: (1..=5)
                .map(|r| (r.to_string(), stats.counts.0[r - 1]))
                .collect(),
            total: stats.total,
        }
    }
}

/// One product on the leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderBody {
    pub product_id: String,
    pub five_star: u64,
}

/// The products with the most 5-star comments, most first (AP11).
#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardBody {
    pub items: Vec<LeaderBody>,
}

impl From<Vec<Leader>> for LeaderboardBody {
    fn from(leaders: Vec<Leader>) -> LeaderboardBody {
        LeaderboardBody {
            items: leaders
                .into_iter()
                .map(|l| LeaderBody {
                    product_id: l.product_id,
                    five_star: l.five_star,
                })
                .collect(),
        }
    }
}

/// Global aggregates over counted (published and flagged) comments.
#[derive(Debug, Serialize, ToSchema)]
pub struct GlobalStatsBody {
    pub comments_total: u64,
    /// Products with at least one counted comment.
    pub products_total: u64,
    /// Authors with at least one counted comment.
    pub authors_total: u64,
    /// How many authors have exactly k counted comments, k = "1".."9", and "10+".
    #[schema(example = json!({"1": 40, "2": 12, "3": 5, "4": 2, "5": 1, "6": 0, "7": 0, "8": 0, "9": 0, "10+": 1}))]
    pub authors_by_comment_count: BTreeMap<String, u64>,
}

impl From<GlobalStats> for GlobalStatsBody {
    fn from(stats: GlobalStats) -> GlobalStatsBody {
        GlobalStatsBody {
            comments_total: stats.comments_total,
            products_total: stats.products_total,
            authors_total: stats.authors_total,
            authors_by_comment_count: stats
                .authors_by_comment_count
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    (
                        if i == 9 {
                            "10+".to_owned()
                        } else {
                            (i + 1).to_string()
                        },
                        *n,
                    )
                })
                .collect(),
        }
    }
}

/// Where the stream aggregator stands.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
pub struct AggregatorStatus {
    /// The last stream position applied.
    pub position: u64,
    /// The newest position committed.
    pub latest: u64,
    /// Changes committed but not applied yet.
    pub lag_events: u64,
    /// Age of the oldest change not applied yet, in milliseconds.
    pub lag_ms: u64,
    /// Changes applied since this process started.
    pub applied: u64,
}

//! The product families' endpoints: a group's comments (every variant's,
//! with the product listing's sorts, filters and cursors) and its
//! statistics (its variants' summed). A variant names its group in its
//! product record (`PUT /v1/products/{product_id}`, field `group`).

use crate::json::{Json, Written};
use axum::extract::{RawQuery, State};
use rave_comments::GroupStats;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::api::{
    CommentPageBody, Cursor, LanguageCode, ListingSort, PageSize, ProductId, ProductStatsBody,
    StarRating,
};
use crate::error::ApiResult;
use crate::responses::{BadRequest, Unavailable};
use crate::routes::Segment;
use crate::routes::query::{Dialect, ListingQuery, Params};

#[utoipa::path(
    get,
    path = "/v1/groups/{group}/comments",
    tag = "comments",
    summary = "List the comments of every variant of a product family",
    description = "The published and flagged comments of every product whose record names this group, in one order, each with its variant's `product_id`, read from the group's own index entries. The same filters, sorts, page sizes and cursors as a product's listing; a cursor belongs to its group, query and sort, and a walk shows each comment once even while products move between groups. A product moved into the group shows its comments once the move's background job has reached them (`GET /v1/admin/moves`), and one moved out stops showing them then; the group's statistics follow a move at once. An id no record names as its group lists nothing.",
    params(
        ("group" = ProductId, Path, description = "The group's id: 1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageCode>, Query, description = "One language code; absent = all languages"),
        ("rating" = Option<Vec<StarRating>>, Query, style = Form, explode, description = "Repeatable (rating=1&rating=5; rating=1,5 works too); absent = all ratings"),
        ("verified" = Option<bool>, Query, description = "true lists only verified purchases"),
        ("has_media" = Option<bool>, Query, description = "true lists only comments showing at least one published photo, in any order and under any other filter (their own index entries: a page reads only what it shows); false or absent lists all"),
        ("sort" = Option<ListingSort>, Query, description = "newest (default), oldest, highest, lowest or helpful, as for a product"),
        ("limit" = Option<PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<Cursor>, Query, description = "The next_cursor of the previous page, for the same query"),
        ("explain" = Option<bool>, Query, description = "true adds the plan used (the sub-queries of the group's partitions)"),
    ),
    responses(
        (status = 200, description = "A page of comments", body = CommentPageBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn group_comments(
    State(state): State<AppState>,
    Segment(group): Segment,
    RawQuery(raw): RawQuery,
) -> ApiResult<Written<CommentPageBody>> {
    let params = Params::new(raw.as_deref(), &ListingQuery::API, Dialect::Api)?;
    let query = ListingQuery::read(&params)?;
    let page = state.comments.list_group(&query.request(&group)).await?;
    Ok(Written(CommentPageBody::public(
        page,
        query.explain,
        &state.media_links,
    )))
}

/// A product family's counts: the sum of its variants', and each one's.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GroupStatsBody {
    /// The group's counts (`product_id` is the group's id).
    pub stats: ProductStatsBody,
    /// Each variant's own counts, in product id order.
    pub variants: Vec<ProductStatsBody>,
}

impl From<GroupStats> for GroupStatsBody {
    fn from(group: GroupStats) -> GroupStatsBody {
        GroupStatsBody {
            stats: group.stats.into(),
            variants: group.variants.into_iter().map(Into::into).collect(),
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/groups/{group}/stats",
    tag = "statistics",
    summary = "Counts by rating of a product family, overall or in one language",
    description = "The sum of its variants' statistics (published and flagged comments), read together: as exact as theirs, which the aggregator keeps from the change stream and `rave reconcile` recounts. A product moved to another group counts there from the moment its record is written.",
    params(
        ("group" = ProductId, Path, description = "The group's id: 1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageCode>, Query, description = "One language code; absent = all languages"),
    ),
    responses(
        (status = 200, description = "The counts (all zero, no variants, for an id no record names as its group)", body = GroupStatsBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn group_stats(
    State(state): State<AppState>,
    Segment(group): Segment,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<GroupStatsBody>> {
    let params = Params::new(raw.as_deref(), &["language"], Dialect::Api)?;
    let stats = state
        .comments
        .group_stats(&group, params.value("language")?)
        .await?;
    Ok(Json(stats.into()))
}

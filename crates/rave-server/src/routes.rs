//! The endpoints of API.md. Each handler validates its input, calls the
//! domain once and shapes the answer; the OpenAPI document is generated
//! from the `#[utoipa::path]` annotations next to them. The router and the
//! OpenAPI 3.1 document (`/openapi.json`) are built together by
//! `utoipa-axum`, so a route cannot exist undocumented. Query strings are
//! read by `query`, which the product pages share.
//!
//! The web page at `/` (`web/index.html`) is served from the binary: plain
//! HTML, CSS and JavaScript over the public API, with no build step. It
//! puts user text into the page only through `textContent`, keeps the view,
//! filters and order in the URL, numbers its listing requests and shows
//! only the newest answer, and keeps the admin token in session storage.

pub(crate) mod query;

use std::sync::LazyLock;

use crate::json::{Json, Written};
use axum::extract::{FromRequest, FromRequestParts, Path, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_access::{Scope, Target};
use rave_comments::{CommentPatch, DEFAULT_PAGE_SIZE, NewComment, ReportReason, Status, Timestamp};

use self::query::{Dialect, ListingQuery, Params};

use crate::AppState;
use crate::api::*;
use crate::callers::{Admin, Authorized, Erase, Moderate, Reply, Writer};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{JsonBody, json_object};
use crate::media::removal;
use crate::moderation::{
    FlagBody, IncentivizedBody, ModerationFiguresBody, QueuePageBody, ReasonBody,
};
use crate::responses::{
    BadRequest, BadToken, BodyRefused, Contended, NotFound, RefusedByRule, TokenRefused,
    TooManyRequests, Unavailable,
};
use crate::uploads;

/// A path segment, refused with a problem document if it is not valid UTF-8.
#[derive(Debug)]
pub(crate) struct Segment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| Segment(value))
            .map_err(|e| ApiError::bad_request(format!("path: {e}")))
    }
}

/// A vote's path: the comment id and the voter, refused with a problem
/// document if either is not valid UTF-8.
#[derive(Debug)]
pub(crate) struct VotePath(pub String, pub String);

impl<S: Send + Sync> FromRequestParts<S> for VotePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map(|Path((id, voter))| VotePath(id, voter))
            .map_err(|e| ApiError::bad_request(format!("path: {e}")))
    }
}

#[utoipa::path(
    get,
    path = "/v1/products/{product_id}/comments",
    tag = "comments",
    summary = "List a product's comments, newest first or in another order",
    description = "Published and flagged comments, newest first (ties by id) unless `sort` says otherwise. Filter by one language and any set of ratings; page with `cursor` (a cursor belongs to its query and its sort). Every page but the last holds exactly `limit` items.",
    params(
        ("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageCode>, Query, description = "One language code; absent = all languages"),
        ("rating" = Option<Vec<StarRating>>, Query, style = Form, explode, description = "Repeatable (rating=1&rating=5; rating=1,5 works too); absent = all ratings"),
        ("verified" = Option<bool>, Query, description = "true lists only verified purchases"),
        ("has_media" = Option<bool>, Query, description = "true lists only comments showing at least one published photo, in any order and under any other filter (their own index entries: a page reads only what it shows); false or absent lists all"),
        ("incentivized" = Option<bool>, Query, description = "true lists only reviews written for a reward (a free product or a discount), false only the others; absent lists both. A filter on the same queries: a page reads on past the others until it is full"),
        ("sort" = Option<ListingSort>, Query, description = "newest (default), oldest, highest (most stars first, newest first within a rating), lowest, or helpful (the lower bound of the 95% Wilson interval of helpful ÷ all votes first, no votes scoring 0; newest first among equal scores). Votes are counted by the aggregator, so a comment whose score changes while a client walks the helpful order may appear once more or not at all; every other comment appears exactly once"),
        ("limit" = Option<PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<Cursor>, Query, description = "The next_cursor of the previous page, for the same query"),
        ("explain" = Option<bool>, Query, description = "true adds the plan used"),
    ),
    responses(
        (status = 200, description = "A page of comments", body = CommentPageBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn list_comments(
    State(state): State<AppState>,
    Segment(product_id): Segment,
    RawQuery(raw): RawQuery,
) -> ApiResult<Written<CommentPageBody>> {
    let params = Params::new(raw.as_deref(), &ListingQuery::API, Dialect::Api)?;
    let query = ListingQuery::read(&params)?;
    let page = state.comments.list(&query.request(&product_id)).await?;
    Ok(Written(CommentPageBody::public(
        page,
        query.explain,
        &state.media_links,
    )))
}

/// The part of a multipart post holding the comment's JSON.
const COMMENT_PART: &str = "comment";

#[utoipa::path(
    post,
    path = "/v1/products/{product_id}/comments",
    tag = "comments",
    summary = "Post a comment",
    description = "With moderation `pre` the comment is pending and invisible until approved. An `Idempotency-Key` makes retries safe. `created_at` is accepted only with the admin token. A `purchase_proof` (a JWT signed HS256 with the server's purchase secret, for this product, not expired) makes the comment a verified purchase; a proof that does not verify, or one sent to a server without a purchase secret, is a 400 and stores nothing; an order already used for a comment on this product is a 409. Photos come with the comment as `multipart/form-data`: its JSON in a `comment` part, each file in a `photo` part (at most `--max-photos`, 5 by default, each at most `--max-photo-bytes`, 10 MiB by default). A file that is not a JPEG, PNG or WebP image by its bytes, is corrupt, truncated, animated or over the pixel limit, or one photo too many, is a 400 naming its part (`photo[2]: …`); a file over the size limit is a 413; nothing is stored for either. The photos are stored (re-encoded, without metadata) before the comment naming them, and wait with it when it waits for moderation. The Idempotency-Key's request covers the photos.",
    params(
        ("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, min_length = 1, max_length = 128, pattern = r"^[\x21-\x7e]([\x20-\x7e]{0,126}[\x21-\x7e])?$", description = "1-128 visible ASCII characters; the same key and body return the first result"),
    ),
    request_body(
        description = "The comment as JSON, or as `multipart/form-data` (RFC 7578) with photos: its JSON in a `comment` part and each file in a `photo` part",
        content(
            (CreateCommentBody = "application/json"),
            (CommentUploadBody = "multipart/form-data"),
        ),
    ),
    responses(
        (
            status = 201,
            description = "Created (or replayed)",
            body = CommentBody,
            headers(("Location" = String, description = "/v1/comments/{id}")),
            links(
                ("GetComment" = (operation_id = "get_comment", parameters(("id" = "$response.body#/id")))),
                ("EditComment" = (operation_id = "edit_comment", parameters(("id" = "$response.body#/id")))),
                ("DeleteComment" = (operation_id = "delete_comment", parameters(("id" = "$response.body#/id")))),
                ("FlagComment" = (operation_id = "flag_comment", parameters(("id" = "$response.body#/id")))),
                ("ApproveComment" = (operation_id = "approve_comment", parameters(("id" = "$response.body#/id")))),
                ("RejectComment" = (operation_id = "reject_comment", parameters(("id" = "$response.body#/id")))),
                ("SetReply" = (operation_id = "set_reply", parameters(("id" = "$response.body#/id")))),
                ("DeleteReply" = (operation_id = "delete_reply", parameters(("id" = "$response.body#/id"))))
            )
        ),
        BadRequest,
        BadToken,
        (status = 409, description = "The Idempotency-Key was used with another request, is in use by a concurrent one, or its comment has since been deleted; or the purchase proof's order has already verified a comment on this product", body = Problem, content_type = "application/problem+json"),
        RefusedByRule,
        BodyRefused,
        TooManyRequests,
        Unavailable,
    )
)]
pub(crate) async fn create_comment(
    State(state): State<AppState>,
    Writer(caller): Writer,
    Segment(product_id): Segment,
    request: Request,
) -> ApiResult<Response> {
    let idempotency_key = request
        .headers()
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .map(str::to_owned)
                .map_err(|_| ApiError::bad_request("Idempotency-Key: must be visible ASCII"))
        })
        .transpose()?;
    let (body, photos) = if uploads::is_multipart(request.headers()) {
        let form = uploads::read_form(
            &state.uploads,
            state.media.as_ref(),
            request,
            &[COMMENT_PART],
        )
        .await?;
        let comment = form.field(COMMENT_PART).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{COMMENT_PART}: the part holding the comment's JSON is missing"
            ))
        })?;
        let body: CreateCommentBody = json_object(comment.as_bytes(), COMMENT_PART)?;
        (body, form.photos)
    } else {
        let JsonBody(body) = JsonBody::from_request(request, &state).await?;
        (body, Vec::new())
    };
    if body.created_at.is_some() && !caller.allows(Scope::Import) {
        return Err(ApiError::bad_request(
            "created_at: is set by the server; only an import (a token with the scope import) may provide it",
        ));
    }
    let created_at = body
        .created_at
        .as_deref()
        .map(Timestamp::parse)
        .transpose()?;
    let order = body
        .purchase_proof
        .as_deref()
        .map(|proof| match &state.purchases {
            Some(verifier) => verifier.verify(proof, &product_id),
            None => Err(ApiError::from(rave_comments::CommentsError::Invalid {
                field: "purchase_proof",
                message: "this server verifies no purchases (it has no purchase secret)".into(),
            })),
        })
        .transpose()?;
    let mut new = NewComment {
        media: Vec::new(),
        attributes: crate::attributes::inputs(body.attributes),
        author: body.author,
        language: body.language,
        rating: body.rating,
        title: body.title,
        body: body.body,
        created_at,
    };
    let photos = if photos.is_empty() {
        Vec::new()
    } else {
        // A comment the domain would refuse stores no photo.
        new.check()?;
        uploads::process_photos(&state.uploads, photos).await?
    };
    let created = uploads::store_photos_then_create(
        state.media.as_ref(),
        &state.photo_locks,
        &photos,
        async |media| {
            new.media = media;
            match &order {
                None => {
                    state
                        .comments
                        .create(&product_id, new, idempotency_key.as_deref())
                        .await
                }
                Some(order) => {
                    state
                        .comments
                        .create_purchased(&product_id, new, idempotency_key.as_deref(), order)
                        .await
                }
            }
        },
    )
    .await?;
    let created = match created {
        Ok(created) => created,
        Err(refused) => {
            removal::delete_refused_uploads(&state, &photos).await;
            return Err(refused.into());
        }
    };
    let location = format!("/v1/comments/{}", created.comment.id);
    // The poster sees every photo they posted, pending ones with their
    // status.
    let mut response = (
        StatusCode::CREATED,
        Json(CommentBody::staff(created.comment, &state.media_links)),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/v1/comments/{id}",
    tag = "comments",
    summary = "One comment, whatever its status",
    params(("id" = String, Path, description = "Comment id")),
    responses(
        (status = 200, description = "The comment", body = CommentBody),
        NotFound,
        Unavailable,
    )
)]
pub(crate) async fn get_comment(
    State(state): State<AppState>,
    Segment(id): Segment,
) -> ApiResult<Json<CommentBody>> {
    Ok(Json(CommentBody::public(
        state.comments.get(&id).await?,
        &state.media_links,
    )))
}

#[utoipa::path(
    patch,
    path = "/v1/comments/{id}",
    tag = "admin",
    summary = "Edit a comment (scope moderate)",
    description = "Any of language, rating, title, body. Listings, statistics and the leaderboard follow.",
    params(("id" = String, Path, description = "Comment id")),
    request_body = EditCommentBody,
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The edited comment", body = CommentBody),
        BadRequest,
        TokenRefused,
        NotFound,
        Contended,
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn edit_comment(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    Segment(id): Segment,
    JsonBody(body): JsonBody<EditCommentBody>,
) -> ApiResult<Json<CommentBody>> {
    let patch = CommentPatch {
        language: body.language,
        rating: body.rating,
        title: body.title,
        body: body.body,
        attributes: body.attributes.map(crate::attributes::inputs),
    };
    let changed: Vec<&str> = [
        ("language", patch.language.is_some()),
        ("rating", patch.rating.is_some()),
        ("title", patch.title.is_some()),
        ("body", patch.body.is_some()),
        ("attributes", patch.attributes.is_some()),
    ]
    .into_iter()
    .filter_map(|(field, set)| set.then_some(field))
    .collect();
    let edited = state.comments.edit(&id, &patch).await?;
    staff
        .record(
            &state,
            "comment.edit",
            Target::new("comment", &id),
            Some(format!("set {}", changed.join(", "))),
        )
        .await;
    Ok(Json(CommentBody::staff(edited, &state.media_links)))
}

#[utoipa::path(
    delete,
    path = "/v1/comments/{id}",
    tag = "admin",
    summary = "Delete a comment (scope moderate)",
    description = "The comment's photos go with it: their stored renditions are deleted (their URLs answer 404) unless another comment carries the same photo.",
    params(("id" = String, Path, description = "Comment id")),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 204, description = "Deleted"),
        TokenRefused,
        NotFound,
        Unavailable,
    )
)]
pub(crate) async fn delete_comment(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    Segment(id): Segment,
) -> ApiResult<StatusCode> {
    let unreferenced = state.comments.delete(&id).await?;
    removal::delete_unreferenced(&state, &unreferenced).await;
    staff
        .record(&state, "comment.delete", Target::new("comment", &id), None)
        .await;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/v1/comments/{id}/flag",
    tag = "comments",
    summary = "Report a comment",
    description = "Counts a reader's report, with its reason (`spam`, `offensive`, `off_topic`, `fake` or `other`) and an optional note; no body at all is a report for `other`. A published comment becomes flagged: it stays visible and enters the moderation queue, which shows the counts by reason. A pending or flagged comment keeps its status; its report is counted all the same. An unknown reason or a bad note is a 400 naming the field, and counts nothing.",
    params(("id" = String, Path, description = "Comment id")),
    request_body(content = Option<FlagBody>, description = "Optional: the reason and a note"),
    responses(
        (status = 200, description = "The comment", body = CommentBody),
        BadRequest,
        BadToken,
        NotFound,
        Contended,
        BodyRefused,
        TooManyRequests,
        Unavailable,
    )
)]
pub(crate) async fn flag_comment(
    State(state): State<AppState>,
    _writer: Writer,
    Segment(id): Segment,
    // The body may be absent or `null` (the document's nullable body): both
    // are a report for `other`.
    body: Option<JsonBody<Option<FlagBody>>>,
) -> ApiResult<Json<CommentBody>> {
    let report = FlagBody::report(body.and_then(|JsonBody(body)| body))?;
    Ok(Json(CommentBody::public(
        state.comments.flag(&id, &report).await?,
        &state.media_links,
    )))
}

#[utoipa::path(
    post,
    path = "/v1/comments/{id}/approve",
    tag = "admin",
    summary = "Approve a pending or flagged comment (scope moderate)",
    params(("id" = String, Path, description = "Comment id")),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The published comment", body = CommentBody),
        TokenRefused,
        NotFound,
        Contended,
        Unavailable,
    )
)]
pub(crate) async fn approve_comment(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    Segment(id): Segment,
) -> ApiResult<Json<CommentBody>> {
    let approved = state.comments.approve(&id).await?;
    staff
        .record(&state, "comment.approve", Target::new("comment", &id), None)
        .await;
    Ok(Json(CommentBody::staff(approved, &state.media_links)))
}

#[utoipa::path(
    put,
    path = "/v1/comments/{id}/incentivized",
    tag = "admin",
    summary = "Mark whether a review was written for a reward (scope moderate)",
    description = "An incentivized review (a free product or a discount in return) is labelled \"Received a free product or discount for this review\" on every page, listed under `incentivized=true`, and carried to webhooks, exports and the Google feed (`is_incentivized_review`). Setting the value it already has changes nothing; no count changes either way.",
    params(("id" = String, Path, description = "Comment id")),
    request_body = IncentivizedBody,
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The comment", body = CommentBody),
        BadRequest,
        TokenRefused,
        NotFound,
        Contended,
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn set_incentivized(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    Segment(id): Segment,
    JsonBody(body): JsonBody<IncentivizedBody>,
) -> ApiResult<Json<CommentBody>> {
    let comment = state
        .comments
        .set_incentivized(&id, body.incentivized)
        .await?;
    staff
        .record(
            &state,
            "comment.incentivized",
            Target::new("comment", &id),
            Some(format!("incentivized={}", body.incentivized)),
        )
        .await;
    Ok(Json(CommentBody::staff(comment, &state.media_links)))
}

#[utoipa::path(
    post,
    path = "/v1/comments/{id}/reject",
    tag = "admin",
    summary = "Reject a comment (scope moderate): delete it, whatever its status",
    description = "The comment's photos go with it: their stored renditions are deleted (their URLs answer 404) unless another comment carries the same photo.",
    params(("id" = String, Path, description = "Comment id")),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 204, description = "Deleted"),
        TokenRefused,
        NotFound,
        Unavailable,
    )
)]
pub(crate) async fn reject_comment(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Moderate>,
    Segment(id): Segment,
) -> ApiResult<StatusCode> {
    let unreferenced = state.comments.delete(&id).await?;
    removal::delete_unreferenced(&state, &unreferenced).await;
    staff
        .record(&state, "comment.reject", Target::new("comment", &id), None)
        .await;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    put,
    path = "/v1/comments/{id}/reply",
    tag = "admin",
    summary = "Set the merchant's reply to a comment (scope reply)",
    description = "A comment has at most one official reply; this sets it or replaces its text (keeping its `created_at`). It changes neither the comment's place in listings nor any count.",
    params(("id" = String, Path, description = "Comment id")),
    request_body = SetReplyBody,
    security(("access_token" = ["reply"])),
    responses(
        (status = 200, description = "The comment with its reply", body = CommentBody),
        BadRequest,
        TokenRefused,
        NotFound,
        Contended,
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn set_reply(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Reply>,
    Segment(id): Segment,
    JsonBody(body): JsonBody<SetReplyBody>,
) -> ApiResult<Json<CommentBody>> {
    let replied = state.comments.set_reply(&id, &body.body).await?;
    staff
        .record(&state, "reply.set", Target::new("comment", &id), None)
        .await;
    Ok(Json(CommentBody::staff(replied, &state.media_links)))
}

#[utoipa::path(
    delete,
    path = "/v1/comments/{id}/reply",
    tag = "admin",
    summary = "Remove the merchant's reply to a comment (scope reply)",
    description = "Removing the reply of a comment that has none changes nothing.",
    params(("id" = String, Path, description = "Comment id")),
    security(("access_token" = ["reply"])),
    responses(
        (status = 200, description = "The comment, without a reply", body = CommentBody),
        TokenRefused,
        NotFound,
        Contended,
        Unavailable,
    )
)]
pub(crate) async fn delete_reply(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Reply>,
    Segment(id): Segment,
) -> ApiResult<Json<CommentBody>> {
    let comment = state.comments.delete_reply(&id).await?;
    staff
        .record(&state, "reply.delete", Target::new("comment", &id), None)
        .await;
    Ok(Json(CommentBody::staff(comment, &state.media_links)))
}

#[utoipa::path(
    put,
    path = "/v1/comments/{id}/votes/{voter}",
    tag = "comments",
    summary = "Vote on whether a comment was helpful",
    description = "Records one voter's vote on a published or flagged comment; a later vote of the same voter replaces it. The comment's `helpful_votes` and `unhelpful_votes` follow once the aggregator has applied the vote.",
    params(
        ("id" = String, Path, description = "Comment id"),
        ("voter" = VoterId, Path, description = "The voter's opaque id: 1-128 characters of A-Z a-z 0-9 _ -"),
    ),
    request_body = VoteBody,
    responses(
        (status = 204, description = "Recorded"),
        BadRequest,
        BadToken,
        NotFound,
        BodyRefused,
        TooManyRequests,
        Unavailable,
    )
)]
pub(crate) async fn put_vote(
    State(state): State<AppState>,
    _writer: Writer,
    VotePath(id, voter): VotePath,
    JsonBody(body): JsonBody<VoteBody>,
) -> ApiResult<StatusCode> {
    state.comments.vote(&id, &voter, body.helpful).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete,
    path = "/v1/comments/{id}/votes/{voter}",
    tag = "comments",
    summary = "Withdraw a vote",
    description = "Withdraws the voter's vote on a published or flagged comment; withdrawing a vote never cast changes nothing.",
    params(
        ("id" = String, Path, description = "Comment id"),
        ("voter" = VoterId, Path, description = "The voter's opaque id: 1-128 characters of A-Z a-z 0-9 _ -"),
    ),
    responses(
        (status = 204, description = "Withdrawn (or there was none)"),
        BadRequest,
        BadToken,
        NotFound,
        TooManyRequests,
        Unavailable,
    )
)]
pub(crate) async fn delete_vote(
    State(state): State<AppState>,
    _writer: Writer,
    VotePath(id, voter): VotePath,
) -> ApiResult<StatusCode> {
    state.comments.withdraw_vote(&id, &voter).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/moderation/queue",
    tag = "admin",
    summary = "The moderation queue, oldest first (scope moderate)",
    params(
        ("state" = Option<QueueState>, Query, description = "pending (default) or flagged"),
        ("since" = Option<String>, Query, pattern = "^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2})?)?)?$", description = "A prefix of an RFC 3339 time: 2026, 2026-11, 2026-11-21 or 2026-11-21T08"),
        ("reason" = Option<ReasonBody>, Query, description = "Only comments reported for this reason since the last decision (a filter: the queue reads on past the others until the page is full)"),
        ("limit" = Option<PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<Cursor>, Query, description = "The next_cursor of the previous page, for the same query"),
    ),
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "A page of the queue", body = QueuePageBody),
        BadRequest,
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn moderation_queue(
    State(state): State<AppState>,
    _staff: Authorized<Moderate>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<QueuePageBody>> {
    let params = Params::new(
        raw.as_deref(),
        &["state", "since", "reason", "limit", "cursor"],
        Dialect::Api,
    )?;
    let reason = params
        .value("reason")?
        .map(ReportReason::parse)
        .transpose()?;
    let status = match params.value("state")? {
        None | Some("pending") => Status::Pending,
        Some("flagged") => Status::Flagged,
        Some(_) => return Err(ApiError::bad_request("state: must be pending or flagged")),
    };
    let page = state
        .comments
        .moderation_queue(
            status,
            params.value("since")?,
            reason,
            params.limit(DEFAULT_PAGE_SIZE)?,
            params.value("cursor")?,
        )
        .await?;
    Ok(Json(QueuePageBody::of_queue(page, &state.media_links)))
}

#[utoipa::path(
    get,
    path = "/v1/moderation/figures",
    tag = "admin",
    summary = "Moderation figures (scope moderate)",
    description = "Reports by reason, holds by rule, comments waiting, decisions and the median time to a decision, kept exactly by the aggregator from the change stream (they trail the latest writes by its lag).",
    security(("access_token" = ["moderate"])),
    responses(
        (status = 200, description = "The figures", body = ModerationFiguresBody),
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn moderation_figures(
    State(state): State<AppState>,
    _staff: Authorized<Moderate>,
) -> ApiResult<Json<ModerationFiguresBody>> {
    Ok(Json(state.comments.moderation_figures().await?.into()))
}

#[utoipa::path(
    get,
    path = "/v1/authors/{author}/comments",
    tag = "admin",
    summary = "Every comment of an author, any status, newest first (scope erase)",
    description = "The comments whose `author` is exactly this value (percent-encoded in the path), read from an index of authors. For handing a person their data.",
    params(
        ("author" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,64}$", description = "The author, exactly as stored"),
        ("limit" = Option<PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<Cursor>, Query, description = "The next_cursor of the previous page, for the same author"),
    ),
    security(("access_token" = ["erase"])),
    responses(
        (status = 200, description = "A page of the author's comments", body = QueuePageBody),
        BadRequest,
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn author_comments(
    State(state): State<AppState>,
    _staff: Authorized<Erase>,
    Segment(author): Segment,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<QueuePageBody>> {
    let params = Params::new(raw.as_deref(), &["limit", "cursor"], Dialect::Api)?;
    let page = state
        .comments
        .author_comments(
            &author,
            params.limit(DEFAULT_PAGE_SIZE)?,
            params.value("cursor")?,
        )
        .await?;
    Ok(Json(QueuePageBody::of_author(page, &state.media_links)))
}

#[utoipa::path(
    delete,
    path = "/v1/authors/{author}/comments",
    tag = "admin",
    summary = "Erase every comment of an author (scope erase)",
    description = "Deletes the comments whose `author` is exactly this value, with their votes, replies and photos (their stored renditions are deleted before the answer, so their URLs answer 404, unless a comment of another author carries the same photo), and the orders they reviewed through a review request (address and requests with them); statistics, leaderboards and global aggregates follow from the change stream. Erasing again erases nothing.",
    params(
        ("author" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,64}$", description = "The author, exactly as stored"),
    ),
    security(("access_token" = ["erase"])),
    responses(
        (status = 200, description = "How many comments were erased", body = ErasedBody),
        BadRequest,
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn erase_author(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Erase>,
    Segment(author): Segment,
) -> ApiResult<Json<ErasedBody>> {
    let erased = state.comments.erase_author(&author).await?;
    // Their photos' URLs answer 404 once the erasure is answered.
    removal::delete_unreferenced(&state, &erased.unreferenced_photos).await;
    let erased = erased.comments;
    // The orders they reviewed through, with the address and the requests.
    let orders = match &state.review_requests {
        Some(review_requests) => review_requests.requests.erase_author(&author).await?,
        None => 0,
    };
    staff
        .record(
            &state,
            "author.erase",
            Target::new("author", &author),
            Some(format!("{erased} comments and {orders} orders erased")),
        )
        .await;
    Ok(Json(ErasedBody { erased }))
}

#[utoipa::path(
    get,
    path = "/v1/products/{product_id}/stats",
    tag = "statistics",
    summary = "Counts by rating of a product, overall or in one language",
    description = "Published and flagged comments. Maintained from the change stream: eventually consistent, normally within a second.",
    params(
        ("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageCode>, Query, description = "One language code; absent = all languages"),
    ),
    responses(
        (status = 200, description = "The counts (all zero for a product without comments)", body = ProductStatsBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn product_stats(
    State(state): State<AppState>,
    Segment(product_id): Segment,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<ProductStatsBody>> {
    let params = Params::new(raw.as_deref(), &["language"], Dialect::Api)?;
    let stats = state
        .comments
        .product_stats(&product_id, params.value("language")?)
        .await?;
    Ok(Json(stats.into()))
}

/// Rows the leaderboard shows when the request does not say.
const LEADERBOARD_SIZE: usize = 10;

#[utoipa::path(
    get,
    path = "/v1/leaderboard",
    tag = "statistics",
    summary = "The products with the most 5-star comments",
    params(
        ("limit" = Option<PageSize>, Query, description = "1-100, default 10"),
        ("language" = Option<LanguageCode>, Query, description = "One language code; absent = all languages"),
    ),
    responses(
        (status = 200, description = "Most 5-star comments first; products with none are absent", body = LeaderboardBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn leaderboard(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<LeaderboardBody>> {
    let params = Params::new(raw.as_deref(), &["limit", "language"], Dialect::Api)?;
    let limit = params.limit(LEADERBOARD_SIZE)?;
    let leaders = state
        .comments
        .leaderboard(limit, params.value("language")?)
        .await?;
    Ok(Json(leaders.into()))
}

#[utoipa::path(
    get,
    path = "/v1/stats",
    tag = "statistics",
    summary = "Global aggregates",
    responses(
        (status = 200, description = "Totals over counted comments", body = GlobalStatsBody),
        Unavailable,
    )
)]
pub(crate) async fn global_stats(
    State(state): State<AppState>,
) -> ApiResult<Json<GlobalStatsBody>> {
    Ok(Json(state.comments.global_stats().await?.into()))
}

#[utoipa::path(
    get,
    path = "/v1/admin/aggregator",
    tag = "admin",
    summary = "The stream aggregator's position and lag (scope admin)",
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "Position and lag", body = AggregatorStatus),
        TokenRefused,
        (status = 503, description = "No aggregator runs in this process", body = Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn aggregator_status(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
) -> ApiResult<Json<AggregatorStatus>> {
    match &state.aggregator {
        Some(status) => Ok(Json(*status.borrow())),
        None => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no aggregator runs in this process (started with --no-aggregator?)",
        )),
    }
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    summary = "Prometheus metrics",
    responses((status = 200, description = "OpenMetrics text exposition", body = String, content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8"))
)]
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let aggregator = state.aggregator.as_ref().map(|status| *status.borrow());
    let text = state.metrics.render(
        state.comments.usage(),
        aggregator.as_ref(),
        state.request_counters.as_deref(),
    );
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// The web page: browse, filter, post, and moderate.
static PAGE: LazyLock<String> =
    LazyLock::new(|| crate::sort_labels::fill(include_str!("../web/index.html")));

/// The web page's HTML, for the hashes of its inline script and style.
pub(crate) fn page_text() -> &'static str {
    PAGE.as_str()
}

#[utoipa::path(
    get,
    path = "/",
    tag = "operations",
    summary = "The web page",
    responses((status = 200, description = "The page", body = String, content_type = "text/html"))
)]
pub(crate) async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE.as_str(),
    )
        .into_response()
}

/// Unknown paths answer with a problem document too.
pub(crate) async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}

pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not take that method",
    )
}

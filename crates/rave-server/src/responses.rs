//! The error responses the OpenAPI document lists, written once. Each is a
//! problem document (RFC 9457, `application/problem+json`) under one status;
//! handlers name the ones they can answer in `responses(...)` (400, 401,
//! 403, 404, 409, 413, 415, 429, 503), so every operation lists every
//! status it can answer. The types
//! describe responses only; `ApiError` builds the real ones.
#![allow(
    dead_code,
    reason = "only the OpenAPI document reads these types; they are never built"
)]

use utoipa::IntoResponses;

use crate::error::Problem;

#[derive(Debug, IntoResponses)]
#[response(
    status = 400,
    description = "A parameter, a field of the body or the cursor is not valid; `detail` names it",
    content_type = "application/problem+json"
)]
pub(crate) struct BadRequest(Problem);

/// What every staff endpoint answers without a token that holds its scope.
#[derive(Debug, IntoResponses)]
pub(crate) enum TokenRefused {
    #[response(
        status = 401,
        description = "No token, or one that is wrong or revoked",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    #[response(
        status = 403,
        description = "The token lacks the scope this endpoint needs (the problem names it)",
        content_type = "application/problem+json"
    )]
    Forbidden(Problem),
}

/// What a public write answers to a bearer token that is neither the admin
/// token nor a live access token: it is refused rather than ignored (no
/// token is fine).
#[derive(Debug, IntoResponses)]
#[response(
    status = 401,
    description = "A bearer token was sent and it is not valid",
    content_type = "application/problem+json"
)]
pub(crate) struct BadToken(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 404,
    description = "No such comment",
    content_type = "application/problem+json"
)]
pub(crate) struct NotFound(Problem);

/// What a change to one comment answers when other writers kept changing
/// it between each read and write, past the retries.
#[derive(Debug, IntoResponses)]
#[response(
    status = 409,
    description = "The comment kept changing under concurrent writes; try again",
    content_type = "application/problem+json"
)]
pub(crate) struct Contended(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 429,
    description = "Over the rate limit; `Retry-After` says when to try again",
    content_type = "application/problem+json"
)]
pub(crate) struct TooManyRequests(Problem);

/// What a JSON body can be refused for before its fields are read.
#[derive(Debug, IntoResponses)]
pub(crate) enum BodyRefused {
    #[response(
        status = 413,
        description = "The body is over 64 KiB",
        content_type = "application/problem+json"
    )]
    TooLarge(Problem),
    #[response(
        status = 415,
        description = "The body is not JSON",
        content_type = "application/problem+json"
    )]
    NotJson(Problem),
}

#[derive(Debug, IntoResponses)]
#[response(
    status = 503,
    description = "The store cannot serve now; `Retry-After` says when to try again",
    content_type = "application/problem+json"
)]
pub(crate) struct Unavailable(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 404,
    description = "No such webhook endpoint or delivery, or webhooks are not enabled",
    content_type = "application/problem+json"
)]
pub(crate) struct NoSuchWebhook(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 404,
    description = "Feeds are off: rave serve was started without --public-url",
    content_type = "application/problem+json"
)]
pub(crate) struct NoFeed(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 409,
    description = "The request does not fit the resource's state; `detail` says why",
    content_type = "application/problem+json"
)]
pub(crate) struct Conflict(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 422,
    description = "A moderation rule or the moderation hook refused the comment; `detail` names it (`moderation_hook` for the hook)",
    content_type = "application/problem+json"
)]
pub(crate) struct RefusedByRule(Problem);

#[derive(Debug, IntoResponses)]
#[response(
    status = 404,
    description = "No such photo or rendition",
    content_type = "application/problem+json"
)]
pub(crate) struct NoSuchMedia(Problem);

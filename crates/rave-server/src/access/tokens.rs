//! `/v1/admin/tokens`: scoped tokens, created (and shown) once, listed
//! without their secrets, revoked at once.

use crate::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use rave_access::{AccessToken, Scope, Scopes, Target};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::rfc3339;
use crate::callers::{Admin, Authorized};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::responses::{BadRequest, BodyRefused, TokenRefused, Unavailable};
use crate::routes::Segment;
use crate::state::AppState;

/// What a token may do; `admin` holds every other scope.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScopeName {
    Moderate,
    Reply,
    Erase,
    Import,
    Feed,
    Webhooks,
    Admin,
}

impl From<ScopeName> for Scope {
    fn from(name: ScopeName) -> Scope {
        match name {
            ScopeName::Moderate => Scope::Moderate,
            ScopeName::Reply => Scope::Reply,
            ScopeName::Erase => Scope::Erase,
            ScopeName::Import => Scope::Import,
            ScopeName::Feed => Scope::Feed,
            ScopeName::Webhooks => Scope::Webhooks,
            ScopeName::Admin => Scope::Admin,
        }
    }
}

impl From<Scope> for ScopeName {
    fn from(scope: Scope) -> ScopeName {
        match scope {
            Scope::Moderate => ScopeName::Moderate,
            Scope::Reply => ScopeName::Reply,
            Scope::Erase => ScopeName::Erase,
            Scope::Import => ScopeName::Import,
            Scope::Feed => ScopeName::Feed,
            Scope::Webhooks => ScopeName::Webhooks,
            Scope::Admin => ScopeName::Admin,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewTokenBody {
    /// Who or what will hold the token: the name the audit trail records.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f]([^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[schema(min_items = 1)]
    pub scopes: Vec<ScopeName>,
}

/// A token's record; `token` only in the answer to its creation.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenBody {
    pub id: String,
    pub name: String,
    pub scopes: Vec<ScopeName>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// The name of the token that created it.
    pub created_by: String,
    /// The bearer token, shown only here: rave keeps only its digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl TokenBody {
    fn of(token: &AccessToken, secret: Option<String>) -> TokenBody {
        TokenBody {
            id: token.id.clone(),
            name: token.name.clone(),
            scopes: token.scopes.iter().map(ScopeName::from).collect(),
            created_at: rfc3339(token.created_at_ms),
            created_by: token.created_by.clone(),
            token: secret,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenListBody {
    pub tokens: Vec<TokenBody>,
}

#[utoipa::path(
    post,
    path = "/v1/admin/tokens",
    tag = "admin",
    summary = "Create a scoped token (scope admin)",
    description = "The answer carries the token, shown only here: rave stores its SHA-256 digest. Scopes: `moderate` (approve, reject, edit, delete, the queue), `reply`, `erase` (an author's data), `import`, `feed`, `webhooks`, `admin` (everything).",
    request_body = NewTokenBody,
    security(("access_token" = ["admin"])),
    responses(
        (
            status = 201,
            description = "The token, with its secret",
            body = TokenBody,
            links(("RevokeToken" = (operation_id = "revoke_token", parameters(("id" = "$response.body#/id")))))
        ),
        BadRequest,
        TokenRefused,
        BodyRefused,
        Unavailable,
    )
)]
pub(crate) async fn create_token(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Admin>,
    JsonBody(body): JsonBody<NewTokenBody>,
) -> ApiResult<(StatusCode, Json<TokenBody>)> {
    if body.scopes.is_empty() {
        return Err(ApiError::bad_request("scopes: name at least one scope"));
    }
    let scopes = Scopes::new(body.scopes.into_iter().map(Scope::from));
    let issued = state
        .access
        .create_token(&body.name, scopes, &staff.actor.name)
        .await?;
    let scope_list: Vec<&str> = issued.record.scopes.iter().map(Scope::as_str).collect();
    staff
        .record(
            &state,
            "token.create",
            Target::new("token", &issued.record.id),
            Some(format!(
                "name {:?}, scopes {}",
                issued.record.name,
                scope_list.join(",")
            )),
        )
        .await;
    Ok((
        StatusCode::CREATED,
        Json(TokenBody::of(
            &issued.record,
            Some(issued.token.expose().to_owned()),
        )),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/admin/tokens",
    tag = "admin",
    summary = "List scoped tokens (scope admin)",
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "Every token, oldest first, without secrets", body = TokenListBody),
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn list_tokens(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
) -> ApiResult<Json<TokenListBody>> {
    let tokens = state.access.tokens().await?;
    Ok(Json(TokenListBody {
        tokens: tokens.iter().map(|t| TokenBody::of(t, None)).collect(),
    }))
}

#[utoipa::path(
    delete,
    path = "/v1/admin/tokens/{id}",
    tag = "admin",
    summary = "Revoke a scoped token (scope admin)",
    description = "The token stops working with the next request that presents it.",
    params(("id" = String, Path, description = "Token id")),
    security(("access_token" = ["admin"])),
    responses(
        (status = 204, description = "Revoked"),
        TokenRefused,
        (status = 404, description = "No such token", body = crate::error::Problem, content_type = "application/problem+json"),
        Unavailable,
    )
)]
pub(crate) async fn revoke_token(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Admin>,
    Segment(id): Segment,
) -> ApiResult<StatusCode> {
    let revoked = state.access.revoke_token(&id).await?;
    staff
        .record(
            &state,
            "token.revoke",
            Target::new("token", &revoked.id),
            Some(format!("name {:?}", revoked.name)),
        )
        .await;
    Ok(StatusCode::NO_CONTENT)
}

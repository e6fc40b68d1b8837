//! `/v1/admin/audit`: the trail of what staff did, newest first. Entries
//! are written by `callers::Staff::record` as each action succeeds; no
//! route edits or deletes one.

use crate::json::Json;
use axum::extract::{RawQuery, State};
use rave_access::{AuditQuery, Entry, Target};
use rave_comments::{DEFAULT_PAGE_SIZE, Timestamp};

use crate::api::rfc3339;
use serde::Serialize;
use utoipa::ToSchema;

use crate::callers::{Admin, Authorized};
use crate::error::{ApiError, ApiResult};
use crate::responses::{BadRequest, TokenRefused, Unavailable};
use crate::routes::query::{Dialect, Params};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditEntryBody {
    pub id: String,
    /// RFC 3339, UTC.
    pub at: String,
    /// The name of the token the action was taken with (`admin-token` for
    /// the operator's `--admin-token`).
    pub actor: String,
    /// The token's id; absent for the operator's `--admin-token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_token: Option<String>,
    /// `comment.approve`, `comment.reject`, `comment.edit`, `comment.delete`,
    /// `photo.approve`, `photo.reject` (target the comment, detail the photo),
    /// `reply.set`, `reply.delete`, `author.erase`, `product.put`,
    /// `webhook.create`, `webhook.delete`, `delivery.retry`,
    /// `token.create`, `token.revoke`, ...
    pub action: String,
    /// `comment`, `author`, `product`, `webhook`, `delivery`, `token`, ...
    pub target_kind: String,
    pub target_id: String,
    /// The client's address, as rave resolved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<Entry> for AuditEntryBody {
    fn from(entry: Entry) -> AuditEntryBody {
        AuditEntryBody {
            id: entry.id,
            at: rfc3339(entry.at_ms),
            actor: entry.actor.name,
            actor_token: entry.actor.token_id,
            action: entry.action,
            target_kind: entry.target.kind,
            target_id: entry.target.id,
            client: entry.client.map(|client| client.to_string()),
            detail: entry.detail,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditPageBody {
    pub entries: Vec<AuditEntryBody>,
    /// Pass as `cursor` for the next page; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/admin/audit",
    tag = "admin",
    summary = "The audit trail, newest first (scope admin)",
    description = "Who (the token's name) did what, to which comment, author, product, webhook or token, when, and from which client. Entries are kept for the server's `--audit-retention-days` and cannot be edited or deleted through the API.",
    params(
        ("actor" = Option<String>, Query, min_length = 1, description = "Only this token name's actions"),
        ("action" = Option<String>, Query, min_length = 1, description = "Only this action, such as comment.approve"),
        ("target" = Option<String>, Query, pattern = r"^[^:]+:.+$", description = "Only actions on this target, as kind:id (comment:01J…, author:anna)"),
        ("since" = Option<crate::api::UtcTime>, Query, description = "Only entries at or after this time"),
        ("until" = Option<crate::api::UtcTime>, Query, description = "Only entries before this time"),
        ("limit" = Option<crate::api::PageSize>, Query, description = "1-100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[0-9A-HJKMNP-TV-Z]{26}$", description = "The next_cursor of the previous page, for the same query"),
    ),
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "A page of the trail", body = AuditPageBody),
        BadRequest,
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn list_audit(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<AuditPageBody>> {
    let params = Params::new(
        raw.as_deref(),
        &[
            "actor", "action", "target", "since", "until", "limit", "cursor",
        ],
        Dialect::Api,
    )?;
    let target = params
        .value("target")?
        .map(|target| match target.split_once(':') {
            Some((kind, id)) if !kind.is_empty() && !id.is_empty() => Ok(Target::new(kind, id)),
            _ => Err(ApiError::bad_request(
                "target: must be kind:id, such as comment:01JD… or author:anna",
            )),
        })
        .transpose()?;
    let named = |name: &str| -> ApiResult<Option<String>> {
        match params.value(name)? {
            Some("") => Err(ApiError::bad_request(format!("{name}: must not be empty"))),
            value => Ok(value.map(str::to_owned)),
        }
    };
    let query = AuditQuery {
        target,
        actor: named("actor")?,
        action: named("action")?,
        since_ms: time_param(&params, "since")?,
        until_ms: time_param(&params, "until")?,
    };
    let page = state
        .access
        .audit(
            &query,
            params.limit(DEFAULT_PAGE_SIZE)?,
            params.value("cursor")?,
        )
        .await?;
    Ok(Json(AuditPageBody {
        entries: page.entries.into_iter().map(AuditEntryBody::from).collect(),
        next_cursor: page.next,
    }))
}

fn time_param(params: &Params, name: &str) -> ApiResult<Option<u64>> {
    params
        .value(name)?
        .map(|value| {
            Timestamp::parse(value)
                .ok()
                .and_then(|time| u64::try_from(time.millis()).ok())
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "{name}: must be an RFC 3339 time in UTC such as 2026-11-27T10:00:00Z"
                    ))
                })
        })
        .transpose()
}

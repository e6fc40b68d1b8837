//! Who may call: staff holding a token with the scope an endpoint needs,
//! and public writers after the rate limit, as request-parts extractors
//! over the shared state. Being request-parts extractors, they run before
//! the body is read: authentication and the per-client rate limit (staff
//! exempt) come first, so an unauthenticated caller learns nothing about
//! bodies.
//!
//! A bearer token is either the operator's `--admin-token` (checked in
//! memory, every scope) or a token from the access table (read on every
//! call, so a revoked one stops working at once). A missing or unknown
//! token answers 401; a token without the endpoint's scope 403 naming it.

use std::marker::PhantomData;
use std::net::IpAddr;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_access::{Actor, NewEntry, Scope, Scopes, Target};

use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::state::AppState;

/// The name the audit trail gives the operator's `--admin-token`.
pub(crate) const ADMIN_TOKEN_NAME: &str = "admin-token";
/// The name of `--feed-token`.
const FEED_TOKEN_NAME: &str = "feed-token";

/// A caller with a valid token.
#[derive(Debug, Clone)]
pub(crate) struct Staff {
    pub actor: Actor,
    pub scopes: Scopes,
    pub client: Option<IpAddr>,
}

impl Staff {
    /// Appends what this caller did to the audit trail, once it is done.
    /// The action has happened by then: a trail that cannot be written is
    /// logged with every field (the log is the trail of last resort) and
    /// counted, not answered as a failure of the action.
    pub(crate) async fn record(
        &self,
        state: &AppState,
        action: &str,
        target: Target,
        detail: Option<String>,
    ) {
        let entry = NewEntry {
            actor: self.actor.clone(),
            action: action.to_owned(),
            target,
            client: self.client,
            detail,
        };
        if let Err(error) = state.access.record(entry.clone()).await {
            state.metrics.audit_write_failed();
            tracing::error!(
                %error,
                actor = %entry.actor.name,
                action = %entry.action,
                target_kind = %entry.target.kind,
                target_id = %entry.target.id,
                client = ?entry.client,
                detail = ?entry.detail,
                "the audit trail could not record an action"
            );
        }
    }
}

/// Who is calling a public endpoint.
#[derive(Debug, Clone)]
pub(crate) enum Caller {
    Public,
    Staff(Staff),
}

impl Caller {
    pub(crate) fn allows(&self, scope: Scope) -> bool {
        match self {
            Caller::Public => false,
            Caller::Staff(staff) => staff.scopes.allow(scope),
        }
    }
}

/// The scope an endpoint needs, as a type: `Authorized<Moderate>`.
pub(crate) trait Needs {
    const SCOPE: Scope;
}

/// One marker type per scope, named as the scope.
macro_rules! scope_markers {
    ($($scope:ident),*) => {$(
        #[derive(Debug)]
        pub(crate) struct $scope;
        impl Needs for $scope {
            const SCOPE: Scope = Scope::$scope;
        }
    )*};
}

scope_markers!(Moderate, Reply, Erase, Import, Feed, Webhooks, Admin);

/// Admits staff whose token holds `N`'s scope (or `admin`).
#[derive(Debug)]
pub(crate) struct Authorized<N>(pub Staff, pub PhantomData<N>);

impl<N: Needs + Send + Sync> FromRequestParts<AppState> for Authorized<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let needed = N::SCOPE;
        let Some(staff) = authenticate(parts, state).await? else {
            return Err(ApiError::unauthorized(format!(
                "this endpoint needs Authorization: Bearer <token> with the scope {needed}"
            )));
        };
        if !staff.scopes.allow(needed) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "the token {:?} lacks the scope {needed} this endpoint needs",
                    staff.actor.name
                ),
            ));
        }
        Ok(Authorized(staff, PhantomData))
    }
}

/// The caller of a public write, after the rate limit: public callers are
/// limited per client address, staff are not.
#[derive(Debug)]
pub(crate) struct Writer(pub Caller);

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Writer, ApiError> {
        match authenticate(parts, state).await? {
            Some(staff) => Ok(Writer(Caller::Staff(staff))),
            None => {
                if let Some(ClientAddr(client)) = parts.extensions.get::<ClientAddr>() {
                    state.check_rate(*client)?;
                }
                Ok(Writer(Caller::Public))
            }
        }
    }
}

/// The staff member the request's bearer token names; `None` without one.
/// A token that is neither the admin token nor a live access token is
/// refused rather than ignored.
async fn authenticate(parts: &Parts, state: &AppState) -> Result<Option<Staff>, ApiError> {
    let Some(presented) = presented_token(&parts.headers)? else {
        return Ok(None);
    };
    let client = parts
        .extensions
        .get::<ClientAddr>()
        .map(|ClientAddr(client)| *client);
    let configured = [
        (&state.admin, ADMIN_TOKEN_NAME, Scopes::everything()),
        (
            &state.feed_token,
            FEED_TOKEN_NAME,
            Scopes::new([Scope::Feed]),
        ),
    ];
    for (token, name, scopes) in configured {
        if token.matches(&presented) {
            return Ok(Some(Staff {
                actor: Actor {
                    name: name.into(),
                    token_id: None,
                },
                scopes,
                client,
            }));
        }
    }
    match state.access.authenticate(&presented).await? {
        Some(token) => Ok(Some(Staff {
            actor: Actor {
                name: token.name,
                token_id: Some(token.id),
            },
            scopes: token.scopes,
            client,
        })),
        None => Err(ApiError::unauthorized("the bearer token is not valid")),
    }
}

/// The token of the Authorization header: a Bearer token, or the password
/// of Basic authentication (RFC 7617; the user name is ignored), which is
/// what feed readers such as Merchant Center's scheduled fetch can send.
fn presented_token(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let invalid = || ApiError::unauthorized("the Authorization header is not valid");
    let value = value.to_str().map_err(|_| invalid())?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            Ok(Some(token.trim().to_owned()))
        }
        Some((scheme, credentials)) if scheme.eq_ignore_ascii_case("basic") => {
            let decoded = STANDARD.decode(credentials.trim()).map_err(|_| invalid())?;
            let decoded = String::from_utf8(decoded).map_err(|_| invalid())?;
            let (_, password) = decoded.split_once(':').ok_or_else(invalid)?;
            Ok(Some(password.to_owned()))
        }
        _ => Err(ApiError::unauthorized(
            "Authorization must use the Bearer (or Basic) scheme",
        )),
    }
}

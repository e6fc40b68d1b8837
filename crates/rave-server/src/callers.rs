//! Who may call: the admin, and public writers after the rate limit, as
//! request-parts extractors over the shared state. Being request-parts
//! extractors, they run before the body is read: authentication and the
//! per-client rate limit (admin requests exempt) come first.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::extract::Caller;
use crate::state::AppState;

/// Admits only the admin. As a request-parts extractor it runs before the
/// body is read, so an unauthenticated caller learns nothing about bodies.
#[derive(Debug)]
pub(crate) struct Admin;

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Admin, ApiError> {
        state.admin.require(&parts.headers)?;
        Ok(Admin)
    }
}

/// The caller of a public write, after the rate limit: public callers are
/// limited per client address, the admin is not.
#[derive(Debug)]
pub(crate) struct Writer(pub Caller);

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Writer, ApiError> {
        let caller = state.admin.caller(&parts.headers)?;
        if caller == Caller::Public
            && let Some(ClientAddr(client)) = parts.extensions.get::<ClientAddr>()
        {
            state.check_rate(*client)?;
        }
        Ok(Writer(caller))
    }
}

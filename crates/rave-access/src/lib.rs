//! Who may do what in rave, and what they did.
//!
//! * `scope` — the permissions a token can hold (`moderate`, `reply`,
//!   `erase`, `import`, `feed`, `webhooks`, `admin`).
//! * `token` — the token string and what is kept of it: a SHA-256 digest,
//!   never the token.
//! * `audit` — the trail's entries and the queries that list them.
//! * `table` — the access table's layout (`<table>-access`).
//! * `service` — [`Access`]: creating, listing, revoking and checking
//!   tokens; appending to and listing the trail.
//!
//! The HTTP server decides which scope each endpoint needs and what each
//! action records; this crate knows nothing of HTTP or of comments.

#![warn(unreachable_pub)]

mod audit;
mod error;
mod scope;
mod service;
mod table;
mod token;

pub use audit::{Actor, AuditPage, AuditQuery, Entry, NewEntry, Target};
pub use error::{AccessError, Result};
pub use scope::{Scope, Scopes, UnknownScope};
pub use service::{Access, AccessConfig, DEFAULT_AUDIT_RETENTION, MAX_AUDIT_PAGE};
pub use table::table_name;
pub use token::{AccessToken, IssuedToken, MAX_NAME_CHARS, Secret};

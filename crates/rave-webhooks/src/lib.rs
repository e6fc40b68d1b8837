//! rave's webhooks: the comments table's change stream delivered to
//! registered endpoints as signed HTTP requests.
//!
//! * `events` — what a change of the table means: `comment.created`,
//!   `comment.published`, `comment.flagged`, `comment.updated`,
//!   `comment.deleted`.
//! * `signing` — the Standard Webhooks signature and `whsec_` secrets.
//! * `target` — safe targets: http/https only, internal addresses refused
//!   after resolution, no redirects, timeouts.

pub mod events;
pub mod signing;
pub mod target;

pub use events::{Event, EventType, UnknownEvent, events_of};
pub use signing::{Secret, SecretError};
pub use target::{TargetError, TargetPolicy, Timeouts, is_forbidden};

//! rave's webhooks: the comments table's change stream delivered to
//! registered endpoints as signed HTTP requests.
//!
//! The webhooks are the stream's second consumer, beside the statistics
//! aggregator, and keep their state in a table of their own
//! (`<table>-webhooks`, laid out by `table` alone): deliveries written
//! there never appear on the comments table's stream, and the comments
//! table's layout stays rave-comments'. Delivery is at least once: every
//! event becomes exactly one delivery per endpoint, and a crash between
//! sending and recording sends it again with the same `webhook-id`.
//!
//! * `events` — what a change of the table means: `comment.created`,
//!   `comment.published`, `comment.flagged`, `comment.updated`,
//!   `comment.deleted`, `comment.replied`, `comment.voted`.
//! * `signing` — the Standard Webhooks signature and `whsec_` secrets.
//! * Safe targets (http/https only, internal addresses refused after
//!   resolution, no redirects, timeouts) are rave-outbound's, shared with
//!   the moderation hook and imported photos; re-exported here.
//! * `table` — the webhooks table's layout (endpoints, deliveries, the
//!   sparse queue of pending deliveries).
//! * `service` — `Webhooks`: endpoints and deliveries in that table.
//! * `fanout` — the change-stream consumer that writes deliveries.
//! * `photos` — a comment's photos in a payload, with the URLs the binary
//!   says photos are reached at (`PhotoLinks`).
//! * `sender` — one task per endpoint sending its queue in order.

#![warn(unreachable_pub)]

mod delivery;
mod endpoint;
mod error;
mod events;
mod fanout;
mod photos;
mod sender;
mod service;
mod signing;
mod table;

pub use delivery::{Delivery, DeliveryStatus, RetryPolicy};
pub use endpoint::{Endpoint, MAX_ENDPOINTS};
pub use error::{Malformed, Result, WebhookError};
pub use events::{Event, EventType, UnknownEvent, events_of};
pub use fanout::CONSUMER;
pub use photos::{PhotoLinks, PhotoUrls};
pub use rave_outbound::{TargetError, TargetPolicy, Timeouts, client as http_client, is_forbidden};
pub use sender::{FanOutProgress, Sender, attempt, run};
pub use service::{MAX_LISTED_DELIVERIES, WebhookConfig, Webhooks};
pub use signing::{Secret, SecretError};
pub use table::table_name;

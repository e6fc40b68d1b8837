//! Review requests: most reviews arrive because the shop asked after
//! delivery. An order comes in (`POST /v1/admin/orders`), its first request
//! falls due some days after delivery and one reminder some days later if
//! nothing was reviewed; a scheduler sends each due request once, by email
//! or as a signed webhook; the request's link to the review form is the
//! proof of purchase.
//!
//! * `model` — orders, requests, the schedule's settings, and the checks
//!   an order passes before anything is stored.
//! * `table` — the requests table's layout (`<table>-requests`): orders
//!   and addresses never enter the comments table.
//! * `service` — [`Requests`]: orders in (idempotent, rescheduled when the
//!   delivery moves), cancellations, opt-outs, reviews recorded, listings,
//!   erasure.
//! * `scheduler` — sending due requests exactly once across servers (a
//!   conditional claim with a lease), retries with backoff for a day.
//! * `links` — signed review and unsubscribe links.
//! * `channel`, `mail` — what a request becomes; email over SMTP with
//!   templates in the customer's language and one-click unsubscribe.
//! * `clock` — where `now` comes from, so the tests move time by hand.

#![warn(unreachable_pub)]

mod channel;
mod clock;
mod error;
mod links;
mod mail;
mod model;
mod scheduler;
mod service;
mod table;

pub use channel::{
    Catalog, Channel, LookupFuture, ProductLine, RequestMessage, SendError, SendFuture,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{RequestsError, Result};
pub use links::{Links, REVIEW_LINK_LIFETIME_MS};
pub use mail::{SmtpChannel, Templates};
pub use model::{
    LANGUAGES, MAX_DELIVERY_AGE, MAX_DELIVERY_AHEAD, MAX_PRODUCTS, Order, Request, RequestKind,
    RequestStatus, Schedule,
};
pub use scheduler::{Counters, DEFAULT_POLL, Pass, Scheduler};
pub use service::{OrderPut, ProductFigures, RequestPage, Requests};
pub use table::table_name;

//! Registered endpoints: where events go, which ones, and the secret they
//! are signed with.

use crate::events::EventType;
use crate::signing::Secret;

/// Most endpoints a table may have. A change makes at most two events, and
/// the deliveries of one change are written in one commit of the feed
/// (at most 99 actions on DynamoDB), so 40 endpoints always fit.
pub const MAX_ENDPOINTS: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: String,
    pub url: String,
    /// The events it subscribed to, without repeats.
    pub events: Vec<EventType>,
    pub secret: Secret,
    pub created_at_ms: i64,
}

impl Endpoint {
    pub fn wants(&self, event: EventType) -> bool {
        self.events.contains(&event)
    }
}

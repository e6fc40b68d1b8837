//! Orders, the requests scheduled for them, and the rules an order is
//! checked against before anything is stored.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use lettre::Address;

use crate::error::{RequestsError, Result};

/// A delivery further back than this is too old to ask about.
pub const MAX_DELIVERY_AGE: Duration = Duration::from_secs(90 * 24 * 60 * 60);
/// A delivery this far ahead is a mistake, not a plan.
pub const MAX_DELIVERY_AHEAD: Duration = Duration::from_secs(24 * 60 * 60);
/// Most products one order may name.
pub const MAX_PRODUCTS: usize = 50;
/// The languages rave's own templates are written in.
pub const LANGUAGES: [&str; 4] = ["en", "de", "fr", "es"];

/// An order as the shop reports it once it is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: String,
    /// Where the requests go; never shown, logged or sent in a webhook.
    pub email: String,
    pub name: String,
    /// A BCP 47 tag (`de`, `fr-CA`); requests are written in its language
    /// when rave has it, in English otherwise.
    pub locale: String,
    pub delivered_at_ms: u64,
    pub products: Vec<String>,
}

impl Order {
    /// Checks every field; `now_ms` bounds `delivered_at`.
    pub fn validate(mut self, now_ms: u64) -> Result<Order> {
        let id_chars = self.id.chars().count();
        if id_chars == 0 || id_chars > 128 || self.id.chars().any(char::is_control) {
            return Err(RequestsError::invalid(
                "order_id",
                "must be 1-128 characters without control characters",
            ));
        }
        self.email = self.email.trim().to_owned();
        if self.email.parse::<Address>().is_err() || self.email.len() > 254 {
            return Err(RequestsError::invalid(
                "email",
                "must be an email address such as anna@example.com",
            ));
        }
        let name_chars = self.name.chars().count();
        if name_chars == 0 || name_chars > 100 || self.name.chars().any(char::is_control) {
            return Err(RequestsError::invalid(
                "name",
                "must be 1-100 characters without control characters",
            ));
        }
        if !is_locale(&self.locale) {
            return Err(RequestsError::invalid(
                "locale",
                "must be a language tag such as en, de or fr-CA",
            ));
        }
        let oldest = now_ms.saturating_sub(millis(MAX_DELIVERY_AGE));
        let latest = now_ms.saturating_add(millis(MAX_DELIVERY_AHEAD));
        if self.delivered_at_ms < oldest || self.delivered_at_ms > latest {
            return Err(RequestsError::invalid(
                "delivered_at",
                "must be within the last 90 days (and not more than a day ahead)",
            ));
        }
        if self.products.is_empty() || self.products.len() > MAX_PRODUCTS {
            return Err(RequestsError::invalid(
                "products",
                format!("must name 1-{MAX_PRODUCTS} products"),
            ));
        }
        if let Some(bad) = self.products.iter().find(|p| !is_product_id(p)) {
            return Err(RequestsError::invalid(
                "products",
                format!("{bad:?} is not a product id (1-64 characters of A-Z a-z 0-9 _ -)"),
            ));
        }
        self.products.sort();
        self.products.dedup();
        Ok(self)
    }

    /// The language of rave's templates this order's requests use.
    pub fn language(&self) -> &'static str {
        let primary = self.locale.split(['-', '_']).next().unwrap_or("");
        LANGUAGES
            .into_iter()
            .find(|lang| primary.eq_ignore_ascii_case(lang))
            .unwrap_or("en")
    }
}

fn is_locale(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let primary_ok = parts
        .next()
        .is_some_and(|p| (2..=3).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphabetic()));
    primary_ok
        && parts.all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn is_product_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The first request, or the one reminder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestKind {
    First,
    Reminder,
}

impl RequestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::First => "first",
            RequestKind::Reminder => "reminder",
        }
    }
}

impl FromStr for RequestKind {
    type Err = ();

    fn from_str(s: &str) -> Result<RequestKind, ()> {
        match s {
            "first" => Ok(RequestKind::First),
            "reminder" => Ok(RequestKind::Reminder),
            _ => Err(()),
        }
    }
}

/// Where a request is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestStatus {
    /// Waiting for its time (or for the next attempt after a failure).
    Scheduled,
    Sent,
    /// Every attempt for a day failed; `last_error` keeps the last reply.
    Failed,
    /// Not sent: the customer reviewed, opted out, or is blocked.
    Skipped,
}

impl RequestStatus {
    pub const ALL: [RequestStatus; 4] = [
        RequestStatus::Scheduled,
        RequestStatus::Sent,
        RequestStatus::Failed,
        RequestStatus::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Scheduled => "scheduled",
            RequestStatus::Sent => "sent",
            RequestStatus::Failed => "failed",
            RequestStatus::Skipped => "skipped",
        }
    }
}

impl fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RequestStatus {
    type Err = ();

    fn from_str(s: &str) -> Result<RequestStatus, ()> {
        RequestStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or(())
    }
}

/// One request of an order, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub order_id: String,
    pub kind: RequestKind,
    pub status: RequestStatus,
    pub due_at_ms: u64,
    pub attempts: u32,
    /// When the first attempt was made: failures are retried for a day
    /// from then.
    pub first_attempt_ms: Option<u64>,
    pub sent_at_ms: Option<u64>,
    /// The SMTP server's (or webhook's) last refusal.
    pub last_error: Option<String>,
    /// Why it was skipped.
    pub skipped_because: Option<String>,
}

/// When requests go out, and to whom not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// After delivery, before the first request.
    pub delay: Duration,
    /// After the first request, before the one reminder (if nothing was
    /// reviewed); `None`: no reminder.
    pub reminder_after: Option<Duration>,
    /// How long failed attempts are retried before the request fails.
    pub retry_for: Duration,
    /// Products never asked about.
    pub blocked_products: Vec<String>,
    /// Addresses never written to (compared without case).
    pub blocked_customers: Vec<String>,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            delay: Duration::from_secs(7 * 24 * 60 * 60),
            reminder_after: Some(Duration::from_secs(7 * 24 * 60 * 60)),
            retry_for: Duration::from_secs(24 * 60 * 60),
            blocked_products: Vec::new(),
            blocked_customers: Vec::new(),
        }
    }
}

impl Schedule {
    /// When `kind` is due for an order delivered at `delivered_at_ms`.
    pub(crate) fn due_at(&self, kind: RequestKind, delivered_at_ms: u64) -> Option<u64> {
        let first = delivered_at_ms.saturating_add(millis(self.delay));
        match kind {
            RequestKind::First => Some(first),
            RequestKind::Reminder => self
                .reminder_after
                .map(|after| first.saturating_add(millis(after))),
        }
    }

    pub(crate) fn blocks_customer(&self, email: &str) -> bool {
        self.blocked_customers
            .iter()
            .any(|blocked| blocked.eq_ignore_ascii_case(email))
    }
}

/// How long after a failed attempt the next one is made: doubling from a
/// minute, at most an hour apart.
pub(crate) fn backoff_ms(attempts: u32) -> u64 {
    let minute = 60_000u64;
    minute
        .saturating_mul(1u64 << attempts.saturating_sub(1).min(6))
        .min(60 * minute)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_MS: u64 = 24 * 60 * 60 * 1000;
    const NOW: u64 = 1_790_000_000_000;

    fn order() -> Order {
        Order {
            id: "A-1001".into(),
            email: " anna@example.com ".into(),
            name: "Anna".into(),
            locale: "de-AT".into(),
            delivered_at_ms: NOW - DAY_MS,
            products: vec!["lamp".into(), "cable".into(), "lamp".into()],
        }
    }

    #[test]
    fn a_good_order_is_kept_tidied() {
        let order = order().validate(NOW).unwrap();
        assert_eq!(order.email, "anna@example.com");
        assert_eq!(order.products, ["cable", "lamp"]);
        assert_eq!(order.language(), "de");
        let mut other = order.clone();
        other.locale = "pt-BR".into();
        assert_eq!(other.language(), "en");
    }

    #[test]
    fn each_bad_field_is_named() {
        type Breaks = fn(&mut Order);
        let cases: [(&str, Breaks); 9] = [
            ("order_id", |o| o.id.clear()),
            ("email", |o| o.email = "anna".into()),
            ("email", |o| o.email = "anna@".into()),
            ("name", |o| o.name = "a\u{7}".into()),
            ("locale", |o| o.locale = "german".into()),
            ("delivered_at", |o| o.delivered_at_ms = NOW + 2 * DAY_MS),
            ("delivered_at", |o| o.delivered_at_ms = NOW - 91 * DAY_MS),
            ("products", |o| o.products.clear()),
            ("products", |o| o.products = vec!["a b".into()]),
        ];
        for (field, break_it) in cases {
            let mut bad = order();
            break_it(&mut bad);
            match bad.validate(NOW) {
                Err(RequestsError::Invalid { field: named, .. }) => assert_eq!(named, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn requests_fall_due_after_the_delay_and_retries_back_off() {
        let schedule = Schedule::default();
        assert_eq!(schedule.due_at(RequestKind::First, 0), Some(7 * DAY_MS));
        assert_eq!(schedule.due_at(RequestKind::Reminder, 0), Some(14 * DAY_MS));
        let no_reminder = Schedule {
            reminder_after: None,
            ..Schedule::default()
        };
        assert_eq!(no_reminder.due_at(RequestKind::Reminder, 0), None);
        assert_eq!(backoff_ms(1), 60_000);
        assert_eq!(backoff_ms(2), 120_000);
        assert_eq!(backoff_ms(30), 3_600_000);
    }
}

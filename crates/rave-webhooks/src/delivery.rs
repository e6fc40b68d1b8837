//! One event for one endpoint, and what became of it.

use std::time::Duration;

use crate::events::EventType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Not delivered yet; attempts go on until it is, or until its deadline.
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// Every attempt until the deadline failed; an admin may send it again.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<DeliveryStatus> {
        match text {
            "pending" => Some(DeliveryStatus::Pending),
            "delivered" => Some(DeliveryStatus::Delivered),
            "failed" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }
}

/// How long finished deliveries stay listed before Time to Live removes
/// them: a week for delivered ones, a month for failed ones (someone may
/// want to send them again).
const DELIVERED_RETENTION_SECONDS: i64 = 7 * 24 * 3600;
const FAILED_RETENTION_SECONDS: i64 = 30 * 24 * 3600;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub endpoint_id: String,
    /// A ULID made when the change was read: deliveries of an endpoint sort
    /// in the stream's order.
    pub id: String,
    pub event: EventType,
    /// The exact JSON sent (and signed), the same on every attempt.
    pub body: String,
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub next_attempt_at_ms: i64,
    /// After a failed attempt past this time the delivery is failed.
    pub give_up_at_ms: i64,
    pub finished_at_ms: Option<i64>,
}

impl Delivery {
    /// The `webhook-id` header: the same on every attempt, so a receiver
    /// can drop duplicates.
    pub fn message_id(&self) -> String {
        format!("msg_{}", self.id)
    }

    pub(crate) fn retention_seconds(&self) -> i64 {
        match self.status {
            DeliveryStatus::Failed => FAILED_RETENTION_SECONDS,
            _ => DELIVERED_RETENTION_SECONDS,
        }
    }

    /// The delivery after a successful attempt at `now_ms`.
    pub(crate) fn delivered(mut self, now_ms: i64) -> Delivery {
        self.attempts += 1;
        self.status = DeliveryStatus::Delivered;
        self.last_error = None;
        self.finished_at_ms = Some(now_ms);
        self
    }

    /// The delivery after a failed attempt at `now_ms`: retried after the
    /// backoff, with one last attempt at the deadline, then failed.
    pub(crate) fn attempt_failed(
        mut self,
        now_ms: i64,
        error: String,
        retry: &RetryPolicy,
    ) -> Delivery {
        self.attempts += 1;
        self.last_error = Some(error);
        if now_ms >= self.give_up_at_ms {
            self.status = DeliveryStatus::Failed;
            self.finished_at_ms = Some(now_ms);
        } else {
            let wait = retry.backoff(self.attempts);
            let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
            self.next_attempt_at_ms = now_ms.saturating_add(wait_ms).min(self.give_up_at_ms);
        }
        self
    }

    /// A failed delivery made pending again, with a new deadline.
    pub(crate) fn resent(mut self, now_ms: i64, retry: &RetryPolicy) -> Delivery {
        self.status = DeliveryStatus::Pending;
        self.next_attempt_at_ms = now_ms;
        self.give_up_at_ms = now_ms.saturating_add(retry.retry_for_ms());
        self.finished_at_ms = None;
        self
    }
}

/// How failed attempts are retried: exponential backoff from `first_wait`,
/// doubling up to `longest_wait`, for `retry_for` after the delivery was
/// made; then it is failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub first_wait: Duration,
    pub longest_wait: Duration,
    pub retry_for: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            first_wait: Duration::from_secs(5),
            longest_wait: Duration::from_secs(3600),
            retry_for: Duration::from_secs(24 * 3600),
        }
    }
}

impl RetryPolicy {
    /// The wait after the `attempts`-th failed attempt.
    pub fn backoff(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(31);
        self.first_wait
            .saturating_mul(1u32 << doublings)
            .min(self.longest_wait)
    }

    pub(crate) fn retry_for_ms(&self) -> i64 {
        i64::try_from(self.retry_for.as_millis()).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending() -> Delivery {
        Delivery {
            endpoint_id: "e".into(),
            id: "01J00000000000000000000000".into(),
            event: EventType::Created,
            body: "{}".into(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            last_error: None,
            created_at_ms: 0,
            next_attempt_at_ms: 0,
            give_up_at_ms: 100_000,
            finished_at_ms: None,
        }
    }

    const POLICY: RetryPolicy = RetryPolicy {
        first_wait: Duration::from_secs(1),
        longest_wait: Duration::from_secs(30),
        retry_for: Duration::from_secs(100),
    };

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let waits: Vec<u64> = (1..=7).map(|a| POLICY.backoff(a).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(POLICY.backoff(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn failures_are_retried_until_the_deadline_then_failed() {
        let mut delivery = pending();
        let mut now = 0;
        let mut times = Vec::new();
        while delivery.status == DeliveryStatus::Pending {
            delivery = delivery.attempt_failed(now, "HTTP 500".into(), &POLICY);
            times.push(now / 1000);
            now = delivery.next_attempt_at_ms;
        }
        // 1, 2, 4, 8, 16, 30, 30 seconds apart, a last attempt at the deadline.
        assert_eq!(times, [0, 1, 3, 7, 15, 31, 61, 91, 100]);
        assert_eq!(delivery.status, DeliveryStatus::Failed);
        assert_eq!(delivery.attempts, 9);
        assert_eq!(delivery.last_error.as_deref(), Some("HTTP 500"));
        let again = delivery.resent(200_000, &POLICY);
        assert_eq!(again.status, DeliveryStatus::Pending);
        assert_eq!(again.give_up_at_ms, 300_000);
        assert_eq!(again.message_id(), pending().message_id());
    }

    #[test]
    fn success_finishes_the_delivery() {
        let delivered = pending().delivered(5);
        assert_eq!(delivered.status, DeliveryStatus::Delivered);
        assert_eq!((delivered.attempts, delivered.finished_at_ms), (1, Some(5)));
    }
}

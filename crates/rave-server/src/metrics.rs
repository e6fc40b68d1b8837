//! Prometheus metrics (prometheus-client, one registry per server):
//! requests and latency per route, capacity consumed, the aggregator's lag,
//! the rate limiter's size and the answers served as kept.
//!
//! Every label value comes from a closed set — a method the server knows, a
//! route template, a status code the server chose; `OTHER` for a method
//! and `unmatched` for a route outside them — so no client can add
//! series: each new label set is memory the server keeps until it stops.

use std::sync::Mutex;

use axum::http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AnswerLabels {
    /// `comments`, `stats` or `product`.
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestOutcomeLabels {
    /// `sent`, `failed` (for good), `retried` or `skipped`.
    outcome: &'static str,
}

/// The service's metrics and their registry.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    read_units: Gauge<f64, std::sync::atomic::AtomicU64>,
    write_units: Gauge<f64, std::sync::atomic::AtomicU64>,
    items_read: Gauge,
    aggregator_lag_events: Gauge,
    aggregator_lag_seconds: Gauge<f64, std::sync::atomic::AtomicU64>,
    rate_limited_clients: Gauge,
    answers_reused: Family<AnswerLabels, Counter>,
    audit_write_failures: Counter,
    review_requests: Family<RequestOutcomeLabels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::with_prefix("rave");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
        });
        let read_units = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        let write_units = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        let items_read = Gauge::default();
        let aggregator_lag_events = Gauge::default();
        let aggregator_lag_seconds = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        let rate_limited_clients = Gauge::default();
        let answers_reused = Family::<AnswerLabels, Counter>::default();
        let audit_write_failures = Counter::default();
        let review_requests = Family::<RequestOutcomeLabels, Counter>::default();
        registry.register(
            "review_requests",
            "Review requests this process's scheduler handled, by outcome: sent, failed (for good, after a day of retries), retried (an attempt refused), skipped (reviewed, unsubscribed, blocked)",
            review_requests.clone(),
        );
        registry.register(
            "audit_write_failures",
            "Staff actions the audit trail could not record (each is logged instead)",
            audit_write_failures.clone(),
        );
        registry.register(
            "answers_reused",
            "JSON answers (listings, statistics, product records) served as kept because nothing changed since they were read",
            answers_reused.clone(),
        );
        registry.register(
            "aggregator_lag_events",
            "Stream changes committed but not yet applied to the statistics",
            aggregator_lag_events.clone(),
        );
        registry.register(
            "aggregator_lag_seconds",
            "Age of the oldest change not yet applied to the statistics",
            aggregator_lag_seconds.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        registry.register(
            "read_capacity_units",
            "Read units consumed since start",
            read_units.clone(),
        );
        registry.register(
            "write_capacity_units",
            "Write units consumed since start",
            write_units.clone(),
        );
        registry.register(
            "items_read",
            "Items read from the store since start",
            items_read.clone(),
        );
        registry.register(
            "rate_limited_clients",
            "Clients with a rate-limit bucket of their own (the limiter's memory)",
            rate_limited_clients.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
            latency,
            read_units,
            write_units,
            items_read,
            aggregator_lag_events,
            aggregator_lag_seconds,
            rate_limited_clients,
            answers_reused,
            audit_write_failures,
            review_requests,
        }
    }
}

impl Metrics {
    pub(crate) fn observe(&self, method: &'static str, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method,
                route: route.to_owned(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                method,
                route: route.to_owned(),
            })
            .observe(seconds);
    }

    /// Counts an answer of `kind` served as kept.
    pub(crate) fn answer_reused(&self, kind: &'static str) {
        self.answers_reused
            .get_or_create(&AnswerLabels { kind })
            .inc();
    }

    /// The gauge the rate limiter keeps its number of buckets in.
    pub(crate) fn audit_write_failed(&self) {
        self.audit_write_failures.inc();
    }

    pub(crate) fn rate_limited_clients(&self) -> Gauge {
        self.rate_limited_clients.clone()
    }

    /// The text exposition, with the capacity gauges brought up to date.
    pub fn render(
        &self,
        usage: &rave_comments::Usage,
        aggregator: Option<&crate::AggregatorStatus>,
        requests: Option<&rave_requests::Counters>,
    ) -> String {
        if let Some(counters) = requests {
            let outcomes = [
                ("sent", &counters.sent),
                ("failed", &counters.failed),
                ("retried", &counters.retried),
                ("skipped", &counters.skipped),
            ];
            for (outcome, count) in outcomes {
                let counter = self
                    .review_requests
                    .get_or_create(&RequestOutcomeLabels { outcome });
                let now = count.load(std::sync::atomic::Ordering::Relaxed);
                counter.inc_by(now.saturating_sub(counter.get()));
            }
        }
        if let Some(status) = aggregator {
            self.aggregator_lag_events
                .set(i64::try_from(status.lag_events).unwrap_or(i64::MAX));
            self.aggregator_lag_seconds
                .set(status.lag_ms as f64 / 1000.0);
        }
        self.read_units.set(usage.read_units());
        self.write_units.set(usage.write_units());
        self.items_read
            .set(i64::try_from(usage.items_read()).unwrap_or(i64::MAX));
        let mut text = String::new();
        if let Ok(registry) = self.registry.lock() {
            // Writing into a String cannot fail.
            let _ = encode(&mut text, &registry);
        }
        text
    }
}

/// The method's label: the methods of RFC 9110 and PATCH as themselves,
/// any other (HTTP allows a client to make up methods) as `OTHER`.
pub(crate) fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::CONNECT,
        Method::OPTIONS,
        Method::TRACE,
        Method::PATCH,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("OTHER", |known| known.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_methods_are_their_own_label_and_others_share_one() {
        for name in [
            "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
        ] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(method_label(&method), name);
        }
        for name in ["get", "PURGE", "PROPFIND", "X-1", "BREW"] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(method_label(&method), "OTHER", "{name}");
        }
    }
}

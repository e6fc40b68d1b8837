//! Prometheus metrics: requests and latency per route, capacity consumed.

use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::AppState;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
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
        Metrics {
            registry: Mutex::new(registry),
            requests,
            latency,
            read_units,
            write_units,
            items_read,
            aggregator_lag_events,
            aggregator_lag_seconds,
        }
    }
}

impl Metrics {
    fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.to_owned(),
            })
            .observe(seconds);
    }

    /// The text exposition, with the capacity gauges brought up to date.
    pub fn render(
        &self,
        usage: &rave_comments::Usage,
        aggregator: Option<&crate::AggregatorStatus>,
    ) -> String {
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

/// Middleware: counts and times every request under its route template.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    state.metrics.observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

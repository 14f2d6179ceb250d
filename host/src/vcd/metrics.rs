//! Prometheus metrics of the VCD client, registered in the caller's
//! registry under the `vcd_` prefix: requests and their latency by logical
//! operation and outcome, retries by reason, time spent waiting for tasks,
//! token refreshes, and the API version in use.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of `vcd_requests_total`, `vcd_request_duration_seconds` and
/// `vcd_task_wait_seconds`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    operation: String,
    outcome: String,
}

/// Labels of `vcd_retries_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RetryLabels {
    operation: String,
    reason: String,
}

/// Labels of `vcd_token_refreshes_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefreshLabels {
    reason: String,
}

/// Labels of `vcd_ccm_vcd_api_version`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabels {
    version: String,
}

fn request_histogram() -> Histogram {
    // 5 ms to about 80 s.
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

fn task_histogram() -> Histogram {
    // 50 ms to about 15 min.
    Histogram::new(exponential_buckets(0.05, 2.0, 15))
}

/// Cheap to clone: the families share their values.
#[derive(Debug, Clone)]
pub struct ClientMetrics {
    requests: Family<OutcomeLabels, Counter>,
    request_duration: Family<OutcomeLabels, Histogram>,
    retries: Family<RetryLabels, Counter>,
    task_wait: Family<OutcomeLabels, Histogram>,
    token_refreshes: Family<RefreshLabels, Counter>,
    api_version: Family<VersionLabels, Gauge>,
}

impl Default for ClientMetrics {
    /// Metrics that count but are exported nowhere (tests, tools).
    fn default() -> Self {
        Self {
            requests: Family::default(),
            request_duration: Family::new_with_constructor(request_histogram),
            retries: Family::default(),
            task_wait: Family::new_with_constructor(task_histogram),
            token_refreshes: Family::default(),
            api_version: Family::default(),
        }
    }
}

impl ClientMetrics {
    /// Metrics registered in `registry` under the `vcd_` prefix, to pass to
    /// [`VcdClient::connect`](super::VcdClient::connect).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        let vcd = registry.sub_registry_with_prefix("vcd");
        vcd.register(
            "requests",
            "HTTP requests to VCD by logical operation and outcome",
            metrics.requests.clone(),
        );
        vcd.register(
            "request_duration_seconds",
            "Latency of HTTP requests to VCD",
            metrics.request_duration.clone(),
        );
        vcd.register(
            "retries",
            "Requests to VCD repeated after a retryable failure, by reason",
            metrics.retries.clone(),
        );
        vcd.register(
            "task_wait_seconds",
            "Time spent waiting for VCD tasks, by operation and outcome",
            metrics.task_wait.clone(),
        );
        vcd.register(
            "token_refreshes",
            "Logins to VCD, by reason (initial, expiring, rejected, credentials_changed)",
            metrics.token_refreshes.clone(),
        );
        // Named for the CCM rather than the client: it says which VCD
        // release the whole process is speaking to.
        registry.register(
            "vcd_ccm_vcd_api_version",
            "The VCD API version negotiated at start (1 on the version in use)",
            metrics.api_version.clone(),
        );
        metrics
    }

    pub(crate) fn request(&self, operation: &str, outcome: &str, elapsed: Duration) {
        let labels = OutcomeLabels {
            operation: operation.to_string(),
            outcome: outcome.to_string(),
        };
        self.requests.get_or_create(&labels).inc();
        self.request_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    pub(crate) fn retry(&self, operation: &str, reason: &str) {
        self.retries
            .get_or_create(&RetryLabels {
                operation: operation.to_string(),
                reason: reason.to_string(),
            })
            .inc();
    }

    pub(crate) fn task_wait(&self, operation: &str, outcome: &str, waited: Duration) {
        self.task_wait
            .get_or_create(&OutcomeLabels {
                operation: operation.to_string(),
                outcome: outcome.to_string(),
            })
            .observe(waited.as_secs_f64());
    }

    pub(crate) fn token_refresh(&self, reason: &str) {
        self.token_refreshes
            .get_or_create(&RefreshLabels {
                reason: reason.to_string(),
            })
            .inc();
    }

    pub(crate) fn negotiated(&self, version: &str) {
        self.api_version.clear();
        self.api_version
            .get_or_create(&VersionLabels {
                version: version.to_string(),
            })
            .set(1);
    }
}

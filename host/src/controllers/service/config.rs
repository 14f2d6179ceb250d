//! How the service controller works: workers, retries, periods and where
//! process-wide Events go.

use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;

use super::predicates::ClassFilter;
use super::rotation::DEFAULT_TLS_SECRET_PERIOD;
use crate::controllers::SyncGate;
use crate::controllers::leader::{DEFAULT_LEASE_NAME, DEFAULT_LEASE_NAMESPACE};
use crate::controllers::supervise::TaskHealth;

/// The default `--drift-repair-period`.
pub const DEFAULT_DRIFT_PERIOD: Duration = Duration::from_secs(300);

/// How the service controller works.
#[derive(Debug, Clone)]
pub struct ServiceControllerConfig {
    /// `--concurrent-service-syncs`: workers, and node-sync parallelism.
    pub workers: usize,
    /// `--load-balancer-class` and `--serve-classless`: the Services served.
    pub classes: ClassFilter,
    /// First retry delay after a failed sync; doubles up to `max_backoff`.
    pub base_backoff: Duration,
    /// Longest retry delay.
    pub max_backoff: Duration,
    /// Where the controller's tasks report restarts (`/healthz`).
    pub tasks: TaskHealth,
    /// `--drift-repair-period`: how often every Service's load balancer is
    /// compared with what VCD holds and repaired; `None` turns it off.
    pub drift_period: Option<Duration>,
    /// `--health-interval`: how often VCD's view of each load balancer's
    /// members is read into the Services; `None` turns it off.
    pub health_period: Option<Duration>,
    /// How often Services naming TLS Secrets are reconciled again, so a
    /// changed Secret reaches VCD; `None` turns it off.
    pub tls_secret_period: Option<Duration>,
    /// What the sweep's Warnings about the gateway (objects of another
    /// cluster with the same `clusterid`, a former `clusterid`) are
    /// attached to: the leader-election Lease.
    pub events_on: ObjectReference,
    /// Closed on SIGTERM: syncs and node updates hold it while they write.
    pub gate: SyncGate,
}

impl Default for ServiceControllerConfig {
    /// Upstream's defaults: one worker, backoff from 5 s to 5 min.
    fn default() -> Self {
        Self {
            workers: 1,
            classes: ClassFilter::default(),
            base_backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(300),
            drift_period: Some(DEFAULT_DRIFT_PERIOD),
            tls_secret_period: Some(DEFAULT_TLS_SECRET_PERIOD),
            health_period: None,
            tasks: TaskHealth::default(),
            events_on: lease_reference(DEFAULT_LEASE_NAMESPACE, DEFAULT_LEASE_NAME),
            gate: SyncGate::default(),
        }
    }
}

/// A reference to the Lease `namespace/name`, for Events about the process.
pub fn lease_reference(namespace: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("coordination.k8s.io/v1".into()),
        kind: Some("Lease".into()),
        namespace: Some(namespace.into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}

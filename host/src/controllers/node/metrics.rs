//! The cloud node controller's metrics, named as k8s.io/cloud-provider's,
//! and a count of failed syncs (ours).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone)]
pub(super) struct NodeMetrics {
    /// Node creation → the PUT that removed the uninitialized taint.
    pub(super) taint_removal_delay: Histogram,
    /// Node creation → the end of its initial sync.
    pub(super) initial_sync_delay: Histogram,
    /// Node syncs that failed and were queued again after a backoff.
    pub(super) sync_failures: Counter,
}

/// 1 s to about 17 min: 1, 4, 16, 64, 256, 1024.
fn delay_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 4.0, 6))
}

impl NodeMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            taint_removal_delay: delay_histogram(),
            initial_sync_delay: delay_histogram(),
            sync_failures: Counter::default(),
        };
        registry.register(
            "node_controller_cloud_provider_taint_removal_delay_seconds",
            "Number of seconds after node creation when NodeController removed the cloud-provider taint of a single node",
            metrics.taint_removal_delay.clone(),
        );
        registry.register(
            "node_controller_initial_node_sync_delay_seconds",
            "Number of seconds after node creation when NodeController finished the initial synchronization of a single node",
            metrics.initial_sync_delay.clone(),
        );
        registry.register(
            "vcd_ccm_node_sync_failures",
            "Node syncs that failed (the Node keeps its taint and is retried after a backoff)",
            metrics.sync_failures.clone(),
        );
        metrics
    }
}

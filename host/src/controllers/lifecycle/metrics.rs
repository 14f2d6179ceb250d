//! The lifecycle controller's metrics (ours: upstream has neither a pass
//! count nor a mass-deletion guard).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

pub(super) struct LifecycleMetrics {
    /// Completed passes over every Node: a count that stops moving shows a
    /// stuck monitor.
    pub(super) passes: Counter,
    /// Nodes whose deletion the last pass held; 0 once a pass deletes again.
    pub(super) held_nodes: Gauge,
    /// Passes that held every deletion.
    pub(super) held_passes: Counter,
}

impl LifecycleMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            passes: Counter::default(),
            held_nodes: Gauge::default(),
            held_passes: Counter::default(),
        };
        registry.register(
            "vcd_ccm_node_lifecycle_passes",
            "Completed passes of the node lifecycle monitor over every Node",
            metrics.passes.clone(),
        );
        registry.register(
            "vcd_ccm_node_deletions_held",
            "NotReady Nodes whose VM was not found but whose deletion the mass-deletion guard holds",
            metrics.held_nodes.clone(),
        );
        registry.register(
            "vcd_ccm_node_deletion_held_passes",
            "Lifecycle passes in which the mass-deletion guard held every Node deletion",
            metrics.held_passes.clone(),
        );
        metrics
    }
}

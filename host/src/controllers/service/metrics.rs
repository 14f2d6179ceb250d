//! The service controller's metrics: upstream's `service_controller_*`
//! family, plus reconcile durations by operation and outcome.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileLabels {
    /// ensure, update or delete.
    pub operation: &'static str,
    /// success or error.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeftAloneLabels {
    /// other_cluster, former_cluster_id or unattributed.
    pub reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// virtual_service, pool, nat_rule, ip_space_allocation, firewall_rule,
    /// ip_set or port_profile.
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ServiceLabels {
    pub namespace: String,
    pub service: String,
}

impl ServiceLabels {
    pub fn of(service: &k8s_openapi::api::core::v1::Service) -> Self {
        Self {
            namespace: service.metadata.namespace.clone().unwrap_or_default(),
            service: service.metadata.name.clone().unwrap_or_default(),
        }
    }
}

#[derive(Clone)]
pub struct ServiceMetrics {
    pub loadbalancer_sync: Counter,
    pub nodesync_error: Counter,
    pub nodesync_latency: Histogram,
    pub update_host_latency: Histogram,
    pub reconcile_duration: Family<ReconcileLabels, Histogram>,
    pub queue_depth: Gauge,
    pub queue_retries: Counter,
    pub work_duration: Histogram,
    /// What the last sweep found tagged with this cluster and left alone.
    pub sweep_left_alone: Family<LeftAloneLabels, Gauge>,
    /// Objects the last sweep found with an ownership tag of a newer format.
    pub newer_format_objects: Family<KindLabels, Gauge>,
    /// Drift checks run, and Services they found changed and repaired.
    pub drift_checks: Counter,
    pub drift_repairs: Counter,
    /// Endpoint changes of `Local` Services their load balancer's node
    /// probe follows, with no VCD write.
    pub endpoint_changes_probed: Counter,
    /// Active provider policies whose selector names a class not served.
    pub unserved_class_policies: Gauge,
    /// Per Service, from the last health read: members VCD finds up,
    /// members enabled, and 1/0 for healthy or not (absent while unknown).
    pub members_up: Family<ServiceLabels, Gauge>,
    pub members_enabled: Family<ServiceLabels, Gauge>,
    pub healthy: Family<ServiceLabels, Gauge>,
    /// Health reads that failed.
    pub health_read_failures: Counter,
}

impl ServiceMetrics {
    /// `queue_adds` is the service queue's counter of added keys.
    pub fn register(registry: &mut Registry, queue_adds: Counter) -> Self {
        let metrics = Self {
            loadbalancer_sync: Counter::default(),
            nodesync_error: Counter::default(),
            nodesync_latency: Histogram::new(exponential_buckets(1.0, 2.0, 15)),
            update_host_latency: Histogram::new(exponential_buckets(1.0, 2.0, 15)),
            reconcile_duration: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.01, 2.0, 14))
            }),
            queue_depth: Gauge::default(),
            queue_retries: Counter::default(),
            work_duration: Histogram::new(exponential_buckets(1e-3, 4.0, 10)),
            sweep_left_alone: Family::default(),
            newer_format_objects: Family::default(),
            drift_checks: Counter::default(),
            drift_repairs: Counter::default(),
            endpoint_changes_probed: Counter::default(),
            unserved_class_policies: Gauge::default(),
            members_up: Family::default(),
            members_enabled: Family::default(),
            healthy: Family::default(),
            health_read_failures: Counter::default(),
        };
        registry.register(
            "vcd_ccm_load_balancer_members_up",
            "Members VCD finds up behind the Service's load balancer, at the last health read (--health-interval)",
            metrics.members_up.clone(),
        );
        registry.register(
            "vcd_ccm_load_balancer_members_enabled",
            "Members enabled behind the Service's load balancer, at the last health read",
            metrics.members_enabled.clone(),
        );
        registry.register(
            "vcd_ccm_load_balancer_healthy",
            "1 when at least one member is up behind the Service's load balancer, 0 when none is; absent while VCD does not know",
            metrics.healthy.clone(),
        );
        registry.register(
            "vcd_ccm_health_read_failures",
            "Health reads (one list of the gateway's pool summaries) that failed",
            metrics.health_read_failures.clone(),
        );
        registry.register(
            "vcd_ccm_policies_selecting_unserved_classes",
            "Provider policies whose selector names a loadBalancerClass this process does not serve (see --load-balancer-class): they govern no Service",
            metrics.unserved_class_policies.clone(),
        );
        registry.register(
            "vcd_ccm_drift_checks",
            "Periodic comparisons of every Service's load balancer with VCD",
            metrics.drift_checks.clone(),
        );
        registry.register(
            "vcd_ccm_drift_repairs",
            "Load balancers found changed or deleted outside the CCM and repaired",
            metrics.drift_repairs.clone(),
        );
        registry.register(
            "vcd_ccm_endpoint_changes_probed",
            "Endpoint changes of Local Services that cost no VCD write, as their pools probe the Nodes' healthCheckNodePort (VCD API 39.0+)",
            metrics.endpoint_changes_probed.clone(),
        );
        let upstream = registry.sub_registry_with_prefix("service_controller");
        upstream.register(
            "loadbalancer_sync",
            "Load balancer updates caused by node changes",
            metrics.loadbalancer_sync.clone(),
        );
        upstream.register(
            "nodesync_error",
            "Node syncs that failed",
            metrics.nodesync_error.clone(),
        );
        upstream.register(
            "nodesync_latency_seconds",
            "How long one sync of every Service's node set took",
            metrics.nodesync_latency.clone(),
        );
        upstream.register(
            "update_loadbalancer_host_latency_seconds",
            "How long one load balancer's node update took",
            metrics.update_host_latency.clone(),
        );
        registry.register(
            "vcd_ccm_service_reconcile_duration_seconds",
            "Service load balancer reconciles by operation and outcome",
            metrics.reconcile_duration.clone(),
        );
        registry.register(
            "vcd_ccm_sweep_left_alone",
            "Tagged with this clusterid or this cluster's identity but not provably this cluster's garbage, found by the last sweep: other_cluster (identities of clusters sharing the clusterid), former_cluster_id (clusterids this cluster used before), unattributed (objects of deleted Services written before identities were recorded)",
            metrics.sweep_left_alone.clone(),
        );
        registry.register(
            "vcd_ccm_newer_format_objects",
            "Objects and IP Space claims whose ownership tag is of a newer format than this version knows (a later vcd-ccm wrote them), found by the last sweep, by kind: never updated or deleted, their addresses not taken",
            metrics.newer_format_objects.clone(),
        );
        let queue = registry.sub_registry_with_label(("name".into(), "service".into()));
        queue.register(
            "workqueue_depth",
            "Service keys waiting",
            metrics.queue_depth.clone(),
        );
        queue.register("workqueue_adds", "Service keys queued", queue_adds);
        queue.register(
            "workqueue_work_duration_seconds",
            "How long one Service sync took",
            metrics.work_duration.clone(),
        );
        queue.register(
            "workqueue_retries",
            "Service syncs retried after a failure",
            metrics.queue_retries.clone(),
        );
        metrics
    }
}

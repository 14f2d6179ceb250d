//! The service controller's decisions that need no I/O, as
//! k8s.io/cloud-provider makes them: which Services are handled, which
//! changes call for a re-ensure, which nodes belong behind a load balancer.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Node, Service};

/// The finalizer that keeps a Service until its load balancer is gone.
pub const CLEANUP_FINALIZER: &str = "service.kubernetes.io/load-balancer-cleanup";
/// A node with this label set to true (or unparsable) gets no traffic.
pub const EXCLUDE_LABEL: &str = "node.kubernetes.io/exclude-from-external-load-balancers";
/// The cluster autoscaler's taint on nodes about to be removed.
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";

/// Which `spec.loadBalancerClass` values this controller serves:
/// `--load-balancer-class` (any number) and, unless
/// `--serve-classless=false`, Services with no class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassFilter {
    classes: BTreeSet<String>,
    classless: bool,
}

impl Default for ClassFilter {
    /// Upstream's: class-less Services only.
    fn default() -> Self {
        Self::new([], true)
    }
}

impl ClassFilter {
    /// Serves `classes`, and Services with no class when `classless`.
    pub fn new(classes: impl IntoIterator<Item = String>, classless: bool) -> Self {
        Self {
            classes: classes.into_iter().collect(),
            classless,
        }
    }

    /// Whether Services of `class` (`None`: no class) are ours.
    pub fn accepts(&self, class: Option<&str>) -> bool {
        match class {
            None => self.classless,
            Some(class) => self.classes.contains(class),
        }
    }

    /// The classes served, for messages.
    pub fn describe(&self) -> String {
        let mut served: Vec<String> = self.classes.iter().map(|c| format!("{c:?}")).collect();
        if self.classless {
            served.push("Services with no class".into());
        }
        match served.is_empty() {
            true => "nothing".into(),
            false => served.join(", "),
        }
    }

    /// Whether the Service's class is served, whatever its type.
    pub fn serves_class_of(&self, service: &Service) -> bool {
        self.accepts(
            service
                .spec
                .as_ref()
                .and_then(|s| s.load_balancer_class.as_deref()),
        )
    }

    /// Type LoadBalancer, of a class served.
    pub fn wants_load_balancer(&self, service: &Service) -> bool {
        service.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("LoadBalancer")
            && self.serves_class_of(service)
    }

    /// Whether a sync must run for this change (upstream `needsUpdate`).
    pub fn needs_update(&self, old: &Service, new: &Service) -> bool {
        let (old_wants, new_wants) = (self.wants_load_balancer(old), self.wants_load_balancer(new));
        if !old_wants && !new_wants {
            return false;
        }
        if old_wants != new_wants {
            return true;
        }
        let (Some(a), Some(b)) = (old.spec.as_ref(), new.spec.as_ref()) else {
            return true;
        };
        a.load_balancer_source_ranges != b.load_balancer_source_ranges
            || ports_differ(a, b)
            || a.session_affinity != b.session_affinity
            || a.session_affinity_config != b.session_affinity_config
            || a.load_balancer_ip != b.load_balancer_ip
            || a.external_ips.as_deref().unwrap_or_default()
                != b.external_ips.as_deref().unwrap_or_default()
            || old.metadata.annotations != new.metadata.annotations
            || old.metadata.uid != new.metadata.uid
            || a.external_traffic_policy != b.external_traffic_policy
            || a.health_check_node_port != b.health_check_node_port
            || a.ip_families.as_ref().map_or(0, Vec::len)
                != b.ip_families.as_ref().map_or(0, Vec::len)
            // Not in upstream's list: what can be served depends on it.
            || a.ip_family_policy != b.ip_family_policy
    }
}

fn ports_differ(
    a: &k8s_openapi::api::core::v1::ServiceSpec,
    b: &k8s_openapi::api::core::v1::ServiceSpec,
) -> bool {
    let (a, b) = (
        a.ports.as_deref().unwrap_or_default(),
        b.ports.as_deref().unwrap_or_default(),
    );
    a.len() != b.len()
        || a.iter().zip(b).any(|(p, q)| {
            p.name != q.name
                || p.protocol != q.protocol
                || p.port != q.port
                || p.node_port != q.node_port
                || p.target_port != q.target_port
                || p.app_protocol != q.app_protocol
        })
}

/// Whether the Service holds the load balancer's cleanup finalizer.
pub fn has_finalizer(service: &Service) -> bool {
    service
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == CLEANUP_FINALIZER))
}

/// The finalizer is set and the Service is going away or no longer a
/// LoadBalancer.
pub fn needs_cleanup(service: &Service) -> bool {
    has_finalizer(service)
        && (service.metadata.deletion_timestamp.is_some()
            || service.spec.as_ref().and_then(|s| s.type_.as_deref()) != Some("LoadBalancer"))
}

/// Go's `strconv.ParseBool`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// The exclusion label is absent, or parses as false.
pub fn node_included(node: &Node) -> bool {
    match node
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(EXCLUDE_LABEL))
    {
        None => true,
        Some(value) => parse_bool(value) == Some(false),
    }
}

/// Upstream's stable node set: not being deleted, not excluded, not about
/// to be removed by the autoscaler. Readiness does not matter.
pub fn in_node_set(node: &Node) -> bool {
    let tainted = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == TO_BE_DELETED_TAINT));
    node.metadata.deletion_timestamp.is_none() && node_included(node) && !tainted
}

/// The node's first `InternalIP`, which pools forward to.
pub fn internal_ip(node: &Node) -> Option<String> {
    node.status
        .as_ref()?
        .addresses
        .as_ref()?
        .iter()
        .find(|a| a.type_ == "InternalIP")
        .map(|a| a.address.clone())
}

/// Whether a node update can change any Service's node set: inclusion,
/// providerID (as upstream), the address pools forward to (ours: NSX ALB
/// pools name node IPs, so a changed InternalIP must reach them) or the
/// labels a node selector reads.
pub fn should_sync_updated_node(old: &Node, new: &Node) -> bool {
    let provider_id = |n: &Node| n.spec.as_ref().and_then(|s| s.provider_id.clone());
    node_included(old) != node_included(new)
        || provider_id(old) != provider_id(new)
        || internal_ip(old) != internal_ip(new)
        // A Service's node selector reads them (contract 0.4.0).
        || old.metadata.labels != new.metadata.labels
}

#[cfg(test)]
mod tests;

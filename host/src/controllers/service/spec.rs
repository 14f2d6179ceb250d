//! From Kubernetes objects to the load balancer's plain inputs.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{LoadBalancerIngress, Node, Service};

use super::predicates::internal_ip;
use crate::lb::{FamilyPolicy, LbStatus, NodeSpec, PortSpec, ServiceSpec};
use crate::policy::model::{IpFamily, Protocol, SessionAffinity, TrafficPolicy};

/// `sessionAffinityConfig.clientIP.timeoutSeconds` when the Service leaves it
/// unset (the API server's default).
const CLIENT_IP_TIMEOUT_SECONDS: u32 = 10_800;

/// `spec.sessionAffinity` and its timeout; anything but `ClientIP` is none.
fn session_affinity(spec: &k8s_openapi::api::core::v1::ServiceSpec) -> SessionAffinity {
    if spec.session_affinity.as_deref() != Some("ClientIP") {
        return SessionAffinity::None;
    }
    let timeout = spec
        .session_affinity_config
        .as_ref()
        .and_then(|config| config.client_ip.as_ref())
        .and_then(|client_ip| client_ip.timeout_seconds)
        .and_then(|seconds| u32::try_from(seconds).ok())
        .unwrap_or(CLIENT_IP_TIMEOUT_SECONDS);
    SessionAffinity::ClientIp(timeout)
}

/// The Service as the load balancer sees it; `namespace_labels` come from
/// the Service's Namespace (policy selection).
pub fn service_spec(service: &Service, namespace_labels: BTreeMap<String, String>) -> ServiceSpec {
    let meta = &service.metadata;
    let spec = service.spec.clone().unwrap_or_default();
    let protocol = |p: Option<&str>| match p {
        Some("UDP") => Protocol::Udp,
        Some("SCTP") => Protocol::Sctp,
        _ => Protocol::Tcp,
    };
    let port = |n: i32| u16::try_from(n).ok().filter(|n| *n > 0);
    let session_affinity = session_affinity(&spec);
    ServiceSpec {
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        annotations: meta.annotations.clone().unwrap_or_default(),
        labels: meta.labels.clone().unwrap_or_default(),
        namespace_labels,
        ports: spec
            .ports
            .unwrap_or_default()
            .into_iter()
            .map(|p| PortSpec {
                name: p.name.unwrap_or_default(),
                protocol: protocol(p.protocol.as_deref()),
                port: port(p.port).unwrap_or_default(),
                node_port: p.node_port.and_then(port),
                app_protocol: p.app_protocol,
            })
            .collect(),
        reported_ips: current_ingress(service)
            .into_iter()
            .filter_map(|i| i.ip)
            .collect(),
        load_balancer_ip: spec.load_balancer_ip,
        load_balancer_class: spec.load_balancer_class,
        external_traffic_policy: match spec.external_traffic_policy.as_deref() {
            Some("Local") => TrafficPolicy::Local,
            _ => TrafficPolicy::Cluster,
        },
        health_check_node_port: spec.health_check_node_port.and_then(port),
        ready_endpoints: 0,
        session_affinity,
        // Set by the drift check alone.
        read_unsummarised: false,
        source_ranges: spec.load_balancer_source_ranges.unwrap_or_default(),
        ip_families: spec
            .ip_families
            .unwrap_or_default()
            .iter()
            .map(|f| match f.as_str() {
                "IPv6" => IpFamily::Ipv6,
                _ => IpFamily::Ipv4,
            })
            .collect(),
        ip_family_policy: match spec.ip_family_policy.as_deref() {
            Some("RequireDualStack") => FamilyPolicy::RequireDualStack,
            Some("PreferDualStack") => FamilyPolicy::PreferDualStack,
            _ => FamilyPolicy::SingleStack,
        },
    }
}

/// What identifies a node in a load balancer's node set: its name, its
/// providerID (upstream compares these) and the address pools use.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeKey {
    pub name: String,
    pub provider_id: Option<String>,
    pub internal_ip: Option<String>,
    /// What a Service's node selector reads.
    pub labels: BTreeMap<String, String>,
}

impl NodeKey {
    pub fn of(node: &Node) -> Self {
        Self {
            name: node.metadata.name.clone().unwrap_or_default(),
            provider_id: node.spec.as_ref().and_then(|s| s.provider_id.clone()),
            internal_ip: internal_ip(node),
            labels: node.metadata.labels.clone().unwrap_or_default(),
        }
    }

    pub fn node_spec(&self) -> NodeSpec {
        NodeSpec {
            name: self.name.clone(),
            internal_ip: self.internal_ip.clone(),
            labels: self.labels.clone(),
        }
    }
}

/// A node set as a digest: the service controller remembers, per Service,
/// which set its load balancer was last given, and only ever compares it.
/// Keeping the sets themselves would cost Services × Nodes keys (hundreds of
/// MB at 1,000 Services over 5,000 Nodes); a SHA-256 is 32 bytes each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSetDigest([u8; 32]);

impl NodeSetDigest {
    pub fn of(nodes: &[NodeKey]) -> Self {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        let mut field = |value: Option<&str>| {
            // Length-prefixed, so no two different sets hash the same input.
            let bytes = value.map(str::as_bytes);
            hasher.update([u8::from(bytes.is_some())]);
            let bytes = bytes.unwrap_or_default();
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        for node in nodes {
            field(Some(&node.name));
            field(node.provider_id.as_deref());
            field(node.internal_ip.as_deref());
            // A label change may move the Node in or out of a selector.
            field(Some(&node.labels.len().to_string()));
            for (key, value) in &node.labels {
                field(Some(key));
                field(Some(value));
            }
        }
        Self(hasher.finalize().into())
    }
}

/// `status.loadBalancer.ingress` as the load balancer reports it.
pub fn ingress_of(status: &LbStatus) -> Vec<LoadBalancerIngress> {
    status
        .ingress
        .iter()
        .map(|i| LoadBalancerIngress {
            ip: Some(i.ip.clone()),
            ip_mode: Some(i.ip_mode.status_value().to_string()),
            hostname: i.hostname.clone(),
            ..LoadBalancerIngress::default()
        })
        .collect()
}

/// The Service's current ingress (absent and empty are the same).
pub fn current_ingress(service: &Service) -> Vec<LoadBalancerIngress> {
    service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default()
}

/// The work queue's key of a Service: `namespace/name`.
pub fn service_key(service: &Service) -> String {
    format!(
        "{}/{}",
        service.metadata.namespace.as_deref().unwrap_or_default(),
        service.metadata.name.as_deref().unwrap_or_default()
    )
}

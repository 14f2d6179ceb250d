//! The records contract 0.3.0 extended, in their 0.2.0 shape (`wit/0.2.0/`).
//!
//! A 0.2.0 policy is called with these: its input is the model without the
//! Service's session affinity, the `http-rules` capability and the
//! gateway's service engine groups, and its decision comes back without
//! persistence, HTTP rules or a group. Every other type is the same in both
//! versions and is shared with the model.

use wasmtime::component::{ComponentType, Lift, Lower};

use super::v0_3::{self, AddressPool, PortDecision};
use super::{
    AddressChoice, AppProfile, Certificate, IpFamily, Namespace, Pairs, ServicePort, TrafficPolicy,
};

/// `service` as 0.2.0 has it: no `session-affinity`.
#[derive(ComponentType, Lower, Clone, Debug)]
#[component(record)]
pub struct Service {
    namespace: String,
    name: String,
    uid: String,
    labels: Pairs,
    annotations: Pairs,
    ports: Vec<ServicePort>,
    #[component(name = "load-balancer-ip")]
    load_balancer_ip: Option<String>,
    #[component(name = "load-balancer-class")]
    load_balancer_class: Option<String>,
    #[component(name = "external-traffic-policy")]
    external_traffic_policy: TrafficPolicy,
    #[component(name = "health-check-node-port")]
    health_check_node_port: Option<u16>,
    #[component(name = "ip-families")]
    ip_families: Vec<IpFamily>,
    #[component(name = "load-balancer-source-ranges")]
    load_balancer_source_ranges: Vec<String>,
}

/// `capabilities` as 0.2.0 has it: no `http-rules`.
#[derive(ComponentType, Lower, Clone, Copy, Debug)]
#[component(record)]
pub struct Capabilities {
    #[component(name = "shared-vip")]
    shared_vip: bool,
    #[component(name = "ip-spaces")]
    ip_spaces: bool,
    #[component(name = "one-arm")]
    one_arm: bool,
    premium: bool,
    #[component(name = "transparent-mode")]
    transparent_mode: bool,
}

/// `cluster` as 0.2.0 has it, with its 0.2.0 capabilities.
#[derive(ComponentType, Lower, Clone, Debug)]
#[component(record)]
pub struct Cluster {
    #[component(name = "cluster-id")]
    cluster_id: String,
    org: String,
    vdc: String,
    gateway: String,
    #[component(name = "vcd-api-version")]
    vcd_api_version: String,
    capabilities: Capabilities,
}

/// `decision` as 0.2.0 has it: no `traffic`. Lowered as the input's current
/// decision, lifted as the policy's answer.
#[derive(ComponentType, Lift, Lower, Clone, Debug)]
#[component(record)]
pub struct Decision {
    address: AddressChoice,
    ports: Vec<PortDecision>,
    warnings: Vec<String>,
    #[component(name = "preserve-client-ip")]
    preserve_client_ip: bool,
}

/// `decision-input` as 0.2.0 has it, with the records above.
#[derive(ComponentType, Lower, Clone, Debug)]
#[component(record)]
pub struct DecisionInput {
    service: Service,
    namespace: Namespace,
    cluster: Cluster,
    pools: Vec<AddressPool>,
    certificates: Vec<Certificate>,
    profiles: Vec<AppProfile>,
    current: Option<Decision>,
    #[component(name = "ready-endpoints")]
    ready_endpoints: u32,
}

impl From<&super::DecisionInput> for DecisionInput {
    fn from(input: &super::DecisionInput) -> Self {
        let (s, c) = (&input.service, &input.cluster);
        let k = c.capabilities;
        Self {
            service: Service {
                namespace: s.namespace.clone(),
                name: s.name.clone(),
                uid: s.uid.clone(),
                labels: s.labels.clone(),
                annotations: s.annotations.clone(),
                ports: s.ports.clone(),
                load_balancer_ip: s.load_balancer_ip.clone(),
                load_balancer_class: s.load_balancer_class.clone(),
                external_traffic_policy: s.external_traffic_policy,
                health_check_node_port: s.health_check_node_port,
                ip_families: s.ip_families.clone(),
                load_balancer_source_ranges: s.load_balancer_source_ranges.clone(),
            },
            namespace: input.namespace.clone(),
            cluster: Cluster {
                cluster_id: c.cluster_id.clone(),
                org: c.org.clone(),
                vdc: c.vdc.clone(),
                gateway: c.gateway.clone(),
                vcd_api_version: c.vcd_api_version.clone(),
                capabilities: Capabilities {
                    shared_vip: k.shared_vip,
                    ip_spaces: k.ip_spaces,
                    one_arm: k.one_arm,
                    premium: k.premium,
                    transparent_mode: k.transparent_mode,
                },
            },
            pools: v0_3::pools(&input.pools),
            certificates: input.certificates.clone(),
            profiles: input.profiles.clone(),
            current: input.current.as_ref().map(|d| Decision {
                address: d.address.clone(),
                ports: v0_3::ports(&d.ports),
                warnings: d.warnings.clone(),
                preserve_client_ip: d.preserve_client_ip,
            }),
            ready_endpoints: input.ready_endpoints,
        }
    }
}

/// A 0.2.0 policy cannot ask for persistence, HTTP rules or a service engine group.
impl From<Decision> for super::Decision {
    fn from(decision: Decision) -> Self {
        let ports = decision.ports.into_iter().map(Into::into).collect();
        Self {
            preserve_client_ip: decision.preserve_client_ip,
            ..Self::of(decision.address, ports, decision.warnings)
        }
    }
}

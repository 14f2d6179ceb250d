//! The records contract 0.4.0 extended, in their 0.3.0 shape (`wit/0.3.0/`),
//! and the 0.3.0 shapes of the pool and the port decision, which 0.1.0 and
//! 0.2.0 share.
//!
//! A 0.3.0 policy is called with these: its input is the model without the
//! new capabilities, the internal pools and the retained addresses, and its
//! decision comes back with system monitors, `proxy` mode, no hostname, its
//! address released with the Service and every eligible Node serving it.

use wasmtime::component::{ComponentType, Lift, Lower};

use super::{
    AddressChoice, AppProfile, Certificate, HealthMonitor, IpRange, Namespace, PoolAlgorithm,
    PortTraffic, Protocol, Service, ServiceEngineGroup,
};

/// `pool-source` as 0.3.0 has it: IP blocks and public IP Spaces.
#[derive(ComponentType, Lower, Clone, Copy, Debug)]
#[component(enum)]
#[repr(u8)]
pub enum PoolSource {
    #[component(name = "ip-block")]
    IpBlock,
    #[component(name = "ip-space")]
    IpSpace,
}

/// `address-pool` as 0.1.0 to 0.3.0 have it: no `external`.
#[derive(ComponentType, Lower, Clone, Debug)]
#[component(record)]
pub struct AddressPool {
    name: String,
    source: PoolSource,
    ranges: Vec<IpRange>,
    #[component(name = "free-count")]
    free_count: u32,
}

/// The pools a policy before 0.4.0 is offered: the external ones from IP
/// blocks and public IP Spaces, which are all such a policy knows.
pub fn pools(pools: &[super::AddressPool]) -> Vec<AddressPool> {
    pools
        .iter()
        .filter(|p| p.external)
        .filter_map(|p| {
            let source = match p.source {
                super::PoolSource::IpBlock => PoolSource::IpBlock,
                super::PoolSource::IpSpace => PoolSource::IpSpace,
                super::PoolSource::InternalRange | super::PoolSource::PrivateIpSpace => {
                    return None;
                }
            };
            Some(AddressPool {
                name: p.name.clone(),
                source,
                ranges: p.ranges.clone(),
                free_count: p.free_count,
            })
        })
        .collect()
}

/// `port-decision` as 0.1.0 to 0.3.0 have it: no `monitor`.
#[derive(ComponentType, Lift, Lower, Clone, Debug)]
#[component(record)]
pub struct PortDecision {
    #[component(name = "service-port")]
    service_port: u16,
    protocol: Protocol,
    #[component(name = "listen-port")]
    listen_port: u16,
    profile: AppProfile,
    certificate: Option<String>,
    #[component(name = "health-monitor")]
    health_monitor: HealthMonitor,
    algorithm: PoolAlgorithm,
}

/// The ports of a current decision, in the older shape.
pub fn ports(ports: &[super::PortDecision]) -> Vec<PortDecision> {
    ports
        .iter()
        .map(|p| PortDecision {
            service_port: p.service_port,
            protocol: p.protocol,
            listen_port: p.listen_port,
            profile: p.profile,
            certificate: p.certificate.clone(),
            health_monitor: p.health_monitor,
            algorithm: p.algorithm,
        })
        .collect()
}

/// An older policy's port: its monitor untuned.
impl From<PortDecision> for super::PortDecision {
    fn from(p: PortDecision) -> Self {
        Self {
            service_port: p.service_port,
            protocol: p.protocol,
            listen_port: p.listen_port,
            profile: p.profile,
            certificate: p.certificate,
            health_monitor: p.health_monitor,
            algorithm: p.algorithm,
            monitor: None,
        }
    }
}

/// `capabilities` as 0.3.0 has it.
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
    #[component(name = "http-rules")]
    http_rules: bool,
}

/// `cluster` as 0.3.0 has it, with its 0.3.0 capabilities.
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

/// `decision` as 0.3.0 has it. Lowered as the input's current decision,
/// lifted as the policy's answer.
#[derive(ComponentType, Lift, Lower, Clone, Debug)]
#[component(record)]
pub struct Decision {
    address: AddressChoice,
    ports: Vec<PortDecision>,
    warnings: Vec<String>,
    #[component(name = "preserve-client-ip")]
    preserve_client_ip: bool,
    traffic: Vec<PortTraffic>,
    #[component(name = "service-engine-group")]
    service_engine_group: Option<String>,
}

/// `decision-input` as 0.3.0 has it, with the records above.
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
    #[component(name = "service-engine-groups")]
    service_engine_groups: Vec<ServiceEngineGroup>,
}

impl From<&super::DecisionInput> for DecisionInput {
    fn from(input: &super::DecisionInput) -> Self {
        let c = &input.cluster;
        let k = c.capabilities;
        Self {
            service: input.service.clone(),
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
                    http_rules: k.http_rules,
                },
            },
            pools: pools(&input.pools),
            certificates: input.certificates.clone(),
            profiles: input.profiles.clone(),
            current: input.current.as_ref().map(|d| Decision {
                address: d.address.clone(),
                ports: ports(&d.ports),
                warnings: d.warnings.clone(),
                preserve_client_ip: d.preserve_client_ip,
                traffic: d.traffic.clone(),
                service_engine_group: d.service_engine_group.clone(),
            }),
            ready_endpoints: input.ready_endpoints,
            service_engine_groups: input.service_engine_groups.clone(),
        }
    }
}

/// A 0.3.0 policy cannot tune monitors, choose the address's mode or
/// hostname, keep its address or choose its Nodes.
impl From<Decision> for super::Decision {
    fn from(decision: Decision) -> Self {
        let ports = decision.ports.into_iter().map(Into::into).collect();
        Self {
            preserve_client_ip: decision.preserve_client_ip,
            traffic: decision.traffic,
            service_engine_group: decision.service_engine_group,
            ..super::Decision::of(decision.address, ports, decision.warnings)
        }
    }
}

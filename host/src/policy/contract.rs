//! The contract versions a policy may implement, side by side: 0.2.0 (the
//! current `wit/`) and 0.1.0 (`wit/0.1.0/`, frozen). The host's model is the
//! 0.2.0 shape; a 0.1.0 policy gets its input without the fields 0.2.0 added
//! and its decisions come back with them at their neutral values.

use wasmtime::component::{ComponentType, Lift, Lower};

use super::model::{self, AddressPool, AppProfile, Certificate, Namespace, PortDecision};

/// A version of the `vcd:lb-policy` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// `vcd:lb-policy@0.1.0`.
    V0_1,
    /// `vcd:lb-policy@0.2.0`: source ranges, ready endpoints and transparent
    /// mode in the input, `preserve-client-ip` in the decision.
    V0_2,
}

impl Contract {
    /// Every version the host serves, newest first (the order exports are looked for).
    pub const ALL: [Contract; 2] = [Contract::V0_2, Contract::V0_1];

    /// `0.1.0` or `0.2.0`.
    pub fn version(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1.0",
            Contract::V0_2 => "0.2.0",
        }
    }

    /// The interface a policy exports.
    pub fn policy_interface(self) -> String {
        format!("vcd:lb-policy/policy@{}", self.version())
    }

    /// The host functions a policy may import.
    pub fn host_interface(self) -> String {
        format!("vcd:lb-policy/host@{}", self.version())
    }

    /// The contract's types, which policies import.
    pub fn types_interface(self) -> String {
        format!("vcd:lb-policy/types@{}", self.version())
    }
}

impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vcd:lb-policy@{}", self.version())
    }
}

/// `service` as 0.1.0 has it.
#[derive(ComponentType, Lower, Clone, Debug)]
#[component(record)]
pub struct Service {
    namespace: String,
    name: String,
    uid: String,
    labels: model::Pairs,
    annotations: model::Pairs,
    ports: Vec<model::ServicePort>,
    #[component(name = "load-balancer-ip")]
    load_balancer_ip: Option<String>,
    #[component(name = "load-balancer-class")]
    load_balancer_class: Option<String>,
    #[component(name = "external-traffic-policy")]
    external_traffic_policy: model::TrafficPolicy,
    #[component(name = "health-check-node-port")]
    health_check_node_port: Option<u16>,
    #[component(name = "ip-families")]
    ip_families: Vec<model::IpFamily>,
}

/// `capabilities` as 0.1.0 has it.
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
}

/// `cluster` as 0.1.0 has it.
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

/// `decision` as 0.1.0 has it.
#[derive(ComponentType, Lift, Lower, Clone, Debug)]
#[component(record)]
pub struct Decision {
    address: model::AddressChoice,
    ports: Vec<PortDecision>,
    warnings: Vec<String>,
}

/// `decision-input` as 0.1.0 has it.
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
}

impl From<&model::DecisionInput> for DecisionInput {
    fn from(input: &model::DecisionInput) -> Self {
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
                },
            },
            pools: input.pools.clone(),
            certificates: input.certificates.clone(),
            profiles: input.profiles.clone(),
            current: input.current.as_ref().map(|d| Decision {
                address: d.address.clone(),
                ports: d.ports.clone(),
                warnings: d.warnings.clone(),
            }),
        }
    }
}

impl From<Decision> for model::Decision {
    fn from(decision: Decision) -> Self {
        Self {
            address: decision.address,
            ports: decision.ports,
            warnings: decision.warnings,
            preserve_client_ip: false,
        }
    }
}

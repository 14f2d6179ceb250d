//! The policy contract's types (`wit/types.wit`, 0.4.0) in Rust: the one
//! model the host works with, whichever version a policy implements.
//!
//! Written out rather than generated so they also carry serde in WIT spelling
//! (kebab-case fields and cases), which test suites and `policy eval` use.
//! Wasmtime type-checks every type here against the component's WIT when a
//! policy is loaded, so a drift from `wit/` fails loudly at load time.
//! `v0_3`, `v0_2` and `v0_1` hold the records later versions extended, in
//! the shapes policies on those versions are called with.

mod exposure;
mod health;
mod http;
mod placement;
mod scalars;
mod traffic;
pub(super) mod v0_1;
pub(super) mod v0_2;
pub(super) mod v0_3;

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

pub use exposure::{IpMode, NodeRequirement, SelectorOperator};
pub use health::{HttpCheck, MonitorSettings, StatusRange};
pub use http::{
    Header, HeaderAction, HeaderMatch, HttpMatch, HttpMethod, HttpRules, RateLimit,
    RateLimitAction, Redirect, RedirectCode, RequestAction, RequestModification, RequestRule,
    ResponseRule, Scheme, SecurityAction, SecurityRule, TextCriteria, TextMatch, UrlRewrite,
};
pub use placement::ServiceEngineGroup;
pub use scalars::{
    AppProfile, HealthMonitor, IpAddress, IpFamily, LogLevel, PoolAlgorithm, PoolSource, Protocol,
    TrafficPolicy,
};
pub use traffic::{Persistence, PortTraffic, SessionAffinity};

/// Key/value pairs (labels, annotations), written as a YAML/JSON mapping.
pub type Pairs = Vec<(String, String)>;

mod pairs_as_map {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        pairs: &super::Pairs,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        pairs
            .iter()
            .map(|(k, v)| (k, v))
            .collect::<BTreeMap<_, _>>()
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<super::Pairs, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

/// One entry of a Service's `spec.ports`.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ServicePort {
    /// `name`; empty for a Service's single unnamed port.
    #[serde(default)]
    pub name: String,
    /// `protocol`.
    pub protocol: Protocol,
    /// `port`: the port the Service's clients connect to.
    pub port: u16,
    /// `nodePort`; `None` until the API server has allocated one.
    #[component(name = "node-port")]
    #[serde(default)]
    pub node_port: Option<u16>,
    /// `appProtocol`, verbatim (e.g. `http`, `https`, `kubernetes.io/h2c`).
    #[component(name = "app-protocol")]
    #[serde(default)]
    pub app_protocol: Option<String>,
}

/// The Service being reconciled: everything about it a decision may depend on.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Service {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.labels`, sorted by key.
    #[serde(with = "pairs_as_map")]
    pub labels: Pairs,
    /// `metadata.annotations`, sorted by key.
    #[serde(with = "pairs_as_map")]
    pub annotations: Pairs,
    /// `spec.ports`, in the Service's order.
    pub ports: Vec<ServicePort>,
    /// `spec.loadBalancerIP`, verbatim and unparsed: a malformed value is for the
    /// policy to report, not for the host to guess at.
    #[component(name = "load-balancer-ip")]
    pub load_balancer_ip: Option<String>,
    /// `spec.loadBalancerClass`.
    #[component(name = "load-balancer-class")]
    pub load_balancer_class: Option<String>,
    /// `spec.externalTrafficPolicy`.
    #[component(name = "external-traffic-policy")]
    pub external_traffic_policy: TrafficPolicy,
    /// `spec.healthCheckNodePort`; set when `externalTrafficPolicy` is `Local`.
    #[component(name = "health-check-node-port")]
    pub health_check_node_port: Option<u16>,
    /// `spec.ipFamilies`, most preferred first.
    #[component(name = "ip-families")]
    pub ip_families: Vec<IpFamily>,
    /// The CIDRs allowed to connect (checked and normalised by the host);
    /// empty means anywhere. Contract 0.2.0.
    #[component(name = "load-balancer-source-ranges")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub load_balancer_source_ranges: Vec<String>,
    /// `spec.sessionAffinity` and its timeout. Contract 0.3.0.
    #[component(name = "session-affinity")]
    #[serde(skip_serializing_if = "is_default")]
    pub session_affinity: SessionAffinity,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The Service's namespace.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Namespace {
    /// The namespace's name.
    pub name: String,
    /// The namespace's labels, sorted by key.
    #[serde(with = "pairs_as_map")]
    pub labels: Pairs,
}

/// What the VCD installation and the CCM's configuration allow.
#[derive(
    ComponentType, Lift, Lower, Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize,
)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Capabilities {
    /// Several virtual services may share one VIP on different ports (VCD 10.4 and later).
    #[component(name = "shared-vip")]
    pub shared_vip: bool,
    /// The gateway's external addresses come from IP Spaces rather than IP blocks.
    #[component(name = "ip-spaces")]
    pub ip_spaces: bool,
    /// Virtual services listen on internal addresses, reached through DNAT rules.
    #[component(name = "one-arm")]
    pub one_arm: bool,
    /// The ALB feature set is PREMIUM: [`AppProfile::L4Tls`] and the non-basic
    /// [`PoolAlgorithm`]s are available.
    pub premium: bool,
    /// Virtual services may run in transparent mode (VCD API 37.1+ and
    /// enabled on the gateway), so `preserve_client_ip` can be honoured.
    /// Contract 0.2.0.
    #[component(name = "transparent-mode")]
    pub transparent_mode: bool,
    /// Virtual services take HTTP rules (VCD API 38.0 and later). Contract 0.3.0.
    #[component(name = "http-rules")]
    pub http_rules: bool,
    /// Health monitors can be tuned ([`PortDecision::monitor`]). Contract 0.4.0.
    #[component(name = "health-monitors")]
    pub health_monitors: bool,
    /// Internal address pools are offered. Contract 0.4.0.
    #[component(name = "internal-addresses")]
    pub internal_addresses: bool,
    /// An address may outlive its Service ([`Decision::retain_address`]).
    /// Contract 0.4.0.
    #[component(name = "retained-addresses")]
    pub retained_addresses: bool,
}

/// The cluster and the VCD objects it lives in.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Cluster {
    /// The cluster id from the cloud config: a CAPVCD RDE id or a free-form name.
    #[component(name = "cluster-id")]
    pub cluster_id: String,
    /// The VCD organization's name.
    pub org: String,
    /// The organization VDC's name.
    pub vdc: String,
    /// The name of the edge gateway that hosts the load balancers.
    pub gateway: String,
    /// The VCD API version in use, e.g. `37.2`.
    #[component(name = "vcd-api-version")]
    pub vcd_api_version: String,
    /// What the installation and configuration allow.
    pub capabilities: Capabilities,
}

/// An inclusive range of addresses.
#[derive(ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct IpRange {
    /// The first address of the range.
    pub first: IpAddress,
    /// The last address of the range, included.
    pub last: IpAddress,
}

impl IpRange {
    /// Whether `address` lies between `first` and `last` inclusive; always false
    /// when its family differs from the range's.
    pub fn contains(&self, address: IpAddress) -> bool {
        match (
            IpAddr::from(self.first),
            IpAddr::from(self.last),
            IpAddr::from(address),
        ) {
            (IpAddr::V4(f), IpAddr::V4(l), IpAddr::V4(a)) => f <= a && a <= l,
            (IpAddr::V6(f), IpAddr::V6(l), IpAddr::V6(a)) => f <= a && a <= l,
            _ => false,
        }
    }
}

/// A pool the host can allocate load-balancer addresses from. Its free
/// addresses are not listed, only counted.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AddressPool {
    /// The pool's name, as [`AddressChoice::FromPool`] refers to it.
    pub name: String,
    /// Where its addresses come from.
    pub source: PoolSource,
    /// The address ranges the pool covers.
    pub ranges: Vec<IpRange>,
    /// How many of its addresses are still free.
    #[component(name = "free-count")]
    pub free_count: u32,
    /// Whether its addresses are reached from outside the org's networks.
    /// Contract 0.4.0; pools written without it are external.
    #[serde(default = "external_by_default")]
    pub external: bool,
}

fn external_by_default() -> bool {
    true
}

/// A certificate in the org's certificate library; metadata only, as policies
/// never see keys.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Certificate {
    /// The certificate's alias in the library.
    pub alias: String,
}

/// Which external address the Service gets.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum AddressChoice {
    /// This address, which must lie in one of the offered pools and be free or
    /// already held by this Service.
    #[component(name = "specific")]
    Specific(IpAddress),
    /// Any free address of the named pool.
    #[component(name = "from-pool")]
    FromPool(String),
    /// The address the Service holds now ([`DecisionInput::current`]); refused
    /// when it holds none.
    #[component(name = "keep-current")]
    KeepCurrent,
}

/// What to build for one Service port.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PortDecision {
    /// The Service port this entry covers; with `protocol`, identifies it.
    #[component(name = "service-port")]
    pub service_port: u16,
    /// The protocol of the Service port this entry covers.
    pub protocol: Protocol,
    /// The port the virtual service listens on.
    #[component(name = "listen-port")]
    pub listen_port: u16,
    /// The virtual service's application profile.
    pub profile: AppProfile,
    /// The alias of the certificate to terminate TLS with: required by
    /// [`AppProfile::L4Tls`] and [`AppProfile::Https`], refused otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// The pool's health monitor.
    #[component(name = "health-monitor")]
    pub health_monitor: HealthMonitor,
    /// The pool's load-balancing algorithm.
    pub algorithm: PoolAlgorithm,
    /// Tuning of the health monitor. Contract 0.4.0; `None` from earlier
    /// policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<MonitorSettings>,
}

#[cfg(test)]
impl PortDecision {
    /// TCP port 80 with an HTTP profile, the monitor `monitor` tuned by
    /// `settings`, for tests of monitors.
    pub fn monitored(monitor: HealthMonitor, settings: Option<MonitorSettings>) -> Self {
        Self {
            service_port: 80,
            protocol: Protocol::Tcp,
            listen_port: 80,
            profile: AppProfile::Http,
            certificate: None,
            health_monitor: monitor,
            algorithm: PoolAlgorithm::RoundRobin,
            monitor: settings,
        }
    }
}

/// A policy's answer for one Service.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Decision {
    /// The Service's external address.
    pub address: AddressChoice,
    /// Exactly one entry per Service port.
    pub ports: Vec<PortDecision>,
    /// Non-fatal remarks, reported as Events on the Service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Clients' source addresses reach the pods (NSX ALB transparent mode).
    /// Contract 0.2.0; always false from 0.1.0 policies.
    #[component(name = "preserve-client-ip")]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preserve_client_ip: bool,
    /// Persistence per port, at most one entry each. Contract 0.3.0; empty
    /// from earlier policies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<PortTraffic>,
    /// The service engine group, by name; `None` leaves it to the host.
    /// Contract 0.3.0.
    #[component(name = "service-engine-group")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_engine_group: Option<String>,
    /// How clients inside the cluster reach the address. Contract 0.4.0.
    #[component(name = "ip-mode")]
    #[serde(default, skip_serializing_if = "is_default")]
    pub ip_mode: IpMode,
    /// A DNS name beside the address in the Service's status. Contract 0.4.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Keep the address when the Service is deleted. Contract 0.4.0.
    #[component(name = "retain-address")]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retain_address: bool,
    /// Which Nodes serve the Service; empty: every eligible one. Contract 0.4.0.
    #[component(name = "node-selector")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_selector: Vec<NodeRequirement>,
}

impl Decision {
    /// A decision of this address and these ports, every later field at
    /// its neutral value: what a policy on an older contract answers.
    pub fn of(address: AddressChoice, ports: Vec<PortDecision>, warnings: Vec<String>) -> Self {
        Self {
            address,
            ports,
            warnings,
            preserve_client_ip: false,
            traffic: Vec::new(),
            service_engine_group: None,
            ip_mode: IpMode::Proxy,
            hostname: None,
            retain_address: false,
            node_selector: Vec::new(),
        }
    }
}

/// Everything a decision may depend on, so a policy never needs to call the host.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DecisionInput {
    /// The Service to decide for.
    pub service: Service,
    /// The Service's namespace.
    pub namespace: Namespace,
    /// The cluster and its VCD surroundings.
    pub cluster: Cluster,
    /// The pools the Service may take its address from, in the provider's order.
    pub pools: Vec<AddressPool>,
    /// The certificates in the org's library.
    pub certificates: Vec<Certificate>,
    /// The application profiles the gateway offers.
    pub profiles: Vec<AppProfile>,
    /// What is live in VCD for this Service now, as the host reads it back (its
    /// address always [`AddressChoice::Specific`]); `None` for a new Service.
    pub current: Option<Decision>,
    /// How many ready endpoints the Service's EndpointSlices list. Contract 0.2.0.
    #[component(name = "ready-endpoints")]
    pub ready_endpoints: u32,
    /// The service engine groups assigned to the gateway. Contract 0.3.0.
    #[component(name = "service-engine-groups")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub service_engine_groups: Vec<ServiceEngineGroup>,
    /// Addresses this cluster kept for a deleted Service of this namespace
    /// and name. Contract 0.4.0.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retained: Vec<IpAddress>,
}

/// An annotation (or other Service field) whose value the policy cannot use.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct InvalidField {
    /// The annotation key, or a field path such as `spec.loadBalancerIP`.
    pub key: String,
    /// What is wrong, and what would be accepted.
    pub message: String,
}

/// A Service port the policy cannot serve.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct UnsupportedPort {
    /// The Service port (`port`, not its node port).
    pub port: u16,
    /// The Service port's protocol.
    pub protocol: Protocol,
    /// Why the port cannot be served.
    pub message: String,
}

/// Why a policy could not decide; each case becomes a specific Event on the Service.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionError {
    /// An annotation or field value is malformed or contradicts another one.
    #[component(name = "invalid-annotation")]
    InvalidAnnotation(InvalidField),
    /// The requested address is in no pool the Service may use.
    #[component(name = "requested-address-unavailable")]
    RequestedAddressUnavailable(IpAddress),
    /// The Service needs an IP family that no pool offers.
    #[component(name = "unsupported-ip-family")]
    UnsupportedIpFamily(IpFamily),
    /// No pool has a free address.
    #[component(name = "no-address-available")]
    NoAddressAvailable,
    /// No certificate in the library has this alias.
    #[component(name = "certificate-not-found")]
    CertificateNotFound(String),
    /// A port cannot be served (by protocol, profile or namespace rules).
    #[component(name = "unsupported-port")]
    UnsupportedPort(UnsupportedPort),
    /// The gateway does not offer a profile the Service needs.
    #[component(name = "profile-unavailable")]
    ProfileUnavailable(AppProfile),
    /// Anything else; shown to users as is, never parsed.
    #[component(name = "other")]
    Other(String),
}

impl std::fmt::Display for DecisionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidAnnotation(e) => write!(f, "invalid {}: {}", e.key, e.message),
            Self::RequestedAddressUnavailable(ip) => {
                write!(
                    f,
                    "requested address {ip} is not in any address pool this Service may use"
                )
            }
            Self::UnsupportedIpFamily(family) => {
                write!(f, "no address pool offers {family} addresses")
            }
            Self::NoAddressAvailable => f.write_str("no address pool has a free address"),
            Self::CertificateNotFound(alias) => {
                write!(f, "certificate {alias:?} is not in the certificate library")
            }
            Self::UnsupportedPort(p) => write!(f, "{} port {}: {}", p.protocol, p.port, p.message),
            Self::ProfileUnavailable(profile) => {
                write!(f, "the gateway does not offer the {profile} profile")
            }
            Self::Other(message) => f.write_str(message),
        }
    }
}

/// What a policy's `describe` returns; identifies it in logs, metrics and errors.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case")]
pub struct PolicyInfo {
    /// The name the policy gives itself (not necessarily its manifest name).
    pub name: String,
    /// The policy's version, as free text.
    pub version: String,
}

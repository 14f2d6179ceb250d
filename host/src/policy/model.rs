//! The policy contract's types (`wit/types.wit`) in Rust.
//!
//! Written out rather than generated so they also carry serde in WIT spelling
//! (kebab-case fields and cases), which test suites and `policy eval` use.
//! Wasmtime type-checks every type here against the component's WIT when a
//! policy is loaded, so a drift from `wit/` fails loudly at load time.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

/// An IP address; written as its usual text (`10.0.0.5`, `2001:db8::1`) in YAML and JSON.
#[derive(
    ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize,
)]
#[component(variant)]
#[serde(into = "String", try_from = "String")]
pub enum IpAddress {
    #[component(name = "ipv4")]
    Ipv4((u8, u8, u8, u8)),
    #[component(name = "ipv6")]
    Ipv6((u16, u16, u16, u16, u16, u16, u16, u16)),
}

impl From<IpAddr> for IpAddress {
    fn from(address: IpAddr) -> Self {
        match address {
            IpAddr::V4(v4) => {
                let [a, b, c, d] = v4.octets();
                IpAddress::Ipv4((a, b, c, d))
            }
            IpAddr::V6(v6) => {
                let [a, b, c, d, e, f, g, h] = v6.segments();
                IpAddress::Ipv6((a, b, c, d, e, f, g, h))
            }
        }
    }
}

impl From<IpAddress> for IpAddr {
    fn from(address: IpAddress) -> Self {
        match address {
            IpAddress::Ipv4((a, b, c, d)) => IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
            IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => {
                IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h))
            }
        }
    }
}

impl From<IpAddress> for String {
    fn from(address: IpAddress) -> Self {
        IpAddr::from(address).to_string()
    }
}

impl TryFrom<String> for IpAddress {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        text.parse::<IpAddr>()
            .map(IpAddress::from)
            .map_err(|_| format!("{text:?} is not an IPv4 or IPv6 address"))
    }
}

impl std::fmt::Display for IpAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        IpAddr::from(*self).fmt(f)
    }
}

macro_rules! wit_enum {
    ($(#[$doc:meta])* $name:ident $(default $default:ident)? { $($case:ident = $wit:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[component(enum)]
        #[repr(u8)]
        pub enum $name {
            $(#[component(name = $wit)] #[serde(rename = $wit)] $case,)+
        }

        impl $name {
            /// The case's WIT name.
            pub fn wit_name(self) -> &'static str {
                match self { $($name::$case => $wit,)+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.wit_name())
            }
        }

        $(impl Default for $name {
            fn default() -> Self {
                $name::$default
            }
        })?
    };
}

wit_enum!(IpFamily { Ipv4 = "ipv4", Ipv6 = "ipv6" });
wit_enum!(Protocol default Tcp { Tcp = "tcp", Udp = "udp", Sctp = "sctp" });
wit_enum!(TrafficPolicy default Cluster { Cluster = "cluster", Local = "local" });
wit_enum!(PoolSource { IpBlock = "ip-block", IpSpace = "ip-space" });
wit_enum!(AppProfile { L4Tcp = "l4-tcp", L4Udp = "l4-udp", L4Tls = "l4-tls", Http = "http", Https = "https" });
wit_enum!(HealthMonitor { None = "none", Tcp = "tcp", Udp = "udp", Http = "http", Https = "https", Ping = "ping" });
wit_enum!(PoolAlgorithm {
    LeastConnections = "least-connections",
    RoundRobin = "round-robin",
    ConsistentHash = "consistent-hash",
    FastestResponse = "fastest-response",
    LeastLoad = "least-load",
    FewestServers = "fewest-servers",
    Random = "random",
    FewestTasks = "fewest-tasks",
    CoreAffinity = "core-affinity",
});
wit_enum!(LogLevel { Trace = "trace", Debug = "debug", Info = "info", Warn = "warn", Error = "error" });

impl PoolAlgorithm {
    /// Whether the algorithm is available without the PREMIUM feature set.
    pub fn is_basic(self) -> bool {
        matches!(
            self,
            Self::LeastConnections | Self::RoundRobin | Self::ConsistentHash
        )
    }
}

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

#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ServicePort {
    #[serde(default)]
    pub name: String,
    pub protocol: Protocol,
    pub port: u16,
    #[component(name = "node-port")]
    #[serde(default)]
    pub node_port: Option<u16>,
    #[component(name = "app-protocol")]
    #[serde(default)]
    pub app_protocol: Option<String>,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Service {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    #[serde(with = "pairs_as_map")]
    pub labels: Pairs,
    #[serde(with = "pairs_as_map")]
    pub annotations: Pairs,
    pub ports: Vec<ServicePort>,
    #[component(name = "load-balancer-ip")]
    pub load_balancer_ip: Option<String>,
    #[component(name = "load-balancer-class")]
    pub load_balancer_class: Option<String>,
    #[component(name = "external-traffic-policy")]
    pub external_traffic_policy: TrafficPolicy,
    #[component(name = "health-check-node-port")]
    pub health_check_node_port: Option<u16>,
    #[component(name = "ip-families")]
    pub ip_families: Vec<IpFamily>,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Namespace {
    pub name: String,
    #[serde(with = "pairs_as_map")]
    pub labels: Pairs,
}

#[derive(
    ComponentType, Lift, Lower, Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize,
)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Capabilities {
    #[component(name = "shared-vip")]
    pub shared_vip: bool,
    #[component(name = "ip-spaces")]
    pub ip_spaces: bool,
    #[component(name = "one-arm")]
    pub one_arm: bool,
    pub premium: bool,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Cluster {
    #[component(name = "cluster-id")]
    pub cluster_id: String,
    pub org: String,
    pub vdc: String,
    pub gateway: String,
    #[component(name = "vcd-api-version")]
    pub vcd_api_version: String,
    pub capabilities: Capabilities,
}

#[derive(ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct IpRange {
    pub first: IpAddress,
    pub last: IpAddress,
}

impl IpRange {
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

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AddressPool {
    pub name: String,
    pub source: PoolSource,
    pub ranges: Vec<IpRange>,
    #[component(name = "free-count")]
    pub free_count: u32,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Certificate {
    pub alias: String,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum AddressChoice {
    #[component(name = "specific")]
    Specific(IpAddress),
    #[component(name = "from-pool")]
    FromPool(String),
    #[component(name = "keep-current")]
    KeepCurrent,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PortDecision {
    #[component(name = "service-port")]
    pub service_port: u16,
    pub protocol: Protocol,
    #[component(name = "listen-port")]
    pub listen_port: u16,
    pub profile: AppProfile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    #[component(name = "health-monitor")]
    pub health_monitor: HealthMonitor,
    pub algorithm: PoolAlgorithm,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Decision {
    pub address: AddressChoice,
    pub ports: Vec<PortDecision>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DecisionInput {
    pub service: Service,
    pub namespace: Namespace,
    pub cluster: Cluster,
    pub pools: Vec<AddressPool>,
    pub certificates: Vec<Certificate>,
    pub profiles: Vec<AppProfile>,
    pub current: Option<Decision>,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct InvalidField {
    pub key: String,
    pub message: String,
}

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct UnsupportedPort {
    pub port: u16,
    pub protocol: Protocol,
    pub message: String,
}

/// Why a policy could not decide; each case becomes a specific Event on the Service.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionError {
    #[component(name = "invalid-annotation")]
    InvalidAnnotation(InvalidField),
    #[component(name = "requested-address-unavailable")]
    RequestedAddressUnavailable(IpAddress),
    #[component(name = "unsupported-ip-family")]
    UnsupportedIpFamily(IpFamily),
    #[component(name = "no-address-available")]
    NoAddressAvailable,
    #[component(name = "certificate-not-found")]
    CertificateNotFound(String),
    #[component(name = "unsupported-port")]
    UnsupportedPort(UnsupportedPort),
    #[component(name = "profile-unavailable")]
    ProfileUnavailable(AppProfile),
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

#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case")]
pub struct PolicyInfo {
    pub name: String,
    pub version: String,
}

//! The contract's addresses and enums: the values records are made of.

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
    /// An IPv4 address, as its four octets in network order.
    #[component(name = "ipv4")]
    Ipv4((u8, u8, u8, u8)),
    /// An IPv6 address, as its eight 16-bit segments in network order.
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
    ($(#[$doc:meta])* $name:ident $(default $default:ident)? { $($(#[$case_doc:meta])* $case:ident = $wit:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[component(enum)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$case_doc])* #[component(name = $wit)] #[serde(rename = $wit)] $case,)+
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
pub(super) use wit_enum;

wit_enum!(
    /// An IP family, as listed in a Service's `spec.ipFamilies`.
    IpFamily {
        /// IPv4 (`IPv4`).
        Ipv4 = "ipv4",
        /// IPv6 (`IPv6`).
        Ipv6 = "ipv6",
    }
);
wit_enum!(
    /// The transport protocol of a Service port.
    Protocol default Tcp {
        /// TCP, the Kubernetes default.
        Tcp = "tcp",
        /// UDP.
        Udp = "udp",
        /// SCTP; no application profile serves it.
        Sctp = "sctp",
    }
);
wit_enum!(
    /// A Service's `spec.externalTrafficPolicy`.
    TrafficPolicy default Cluster {
        /// `Cluster`, the default: every node forwards to the Service's endpoints.
        Cluster = "cluster",
        /// `Local`: only nodes with a local endpoint take traffic, as reported on
        /// `spec.healthCheckNodePort`.
        Local = "local",
    }
);
wit_enum!(
    /// Where the addresses of an [`AddressPool`](super::AddressPool) come from.
    PoolSource {
        /// Sub-allocated IP ranges of the gateway's uplink, optionally narrowed by
        /// `vipSubnet`.
        IpBlock = "ip-block",
        /// A public IP Space the gateway is connected to; addresses are allocated
        /// as floating IPs.
        IpSpace = "ip-space",
        /// Internal ranges of the cloud config, or the one-arm range.
        InternalRange = "internal-range",
        /// A PRIVATE IP Space of the org.
        PrivateIpSpace = "private-ip-space",
    }
);
wit_enum!(
    /// A virtual service's application profile.
    AppProfile {
        /// TCP proxying (VCD `L4`).
        L4Tcp = "l4-tcp",
        /// UDP (VCD `L4` with the UDP fast-path profile).
        L4Udp = "l4-udp",
        /// TCP with TLS terminated at the load balancer (VCD `L4_TLS`); needs PREMIUM
        /// and a certificate.
        L4Tls = "l4-tls",
        /// HTTP proxying (VCD `HTTP`).
        Http = "http",
        /// HTTPS with TLS terminated at the load balancer (VCD `HTTPS`); needs a
        /// certificate.
        Https = "https",
    }
);
wit_enum!(
    /// A pool's health monitor. VCD offers its system monitors by type only, so
    /// none takes settings such as an HTTP path.
    HealthMonitor {
        /// No monitor: every member is taken to be up.
        None = "none",
        /// A TCP connect check.
        Tcp = "tcp",
        /// A UDP probe; only for UDP ports.
        Udp = "udp",
        /// An HTTP request.
        Http = "http",
        /// An HTTPS request.
        Https = "https",
        /// An ICMP echo.
        Ping = "ping",
    }
);
wit_enum!(
    /// How a pool spreads connections over its members. Only the
    /// [basic](PoolAlgorithm::is_basic) algorithms work without the PREMIUM
    /// feature set. Sent to VCD as the name in upper case (`LEAST_CONNECTIONS`).
    PoolAlgorithm {
        /// To the member with the fewest open connections.
        LeastConnections = "least-connections",
        /// To each member in turn.
        RoundRobin = "round-robin",
        /// By a consistent hash of the client's address, so a client stays on one member.
        ConsistentHash = "consistent-hash",
        /// To the member that answers fastest (PREMIUM).
        FastestResponse = "fastest-response",
        /// To the least loaded member (PREMIUM).
        LeastLoad = "least-load",
        /// To as few members as possible (PREMIUM).
        FewestServers = "fewest-servers",
        /// To a random member (PREMIUM).
        Random = "random",
        /// Adaptively, by the members' own reports of their load (PREMIUM).
        FewestTasks = "fewest-tasks",
        /// Each load-balancer CPU core to its own subset of members (PREMIUM).
        CoreAffinity = "core-affinity",
    }
);
wit_enum!(
    /// The severity of a line a policy writes with `host.log`.
    LogLevel {
        /// Logged at trace level.
        Trace = "trace",
        /// Logged at debug level.
        Debug = "debug",
        /// Logged at info level.
        Info = "info",
        /// Logged at warn level.
        Warn = "warn",
        /// Logged at error level.
        Error = "error",
    }
);

impl PoolAlgorithm {
    /// Whether the algorithm is available without the PREMIUM feature set.
    pub fn is_basic(self) -> bool {
        matches!(
            self,
            Self::LeastConnections | Self::RoundRobin | Self::ConsistentHash
        )
    }
}

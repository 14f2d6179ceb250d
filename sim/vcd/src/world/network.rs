//! Org VDC networks and NSX-T edge gateways.

use std::net::IpAddr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::ip::IpRange;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subnet {
    pub gateway: IpAddr,
    pub prefix_length: u8,
    pub ranges: Vec<IpRange>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgVdcNetwork {
    pub id: String,
    pub org_id: String,
    /// The VDC or the data-center group owning the network (`vdcId` in
    /// dumps from before groups).
    #[serde(alias = "vdcId")]
    pub owner_id: String,
    pub name: String,
    pub description: String,
    /// `NSXT_FLEXIBLE_SEGMENT` and friends.
    pub backing_type: String,
    /// `NAT_ROUTED` when connected to a gateway, else `ISOLATED`.
    pub network_type: String,
    pub gateway_id: Option<String>,
    pub subnet: Subnet,
}

/// A sub-allocated subnet on a gateway uplink, IPv4 or IPv6: an uplink
/// may carry one of each family, each with its own primary IP.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySubnet {
    pub gateway: IpAddr,
    pub prefix_length: u8,
    pub primary_ip: Option<IpAddr>,
    pub ranges: Vec<IpRange>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Uplink {
    pub id: String,
    pub name: String,
    pub using_ip_space: bool,
    pub subnets: Vec<GatewaySubnet>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerConfig {
    pub enabled: bool,
    pub service_network_definition: String,
    pub supported_feature_set: String,
    /// Virtual services may enable transparent mode (API 37.1+).
    pub transparent_mode_enabled: bool,
    /// The IPv6 side of the service network; once set it cannot change.
    pub ipv6_service_network_definition: Option<String>,
}

/// A gateway write in flight (and its cool-down afterwards).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BusyMark {
    pub operation: String,
    pub task_id: String,
    /// `None` while the task runs; then the end of the cool-down.
    #[serde(skip)]
    pub until: Option<Instant>,
}

impl BusyMark {
    pub fn active(&self, now: Instant) -> bool {
        self.until.is_none_or(|until| now < until)
    }
}

/// How NSX-T deploys a gateway (`deploymentMode`, API 39.0 / VCD 10.6).
/// A distributed-only gateway has no service router: no NAT and no gateway
/// firewall, while load balancing works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeploymentMode {
    /// The usual gateway with a service router.
    #[default]
    ActiveStandby,
    DistributedOnly,
}

impl DeploymentMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ActiveStandby => "ACTIVE_STANDBY",
            Self::DistributedOnly => "DISTRIBUTED_ONLY",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeGateway {
    pub id: String,
    pub org_id: String,
    /// The VDC or the data-center group owning the gateway (`vdcId` in
    /// dumps from before groups).
    #[serde(alias = "vdcId")]
    pub owner_id: String,
    pub name: String,
    pub description: String,
    pub uplink: Uplink,
    /// IP Spaces reachable through the uplink (IP-Space backed gateways).
    pub ip_space_ids: Vec<String>,
    pub load_balancer: LoadBalancerConfig,
    pub busy: Option<BusyMark>,
    #[serde(default)]
    pub deployment_mode: DeploymentMode,
}

impl EdgeGateway {
    /// All sub-allocated external IP ranges.
    pub fn external_ranges(&self) -> impl Iterator<Item = &IpRange> {
        self.uplink.subnets.iter().flat_map(|s| s.ranges.iter())
    }

    /// The primary IP of each subnet that has one, in subnet order.
    pub fn primary_ips(&self) -> impl Iterator<Item = IpAddr> + '_ {
        self.uplink.subnets.iter().filter_map(|s| s.primary_ip)
    }

    pub fn is_busy(&self, now: Instant) -> bool {
        self.busy.as_ref().is_some_and(|b| b.active(now))
    }

    /// `CONFIGURING` while a gateway-scoped task runs.
    pub fn status(&self) -> &'static str {
        match &self.busy {
            Some(mark) if mark.until.is_none() => "CONFIGURING",
            _ => "REALIZED",
        }
    }
}

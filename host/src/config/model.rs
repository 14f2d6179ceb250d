//! The layout of the cloud config file, key for key. Every upstream key is
//! here under its upstream spelling (yaml.v2 lower-cases untagged Go fields,
//! hence `userorg` and `refreshtoken`); our additions are marked. Unknown
//! keys are rejected, as upstream's strict decoder does.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use serde::Deserialize;

use super::values;
use crate::instances::{HostnameSource, NicRole};
use crate::lb::ranges::Ipv4Range;
use crate::vcd::Secret;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of the keys vcd, loadbalancer, clusterid, vAppName, nodes"
)]
pub(super) struct ConfigFile {
    #[serde(default)]
    pub vcd: VcdSection,
    #[serde(default)]
    pub loadbalancer: LoadBalancerSection,
    #[serde(default)]
    pub clusterid: String,
    #[serde(default, rename = "vAppName")]
    pub vapp_name: String,
    /// Ours.
    #[serde(default)]
    pub nodes: NodesSection,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, expecting = "a mapping")]
pub(super) struct VcdSection {
    #[serde(default, deserialize_with = "values::http_url")]
    pub host: String,
    #[serde(default)]
    pub org: String,
    #[serde(default)]
    pub vdc: String,
    #[serde(default)]
    pub is_zone_enabled_cluster: bool,
    #[serde(default, rename = "userorg")]
    pub user_org: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub secret: Secret,
    #[serde(default, rename = "refreshtoken")]
    pub refresh_token: Secret,
    /// Ours: a PEM CA bundle VCD's certificate chains to.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// Ours: skip certificate verification.
    #[serde(default)]
    pub insecure: bool,
    /// Ours: a client-side limit on VCD requests per second.
    #[serde(default, deserialize_with = "values::requests_per_second")]
    pub requests_per_second: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, expecting = "a mapping")]
pub(super) struct LoadBalancerSection {
    /// Ours: `false` runs the node side only, for clusters without NSX ALB.
    #[serde(default = "enabled")]
    pub enabled: bool,
    #[serde(default)]
    pub one_arm: Option<OneArmSection>,
    #[serde(default, rename = "ports")]
    _ports: PortsSection,
    #[serde(default)]
    pub cert_alias: String,
    #[serde(default)]
    pub network: String,
    #[serde(default, deserialize_with = "values::optional_cidr")]
    pub vip_subnet: Option<Ipv4Range>,
    #[serde(default, rename = "enableVirtualServiceSharedIP")]
    pub enable_virtual_service_shared_ip: bool,
    /// Ours: an allow rule per Service on the gateway firewall.
    #[serde(default)]
    pub manage_firewall: bool,
    /// Ours: where internal load-balancer addresses come from.
    #[serde(default)]
    pub internal: Option<InternalSection>,
    /// Ours: a requested address of an unclaimed, unused IP Space
    /// allocation is taken.
    #[serde(default)]
    pub claim_unused_allocations: bool,
    /// Ours: pools of non-`Local` Services probe kube-proxy (API 39.0+).
    #[serde(default)]
    pub kube_proxy_health_check: bool,
}

/// Ours: `loadbalancer.internal`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping")]
pub(super) struct InternalSection {
    #[serde(default)]
    pub ranges: Vec<RangeSection>,
    /// The name of a PRIVATE IP Space of the org.
    #[serde(default, rename = "ipSpace")]
    pub ip_space: Option<String>,
}

/// An inclusive range of either family: `{startIP, endIP}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping")]
pub(super) struct RangeSection {
    #[serde(rename = "startIP", deserialize_with = "values::ip")]
    pub start_ip: IpAddr,
    #[serde(rename = "endIP", deserialize_with = "values::ip")]
    pub end_ip: IpAddr,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping")]
pub(super) struct OneArmSection {
    #[serde(rename = "startIP", deserialize_with = "values::ipv4")]
    pub start_ip: Ipv4Addr,
    #[serde(rename = "endIP", deserialize_with = "values::ipv4")]
    pub end_ip: Ipv4Addr,
}

fn enabled() -> bool {
    true
}

/// An absent `loadbalancer` section: load balancers on, nothing else set
/// (the check then asks for `loadbalancer.network`).
impl Default for LoadBalancerSection {
    fn default() -> Self {
        Self {
            enabled: enabled(),
            one_arm: None,
            _ports: PortsSection::default(),
            cert_alias: String::new(),
            network: String::new(),
            vip_subnet: None,
            enable_virtual_service_shared_ip: false,
            manage_firewall: false,
            internal: None,
            claim_unused_allocations: false,
            kube_proxy_health_check: false,
        }
    }
}

/// Accepted and, like upstream, never used.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping")]
pub(super) struct PortsSection {
    #[serde(default, rename = "http")]
    _http: Option<i32>,
    #[serde(default, rename = "https")]
    _https: Option<i32>,
}

/// Ours: how nodes get their addresses and labels.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, expecting = "a mapping")]
pub(super) struct NodesSection {
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub hostname: HostnameKey,
    #[serde(default)]
    pub other_nics: NicRoleKey,
    #[serde(default)]
    pub nics_by_network: BTreeMap<String, NicRoleKey>,
    #[serde(default)]
    pub zones_file: Option<PathBuf>,
}

/// `nodes.hostname`, spelled like Kubernetes enum values.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(super) enum HostnameKey {
    #[default]
    #[serde(rename = "VMName")]
    VmName,
    ComputerName,
    None,
}

/// A NIC role, spelled like the Kubernetes address types.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(super) enum NicRoleKey {
    #[default]
    Ignore,
    #[serde(rename = "InternalIP")]
    InternalIp,
    #[serde(rename = "ExternalIP")]
    ExternalIp,
}

impl From<HostnameKey> for HostnameSource {
    fn from(key: HostnameKey) -> Self {
        match key {
            HostnameKey::VmName => Self::VmName,
            HostnameKey::ComputerName => Self::ComputerName,
            HostnameKey::None => Self::None,
        }
    }
}

impl From<NicRoleKey> for NicRole {
    fn from(key: NicRoleKey) -> Self {
        match key {
            NicRoleKey::Ignore => Self::Ignore,
            NicRoleKey::InternalIp => Self::InternalIp,
            NicRoleKey::ExternalIp => Self::ExternalIp,
        }
    }
}

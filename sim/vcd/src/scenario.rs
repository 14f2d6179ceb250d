//! The YAML scenario that seeds a world. Names in a scenario refer to each
//! other (a network names its gateway, a gateway its IP Spaces and SEGs);
//! seeding resolves them into ids and fails on dangling names.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::world::compute::{Nic, PowerState};

pub const DEFAULT_SCENARIO: &str = include_str!("../scenarios/default.yaml");
pub const TWO_ORGS_SCENARIO: &str = include_str!("../scenarios/two-orgs.yaml");
pub const IP_SPACE_SCENARIO: &str = include_str!("../scenarios/ip-space.yaml");
pub const DUAL_STACK_SCENARIO: &str = include_str!("../scenarios/dual-stack.yaml");
pub const DC_GROUP_SCENARIO: &str = include_str!("../scenarios/dc-group.yaml");

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("invalid scenario YAML: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error("{kind} '{name}' referenced by {by} does not exist")]
    Dangling {
        kind: &'static str,
        name: String,
        by: String,
    },
    #[error("duplicate {kind} '{name}'")]
    Duplicate { kind: &'static str, name: String },
    #[error("{0}")]
    Ip(#[from] crate::world::ip::IpParseError),
    #[error("{address} is not of the address family of subnet {subnet}")]
    Family { address: String, subnet: String },
    #[error("the scenario has no {0}")]
    Missing(&'static str),
    #[error("edge gateway '{0}' needs exactly one owner: `vdc` or `vdcGroup`")]
    GatewayOwner(String),
    #[error("data-center group '{name}' has {count} VDCs; a group has 1 to 16")]
    GroupSize { name: String, count: usize },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub site: SiteSpec,
    /// The API versions `GET /api/versions` advertises, and the only ones a
    /// request may name.
    #[serde(default = "default_api_versions")]
    pub api_versions: Vec<String>,
    /// Users of the `System` org (system administrators).
    #[serde(default)]
    pub system_users: Vec<UserSpec>,
    #[serde(default)]
    pub service_engine_groups: Vec<SegSpec>,
    #[serde(default)]
    pub ip_spaces: Vec<IpSpaceSpec>,
    #[serde(default)]
    pub orgs: Vec<OrgSpec>,
    /// Service accounts, whose refresh tokens are one-time use.
    #[serde(default)]
    pub service_accounts: Vec<ServiceAccountSpec>,
}

impl Scenario {
    pub fn from_yaml(text: &str) -> Result<Self, ScenarioError> {
        Ok(serde_yaml_ng::from_str(text)?)
    }

    /// One org with a gateway on IP blocks, a SEG, a certificate and a
    /// vApp with three VMs.
    pub fn default_scenario() -> Self {
        Self::from_yaml(DEFAULT_SCENARIO).expect("the shipped default scenario parses")
    }

    /// Two orgs, each with its own gateway: for tenancy tests.
    pub fn two_orgs() -> Self {
        Self::from_yaml(TWO_ORGS_SCENARIO).expect("the shipped two-orgs scenario parses")
    }

    /// One org whose gateway is backed by a PUBLIC IP Space.
    pub fn ip_space() -> Self {
        Self::from_yaml(IP_SPACE_SCENARIO).expect("the shipped ip-space scenario parses")
    }

    /// One org whose cluster spans two VDCs of a data-center group, on the
    /// group's network and edge gateway.
    pub fn dc_group() -> Self {
        Self::from_yaml(DC_GROUP_SCENARIO).expect("the built-in DC-group scenario parses")
    }

    /// One org with an IPv4 + IPv6 IP-block gateway (`edge1`) and a gateway
    /// on an IPv4 and an IPv6 IP Space (`edge2`).
    pub fn dual_stack() -> Self {
        Self::from_yaml(DUAL_STACK_SCENARIO).expect("the shipped dual-stack scenario parses")
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SiteSpec {
    #[serde(default = "default_site_name")]
    pub name: String,
}

impl Default for SiteSpec {
    fn default() -> Self {
        Self {
            name: default_site_name(),
        }
    }
}

fn default_site_name() -> String {
    "vcdsim".to_string()
}

/// VCD 10.4.2 (37.2), 10.5 (38.0, 38.1) and 10.6 (39.0, 39.1).
pub fn default_api_versions() -> Vec<String> {
    crate::context::MODELLED_VERSIONS.map(String::from).to_vec()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserSpec {
    pub name: String,
    pub password: String,
    #[serde(default)]
    pub roles: Vec<String>,
    /// API (refresh) tokens of this user.
    #[serde(default)]
    pub api_tokens: Vec<String>,
}

/// A service account of `org`: its refresh token is one-time use, each
/// exchange answering the next one.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceAccountSpec {
    pub name: String,
    pub org: String,
    #[serde(default)]
    pub roles: Vec<String>,
    /// The token an org admin issued it (the device flow's answer).
    pub refresh_token: String,
    /// Lifetime of its access tokens; default: the `tokenTtlMs` knob.
    #[serde(default)]
    pub access_token_ttl_ms: Option<u64>,
}

/// A role of an org and the rights it holds, by VCD's names for them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleSpec {
    pub name: String,
    #[serde(default)]
    pub rights: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SegSpec {
    pub name: String,
    #[serde(default = "shared")]
    pub reservation_type: String,
    #[serde(default = "ha_mode")]
    pub ha_mode: String,
    #[serde(default = "premium")]
    pub supported_feature_set: String,
}

fn shared() -> String {
    "SHARED".to_string()
}
fn ha_mode() -> String {
    "ELASTIC_N_PLUS_M_BUFFER".to_string()
}
fn premium() -> String {
    "PREMIUM".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IpSpaceSpec {
    pub name: String,
    #[serde(rename = "type", default = "public")]
    pub space_type: String,
    /// The owner org of a PRIVATE space.
    pub org: Option<String>,
    /// `a.b.c.d-e.f.g.h` ranges of floating IPs.
    pub ranges: Vec<String>,
    #[serde(default)]
    pub internal_scope: Vec<String>,
    pub external_scope: Option<String>,
    #[serde(default = "default_quota")]
    pub default_floating_ip_quota: u32,
    /// Per-org quotas by org name.
    #[serde(default)]
    pub org_quotas: BTreeMap<String, u32>,
    /// Gateways with an uplink here get VCD's default NAT and firewall rules.
    #[serde(default)]
    pub default_gateway_services: bool,
}

fn public() -> String {
    "PUBLIC".to_string()
}
fn default_quota() -> u32 {
    10
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrgSpec {
    pub name: String,
    pub full_name: Option<String>,
    #[serde(default)]
    pub users: Vec<UserSpec>,
    /// The org's roles with their rights; a role a user names that is not
    /// listed here has a predefined role's rights, or none.
    #[serde(default)]
    pub roles: Vec<RoleSpec>,
    #[serde(default)]
    pub vdcs: Vec<VdcSpec>,
    /// Data-center groups of the org's VDCs.
    #[serde(default)]
    pub vdc_groups: Vec<VdcGroupSpec>,
    #[serde(default)]
    pub edge_gateways: Vec<GatewaySpec>,
    #[serde(default)]
    pub certificates: Vec<CertificateSpec>,
    #[serde(default)]
    pub entities: Vec<EntitySpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VdcSpec {
    pub name: String,
    #[serde(default = "flex")]
    pub allocation_type: String,
    #[serde(default)]
    pub networks: Vec<NetworkSpec>,
    #[serde(default)]
    pub vapps: Vec<VAppSpec>,
}

/// A data-center group: 1–16 of the org's VDCs, and the networks the group
/// owns (stretched to every member).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VdcGroupSpec {
    pub name: String,
    /// Member VDCs by name.
    pub vdcs: Vec<String>,
    #[serde(default)]
    pub networks: Vec<NetworkSpec>,
}

fn flex() -> String {
    "FLEX".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkSpec {
    pub name: String,
    /// The edge gateway (by name) the network is routed through.
    pub gateway: Option<String>,
    #[serde(default = "flexible_segment")]
    pub backing_type: String,
    /// Gateway address and prefix, `10.0.0.1/24`.
    pub cidr: String,
    #[serde(default)]
    pub ranges: Vec<String>,
}

fn flexible_segment() -> String {
    "NSXT_FLEXIBLE_SEGMENT".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewaySpec {
    pub name: String,
    /// The VDC owning the gateway; or else `vdc_group`.
    #[serde(default)]
    pub vdc: Option<String>,
    /// The data-center group owning the gateway.
    #[serde(default)]
    pub vdc_group: Option<String>,
    #[serde(default = "ext_net")]
    pub uplink: String,
    /// Sub-allocated IP blocks (an IP-block gateway).
    #[serde(default)]
    pub subnets: Vec<GatewaySubnetSpec>,
    /// IP Spaces by name (an IP-Space gateway).
    #[serde(default)]
    pub ip_spaces: Vec<String>,
    #[serde(default)]
    pub load_balancer: LoadBalancerSpec,
    #[serde(default)]
    pub service_engine_groups: Vec<SegAssignmentSpec>,
    /// `ACTIVE_STANDBY` (the default) or `DISTRIBUTED_ONLY`.
    #[serde(default)]
    pub deployment_mode: crate::world::network::DeploymentMode,
}

fn ext_net() -> String {
    "ext-net".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewaySubnetSpec {
    /// Gateway address and prefix, `203.0.113.1/24` or `2001:db8:1::1/64`;
    /// the primary IP and ranges are of the same family.
    pub cidr: String,
    pub primary_ip: Option<String>,
    pub ranges: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadBalancerSpec {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "service_network")]
    pub service_network_definition: String,
    #[serde(default = "premium")]
    pub supported_feature_set: String,
    /// Virtual services may preserve client addresses (VCD 10.4.1+).
    #[serde(default)]
    pub transparent_mode_enabled: bool,
    /// The service engines' IPv6 network, `fd00:ffff::1/64`; none by
    /// default.
    #[serde(default)]
    pub ipv6_service_network_definition: Option<String>,
}

impl Default for LoadBalancerSpec {
    fn default() -> Self {
        Self {
            enabled: true,
            service_network_definition: service_network(),
            supported_feature_set: premium(),
            transparent_mode_enabled: false,
            ipv6_service_network_definition: None,
        }
    }
}

fn yes() -> bool {
    true
}
fn service_network() -> String {
    "192.168.255.1/25".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SegAssignmentSpec {
    pub name: String,
    pub max_virtual_services: Option<u32>,
    pub min_virtual_services: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertificateSpec {
    pub alias: String,
    pub certificate: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntitySpec {
    /// `urn:vcloud:type:<vendor>:<nss>:<version>`.
    pub entity_type: String,
    pub name: String,
    pub external_id: Option<String>,
    #[serde(default)]
    pub entity: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VAppSpec {
    pub name: String,
    #[serde(default)]
    pub vms: Vec<VmSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VmSpec {
    pub name: String,
    #[serde(default = "powered_on")]
    pub power: PowerState,
    #[serde(default = "two")]
    pub cpus: u32,
    #[serde(default = "memory")]
    pub memory_mb: u32,
    #[serde(default = "guest_os")]
    pub guest_os: String,
    #[serde(default)]
    pub nics: Vec<Nic>,
    #[serde(default)]
    pub primary_nic: usize,
    /// The name of the VM sizing policy (a VDC compute policy) it uses.
    #[serde(default)]
    pub sizing_policy: Option<String>,
    /// The guest OS computer name; the VM name when absent.
    #[serde(default)]
    pub computer_name: Option<String>,
}

fn powered_on() -> PowerState {
    PowerState::PoweredOn
}
fn two() -> u32 {
    2
}
fn memory() -> u32 {
    4096
}
fn guest_os() -> String {
    "Ubuntu Linux (64-bit)".to_string()
}

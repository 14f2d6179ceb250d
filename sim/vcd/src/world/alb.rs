//! NSX ALB (Avi) objects: service engine groups and their gateway
//! assignments, pools and virtual services. Pools and virtual services are
//! kept in their wire form so a GET → modify → PUT round trip is lossless;
//! status and health fields are computed when read.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Ref;
use super::health_monitor::HealthMonitor;
use crate::strict::{ReadOnly, definition};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceEngineGroup {
    pub id: String,
    pub name: String,
    /// `SHARED` or `DEDICATED`.
    pub reservation_type: String,
    pub ha_mode: String,
    pub supported_feature_set: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SegAssignment {
    pub id: String,
    pub seg_id: String,
    pub gateway_id: String,
    pub max_virtual_services: Option<u32>,
    pub min_virtual_services: Option<u32>,
}

fn enabled_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolMember {
    pub ip_address: String,
    pub port: Option<u32>,
    pub ratio: Option<u32>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    #[serde(default, skip_serializing, rename = "healthStatus")]
    _health_status: ReadOnly,
    #[serde(default, skip_serializing, rename = "detailedHealthMessage")]
    _detailed_health_message: ReadOnly,
    #[serde(default, skip_serializing, rename = "markedDownBy")]
    _marked_down_by: ReadOnly,
}
definition!(PoolMember, "EdgeLoadBalancerPoolMember", serialize);

/// How a pool keeps a client on one member (`CLIENT_IP`, `HTTP_COOKIE`, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistenceProfile {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub profile_type: String,
    pub value: Option<String>,
}
definition!(
    PersistenceProfile,
    "EdgeLoadBalancerPersistenceProfile",
    serialize
);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct Pool {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    pub passive_monitoring_enabled: Option<bool>,
    pub default_port: Option<u32>,
    pub graceful_timeout_period: Option<i64>,
    pub algorithm: Option<String>,
    /// SYSTEM monitors named by type; the TENANT ones a pool uses are
    /// `World::monitor_assignments`.
    #[serde(default)]
    pub health_monitors: Vec<HealthMonitor>,
    pub persistence_profile: Option<PersistenceProfile>,
    #[serde(default)]
    pub members: Vec<PoolMember>,
    /// An IP-set firewall group of the gateway standing for the members.
    pub member_group_ref: Option<Ref>,
    pub gateway_ref: Ref,
    #[serde(default)]
    pub ca_certificate_refs: Vec<Ref>,
    pub common_name_check_enabled: Option<bool>,
    #[serde(default)]
    pub domain_names: Vec<String>,
    pub ssl_enabled: Option<bool>,
    /// Member health (`UP`, `DOWN`, ...) by member IP, driven by test hooks.
    #[serde(skip)]
    pub member_health: BTreeMap<String, String>,
    #[serde(default, skip_serializing, rename = "status")]
    _status: ReadOnly,
    #[serde(default, skip_serializing, rename = "healthStatus")]
    _health_status: ReadOnly,
    #[serde(default, skip_serializing, rename = "healthMessage")]
    _health_message: ReadOnly,
    #[serde(default, skip_serializing, rename = "memberCount")]
    _member_count: ReadOnly,
    #[serde(default, skip_serializing, rename = "enabledMemberCount")]
    _enabled_member_count: ReadOnly,
    #[serde(default, skip_serializing, rename = "upMemberCount")]
    _up_member_count: ReadOnly,
    #[serde(default, skip_serializing, rename = "virtualServiceRefs")]
    _virtual_service_refs: ReadOnly<Vec<Ref>>,
}
definition!(Pool, "EdgeLoadBalancerPool", serialize);

/// `TCP_PROXY`, `TCP_FAST_PATH` or `UDP_FAST_PATH`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct TcpUdpProfile {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub profile_type: String,
    pub system_defined: Option<bool>,
}
definition!(TcpUdpProfile, "EdgeLoadBalancerTcpUdpProfile", serialize);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct ServicePort {
    pub port_start: u32,
    pub port_end: Option<u32>,
    pub ssl_enabled: Option<bool>,
    pub tcp_udp_profile: Option<TcpUdpProfile>,
}
definition!(ServicePort, "EdgeLoadBalancerServicePort", serialize);

impl ServicePort {
    pub fn end(&self) -> u32 {
        self.port_end.unwrap_or(self.port_start)
    }

    /// UDP (`UDP_FAST_PATH`) or TCP (every other profile, the default).
    pub fn is_udp(&self) -> bool {
        self.tcp_udp_profile
            .as_ref()
            .is_some_and(|p| p.profile_type.starts_with("UDP"))
    }

    /// The same protocol on overlapping port ranges: VCD (API ≥ 37.0)
    /// refuses two such virtual services on one VIP.
    pub fn overlaps(&self, other: &ServicePort) -> bool {
        self.is_udp() == other.is_udp()
            && self.port_start <= other.end()
            && other.port_start <= self.end()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationProfile {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub profile_type: String,
    pub system_defined: Option<bool>,
}
definition!(
    ApplicationProfile,
    "EdgeLoadBalancerApplicationProfile",
    serialize
);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct VirtualService {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    pub virtual_ip_address: Option<String>,
    pub ipv6_virtual_ip_address: Option<String>,
    pub load_balancer_pool_ref: Ref,
    pub gateway_ref: Ref,
    pub service_engine_group_ref: Ref,
    pub certificate_ref: Option<Ref>,
    pub service_ports: Vec<ServicePort>,
    pub application_profile: ApplicationProfile,
    pub transparent_mode_enabled: Option<bool>,
    /// API 38.0+; stored, `false` unless a 38.0+ client sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_critical_logging_enabled: Option<bool>,
    /// Until then the VS reports `PENDING` health (service engines deploying).
    #[serde(skip)]
    pub pending_until: Option<Instant>,
    /// Read-only: a string, or from API 39.0 an object; checked against
    /// the request's version, then dropped.
    #[serde(default, skip_serializing, rename = "status")]
    pub sent_status: ReadOnly<serde_json::Value>,
    #[serde(default, skip_serializing, rename = "healthStatus")]
    _health_status: ReadOnly,
    #[serde(default, skip_serializing, rename = "healthMessage")]
    _health_message: ReadOnly,
    #[serde(default, skip_serializing, rename = "detailedHealthMessage")]
    _detailed_health_message: ReadOnly,
}
definition!(VirtualService, "EdgeLoadBalancerVirtualService", serialize);

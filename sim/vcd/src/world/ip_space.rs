//! IP Spaces and their floating-IP allocations.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::ip::{Cidr, IpRange};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpaceRange {
    pub id: String,
    pub range: IpRange,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpace {
    pub id: String,
    pub name: String,
    pub description: String,
    /// `PUBLIC`, `PRIVATE` or `SHARED_SERVICES`.
    pub space_type: String,
    /// The owner of a PRIVATE space.
    pub org_id: Option<String>,
    pub ranges: Vec<IpSpaceRange>,
    pub internal_scope: Vec<String>,
    pub external_scope: Option<String>,
    pub default_floating_ip_quota: u32,
    /// Per-org floating-IP quotas overriding the default, by org id.
    pub org_quotas: BTreeMap<String, u32>,
    /// Gateways with an uplink here carry VCD's default NAT and firewall
    /// rules (`default_services`).
    #[serde(default)]
    pub default_gateway_services: bool,
}

impl IpSpace {
    pub fn quota_for(&self, org_id: &str) -> u32 {
        self.org_quotas
            .get(org_id)
            .copied()
            .unwrap_or(self.default_floating_ip_quota)
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.ranges.iter().any(|r| r.range.contains(ip))
    }

    /// Whether the space holds addresses of the family (true for IPv6):
    /// by its ranges, or by its internal scope.
    pub fn has_family(&self, ipv6: bool) -> bool {
        self.ranges.iter().any(|r| r.range.is_ipv6() == ipv6)
            || self
                .internal_scope
                .iter()
                .filter_map(|c| Cidr::parse(c).ok())
                .any(|c| c.network.is_ipv6() == ipv6)
    }

    /// Addresses in all ranges; IPv6 ranges may exceed `u64`.
    pub fn total_ips(&self) -> u128 {
        self.ranges.iter().map(|r| r.range.size()).sum()
    }
}

/// What a client set on an allocation; `USED` is derived from references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClaimedUsage {
    Unused,
    UsedManual,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpAllocation {
    pub id: String,
    pub space_id: String,
    pub org_id: String,
    pub value: IpAddr,
    pub allocation_date: String,
    pub claimed: ClaimedUsage,
    pub description: String,
}

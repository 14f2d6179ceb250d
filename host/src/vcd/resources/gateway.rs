//! NSX-T edge gateways: their uplinks (IP blocks or IP Spaces), the
//! external IP ranges sub-allocated to them, and the IPs already in use.

use std::net::Ipv4Addr;

use serde::Deserialize;

use super::{EntityRef, Values};
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::paging::MAX_PAGE_SIZE;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpRange {
    pub start_address: String,
    pub end_address: String,
}

impl IpRange {
    /// Whether `ip` lies in the range (IPv4 only; anything else is not).
    pub fn contains(&self, ip: &str) -> bool {
        match (
            self.start_address.parse::<Ipv4Addr>(),
            self.end_address.parse::<Ipv4Addr>(),
            ip.parse::<Ipv4Addr>(),
        ) {
            (Ok(start), Ok(end), Ok(ip)) => start <= ip && ip <= end,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySubnet {
    pub gateway: Option<String>,
    pub prefix_length: Option<u8>,
    pub primary_ip: Option<String>,
    pub ip_ranges: Option<Values<IpRange>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Uplink {
    pub uplink_id: Option<String>,
    pub uplink_name: Option<String>,
    pub using_ip_space: Option<bool>,
    pub subnets: Option<Values<GatewaySubnet>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeGateway {
    pub id: String,
    pub name: String,
    /// `REALIZED` when NSX-T holds the configuration VCD shows.
    pub status: Option<String>,
    #[serde(default)]
    pub edge_gateway_uplinks: Vec<Uplink>,
    pub org_ref: Option<EntityRef>,
}

impl EdgeGateway {
    pub fn is_realized(&self) -> bool {
        self.status.as_deref() == Some("REALIZED")
    }

    /// External IPs come from IP Spaces rather than sub-allocated ranges.
    pub fn uses_ip_spaces(&self) -> bool {
        self.edge_gateway_uplinks
            .iter()
            .any(|u| u.using_ip_space == Some(true))
    }

    fn subnets(&self) -> impl Iterator<Item = &GatewaySubnet> {
        self.edge_gateway_uplinks
            .iter()
            .filter_map(|u| u.subnets.as_ref())
            .flat_map(|s| s.values.iter())
    }

    /// The external ranges sub-allocated to this gateway, all uplinks.
    pub fn external_ip_ranges(&self) -> Vec<IpRange> {
        self.subnets()
            .filter_map(|s| s.ip_ranges.as_ref())
            .flat_map(|r| r.values.iter().cloned())
            .collect()
    }

    /// The gateway's own (SNAT) addresses, never usable as VIPs.
    pub fn primary_ips(&self) -> Vec<String> {
        self.subnets()
            .filter_map(|s| s.primary_ip.clone())
            .collect()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsedIpAddress {
    pub ip_address: String,
    /// `PRIMARY_IP`, `DNAT`, `SNAT`, `Load_Balancer`, …
    pub category: Option<String>,
}

impl VcdClient {
    #[tracing::instrument(skip(self))]
    pub async fn get_gateway(&self, gateway_id: &str) -> Result<EdgeGateway, VcdError> {
        self.fetch(ApiRequest::get(
            "get_gateway",
            format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}"),
        ))
        .await
    }

    /// Every external IP the gateway uses (primary, NAT, VIPs), all pages.
    #[tracing::instrument(skip(self))]
    pub async fn used_ip_addresses(
        &self,
        gateway_id: &str,
    ) -> Result<Vec<UsedIpAddress>, VcdError> {
        self.list_all(
            "used_ip_addresses",
            &format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/usedIpAddresses"),
            None,
            MAX_PAGE_SIZE,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::IpRange;

    #[test]
    fn ranges_contain_their_ends_only() {
        let range = IpRange {
            start_address: "203.0.113.10".into(),
            end_address: "203.0.113.20".into(),
        };
        assert!(range.contains("203.0.113.10") && range.contains("203.0.113.20"));
        assert!(!range.contains("203.0.113.21") && !range.contains("bogus"));
    }
}

//! NSX-T edge gateways: their uplinks (IP blocks or IP Spaces), the
//! external IP ranges sub-allocated to them, the IPs already in use, and
//! their load-balancer configuration.

use std::net::Ipv4Addr;

use serde::Deserialize;

use super::Values;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;

/// The `deploymentMode` of a gateway without NAT or a gateway firewall.
pub const DISTRIBUTED_ONLY: &str = "DISTRIBUTED_ONLY";

/// An inclusive range of IPv4 addresses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpRange {
    /// The first address of the range.
    pub start_address: String,
    /// The last address of the range, included.
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

/// A subnet of an external network, with the part of it allocated to the
/// gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySubnet {
    /// The subnet's gateway address.
    pub gateway: Option<String>,
    /// The subnet's prefix length, e.g. `24`.
    pub prefix_length: Option<u8>,
    /// The gateway's own address in the subnet, used by system NAT rules.
    pub primary_ip: Option<String>,
    /// The ranges sub-allocated to the gateway; unset or empty on an IP
    /// Space uplink.
    pub ip_ranges: Option<Values<IpRange>>,
}

/// A connection of the gateway to an external network (provider gateway).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Uplink {
    /// The URN of the external network.
    pub uplink_id: Option<String>,
    /// The name of the external network.
    pub uplink_name: Option<String>,
    /// Whether the external network hands out IPs through IP Spaces (API
    /// 37.1+; absent before).
    pub using_ip_space: Option<bool>,
    /// The external network's subnets, with this gateway's allocations.
    pub subnets: Option<Values<GatewaySubnet>>,
}

/// An NSX-T edge gateway (`/cloudapi/1.0.0/edgeGateways/{id}`), with the
/// fields the CCM reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeGateway {
    /// The gateway's URN, `urn:vcloud:gateway:<uuid>`.
    pub id: String,
    /// The gateway's name.
    pub name: String,
    /// `REALIZED` when NSX-T holds the configuration VCD shows.
    pub status: Option<String>,
    /// The gateway's uplinks; absent counts as none.
    #[serde(default)]
    pub edge_gateway_uplinks: Vec<Uplink>,
    /// The org that owns the gateway.
    pub org_ref: Option<EntityRef>,
    /// The VDC or data-center group that owns the gateway.
    pub owner_ref: Option<EntityRef>,
    /// API 39.0+: `DISTRIBUTED_ONLY` for a gateway without service routers
    /// (no NAT, no gateway firewall); absent before 39.0 and on gateways
    /// with them.
    #[serde(default)]
    pub deployment_mode: Option<String>,
}

impl EdgeGateway {
    /// Whether NSX-T has realized the gateway's configuration (`status` is
    /// `REALIZED`).
    pub fn is_realized(&self) -> bool {
        self.status.as_deref() == Some("REALIZED")
    }

    /// Whether the gateway has no NAT and no gateway firewall
    /// (`deploymentMode: DISTRIBUTED_ONLY`, VCD 10.6+); load balancing
    /// works there.
    pub fn is_distributed_only(&self) -> bool {
        self.deployment_mode.as_deref() == Some(DISTRIBUTED_ONLY)
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

/// An external IP the gateway uses (`usedIpAddresses`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsedIpAddress {
    /// The address in use.
    pub ip_address: String,
    /// `PRIMARY_IP`, `DNAT`, `SNAT`, `Load_Balancer`, …
    pub category: Option<String>,
}

/// The gateway's load-balancer configuration
/// (`edgeGateways/{id}/loadBalancer`), the fields we act on.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayLoadBalancer {
    /// Whether NSX ALB is enabled on the gateway.
    pub enabled: Option<bool>,
    /// `STANDARD` or `PREMIUM`.
    pub supported_feature_set: Option<String>,
    /// API 37.1+: whether virtual services may preserve client addresses.
    pub transparent_mode_enabled: Option<bool>,
    /// API 37.0+: the IPv6 side of the service network, which IPv6
    /// virtual service addresses need.
    pub ipv6_service_network_definition: Option<String>,
}

/// Edge gateways and their load-balancer settings. Made by [`VcdClient::gateways`].
#[derive(Clone, Copy)]
pub struct Gateways<'c> {
    pub(super) client: &'c VcdClient,
}

impl Gateways<'_> {
    /// The gateway's load-balancer configuration.
    #[tracing::instrument(name = "gateway_load_balancer", skip(self))]
    pub async fn load_balancer(&self, gateway_id: &str) -> Result<GatewayLoadBalancer, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_gateway_load_balancer",
                format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/loadBalancer"),
            ))
            .await
    }

    /// The edge gateway with this URN.
    #[tracing::instrument(name = "get_gateway", skip(self))]
    pub async fn get(&self, gateway_id: &str) -> Result<EdgeGateway, VcdError> {
        self.client
            .fetch(ApiRequest::get(
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
        list_all(
            self.client,
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

//! The VIPs of an ALB virtual service: `virtualIpAddress` (IPv4) and
//! `ipv6VirtualIpAddress` (IPv6, API 37.0), each alone or both (dual
//! stack). Each VIP is checked alike within its family: a valid address of
//! the family the spec constrains it to (`NetworkAddress` `IPV4_IP` /
//! `IPV6_IP`), never a primary IP of the gateway, allocated to the org when
//! it lies in an IP Space the gateway reaches or a PRIVATE one of the org
//! (strict), and shared with another virtual service
//! only on disjoint ports; a VIP so shared cannot change. A VIP outside
//! the gateway's ranges and IP Spaces is an internal VIP, which the spec
//! allows ("an internal IP address used for internal load balancing").

use std::net::IpAddr;

use crate::error::{ApiError, ApiResult};
use crate::world::World;
use crate::world::alb::VirtualService;
use crate::world::ip::{IpParseError, parse_ipv4, parse_ipv6};
use crate::world::network::EdgeGateway;

fn bad(message: String) -> ApiError {
    ApiError::bad_request(message)
}

/// One of a virtual service's two VIP properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VipField {
    Ipv4,
    Ipv6,
}

impl VipField {
    const BOTH: [VipField; 2] = [VipField::Ipv4, VipField::Ipv6];

    fn of(self, vs: &VirtualService) -> Option<&str> {
        match self {
            VipField::Ipv4 => vs.virtual_ip_address.as_deref(),
            VipField::Ipv6 => vs.ipv6_virtual_ip_address.as_deref(),
        }
    }

    fn parse(self, text: &str) -> Result<IpAddr, IpParseError> {
        match self {
            VipField::Ipv4 => parse_ipv4(text).map(IpAddr::V4),
            VipField::Ipv6 => parse_ipv6(text).map(IpAddr::V6),
        }
    }

    /// Two values name the same VIP: the same address (IPv6 has several
    /// spellings of one address) or the same text.
    fn same(self, a: Option<&str>, b: Option<&str>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => match (self.parse(a), self.parse(b)) {
                (Ok(a), Ok(b)) => a == b,
                _ => a == b,
            },
            (a, b) => a == b,
        }
    }

    /// The wording of the "cannot change" refusal.
    fn address_kind(self) -> &'static str {
        match self {
            VipField::Ipv4 => "virtual IP address",
            VipField::Ipv6 => "IPv6 virtual IP address",
        }
    }
}

/// Both VIPs of `vs` on `gateway`, against `others` (the gateway's other
/// virtual services); `strict` requires an IP-Space VIP to be allocated to
/// the gateway's org.
pub(super) fn check_vips(
    world: &World,
    gateway: &EdgeGateway,
    others: &[&VirtualService],
    vs: &VirtualService,
    strict: bool,
) -> ApiResult<()> {
    if VipField::BOTH.iter().all(|field| field.of(vs).is_none()) {
        return Err(bad(
            "virtualIpAddress or ipv6VirtualIpAddress is required.".to_string()
        ));
    }
    for field in VipField::BOTH {
        if let Some(vip) = field.of(vs) {
            check_vip(world, gateway, others, vs, field, vip, strict)?;
        }
    }
    Ok(())
}

fn check_vip(
    world: &World,
    gateway: &EdgeGateway,
    others: &[&VirtualService],
    vs: &VirtualService,
    field: VipField,
    vip: &str,
    strict: bool,
) -> ApiResult<()> {
    let ip = field.parse(vip).map_err(|e| bad(e.to_string()))?;
    // Service engines reach IPv6 VIPs only through the IPv6 side of the
    // gateway's service network.
    if field == VipField::Ipv6
        && gateway
            .load_balancer
            .ipv6_service_network_definition
            .is_none()
    {
        return Err(bad(format!(
            "Edge gateway {} has no IPv6 service network definition (ipv6ServiceNetworkDefinition) for IPv6 virtual IP addresses.",
            gateway.name
        )));
    }
    if gateway.primary_ips().any(|primary| primary == ip) {
        return Err(bad(format!(
            "{ip} is the primary IP of edge gateway {}.",
            gateway.name
        )));
    }
    // The spaces whose addresses must be allocated to the org first: those
    // the gateway's uplink reaches and, the strict reading of what VCD
    // leaves undocumented, the org's PRIVATE ones.
    let spaces: Vec<&str> = world
        .ip_spaces
        .iter()
        .filter(|s| {
            gateway.ip_space_ids.contains(&s.id)
                || (s.space_type == "PRIVATE" && s.org_id.as_deref() == Some(&gateway.org_id))
        })
        .filter(|s| s.contains(ip))
        .map(|s| s.id.as_str())
        .collect();
    if strict && !spaces.is_empty() {
        let allocated = world.ip_allocations.iter().any(|a| {
            a.value == ip && a.org_id == gateway.org_id && spaces.contains(&a.space_id.as_str())
        });
        if !allocated {
            return Err(bad(format!(
                "{ip} is not allocated to the organization from an IP Space."
            )));
        }
    }
    for other in others.iter().filter(|o| field.same(field.of(o), Some(vip))) {
        let clash = vs
            .service_ports
            .iter()
            .any(|p| other.service_ports.iter().any(|q| p.overlaps(q)));
        if clash {
            return Err(bad(format!(
                "{vip} with these ports is already used by virtual service {}.",
                other.name
            )));
        }
    }
    Ok(())
}

/// A VIP shared with another virtual service cannot change, in either
/// family.
pub(super) fn check_vip_change(
    world: &World,
    existing: &VirtualService,
    new: &VirtualService,
) -> ApiResult<()> {
    for field in VipField::BOTH {
        let old = field.of(existing);
        if field.same(old, field.of(new)) {
            continue;
        }
        let shared = world.virtual_services.iter().any(|o| {
            o.id != existing.id
                && o.gateway_ref.id == existing.gateway_ref.id
                && old.is_some()
                && field.same(field.of(o), old)
        });
        if shared {
            return Err(bad(format!(
                "The {} is shared with another virtual service and cannot change.",
                field.address_kind()
            )));
        }
    }
    Ok(())
}

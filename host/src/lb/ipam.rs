//! Where external addresses come from (the gateway's IP blocks, limited by
//! `vipSubnet`, or IP Spaces), how a free one is picked, how IP Space
//! allocations are claimed and released, and internal one-arm addresses.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use super::config::Ipv4Range;
use super::naming::short_hash;
use super::ownership::OwnerTag;
use crate::policy::model::{AddressPool, IpAddress, IpRange, PoolSource};
use crate::vcd::resources::gateway::EdgeGateway;
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::{VcdClient, VcdError};

/// An IP Space the gateway reaches.
#[derive(Debug, Clone)]
pub struct Space {
    pub id: String,
    pub name: String,
    pub ranges: Vec<Ipv4Range>,
}

/// The external address source of the gateway, read once at start.
#[derive(Debug, Clone)]
pub enum IpSource {
    /// Sub-allocated ranges (within `vipSubnet`), offered as one pool named
    /// after the gateway; `reserved` are its primary (SNAT) addresses.
    Blocks {
        pool: String,
        ranges: Vec<Ipv4Range>,
        reserved: Vec<Ipv4Addr>,
    },
    Spaces(Vec<Space>),
}

fn parse_range(first: &str, last: &str) -> Option<Ipv4Range> {
    Some(Ipv4Range {
        first: first.parse().ok()?,
        last: last.parse().ok()?,
    })
}

fn v4(ip: Ipv4Addr) -> IpAddress {
    IpAddress::from(std::net::IpAddr::V4(ip))
}

/// `candidates` rotated by a hash of `seed`: concurrent pickers (other
/// Services, other clusters) start at different places, and one Service
/// always prefers the same address.
fn spread(candidates: Vec<Ipv4Addr>, seed: &str) -> Vec<Ipv4Addr> {
    if candidates.is_empty() {
        return candidates;
    }
    let start = u32::from_str_radix(&short_hash(seed), 16).unwrap_or(0) as usize % candidates.len();
    let mut rotated = candidates[start..].to_vec();
    rotated.extend_from_slice(&candidates[..start]);
    rotated
}

impl IpSource {
    pub async fn discover(
        client: &VcdClient,
        gateway: &EdgeGateway,
        vip_subnet: Option<Ipv4Range>,
    ) -> Result<Self, VcdError> {
        if !gateway.uses_ip_spaces() {
            let ranges = gateway
                .external_ip_ranges()
                .iter()
                .filter_map(|r| parse_range(&r.start_address, &r.end_address))
                .filter_map(|r| match vip_subnet {
                    Some(subnet) => r.intersect(&subnet),
                    None => Some(r),
                })
                .collect();
            let reserved = gateway
                .primary_ips()
                .iter()
                .filter_map(|ip| ip.parse().ok())
                .collect();
            return Ok(IpSource::Blocks {
                pool: gateway.name.clone(),
                ranges,
                reserved,
            });
        }
        let mut spaces = Vec::new();
        for suggestion in client.floating_ip_suggestions(&gateway.id).await? {
            let space = client.get_ip_space(&suggestion.ip_space_ref.id).await?;
            if space.space_type != "PUBLIC" {
                continue;
            }
            let ranges = space
                .ip_space_ranges
                .iter()
                .flat_map(|r| r.ip_ranges.iter())
                .filter_map(|r| parse_range(&r.start_ip_address, &r.end_ip_address))
                .collect();
            spaces.push(Space {
                id: space.id,
                name: space.name,
                ranges,
            });
        }
        Ok(IpSource::Spaces(spaces))
    }

    pub fn is_spaces(&self) -> bool {
        matches!(self, IpSource::Spaces(_))
    }

    /// The pools offered to the policy. Free counts are estimates from the
    /// addresses observed on the gateway; allocation re-checks with VCD.
    pub fn address_pools(&self, in_use: &HashSet<Ipv4Addr>) -> Vec<AddressPool> {
        let pool = |name: &str, source, ranges: &[Ipv4Range], reserved: &[Ipv4Addr]| {
            let free = ranges
                .iter()
                .flat_map(|r| r.iter())
                .filter(|ip| !in_use.contains(ip) && !reserved.contains(ip))
                .take(u32::MAX as usize)
                .count();
            AddressPool {
                name: name.to_string(),
                source,
                ranges: ranges
                    .iter()
                    .map(|r| IpRange {
                        first: v4(r.first),
                        last: v4(r.last),
                    })
                    .collect(),
                free_count: free as u32,
            }
        };
        match self {
            IpSource::Blocks {
                pool: name,
                ranges,
                reserved,
            } => vec![pool(name, PoolSource::IpBlock, ranges, reserved)],
            IpSource::Spaces(spaces) => spaces
                .iter()
                .map(|s| pool(&s.name, PoolSource::IpSpace, &s.ranges, &[]))
                .collect(),
        }
    }

    /// The name of the pool holding `ip`.
    pub fn pool_of(&self, ip: Ipv4Addr) -> Option<&str> {
        match self {
            IpSource::Blocks { pool, ranges, .. } => ranges
                .iter()
                .any(|r| r.contains(ip))
                .then_some(pool.as_str()),
            IpSource::Spaces(spaces) => spaces
                .iter()
                .find(|s| s.ranges.iter().any(|r| r.contains(ip)))
                .map(|s| s.name.as_str()),
        }
    }

    pub fn space_named(&self, name: &str) -> Option<&Space> {
        match self {
            IpSource::Spaces(spaces) => spaces.iter().find(|s| s.name == name),
            IpSource::Blocks { .. } => None,
        }
    }

    pub fn space_of(&self, ip: Ipv4Addr) -> Option<&Space> {
        self.pool_of(ip).and_then(|name| self.space_named(name))
    }

    pub fn spaces(&self) -> &[Space] {
        match self {
            IpSource::Spaces(spaces) => spaces,
            IpSource::Blocks { .. } => &[],
        }
    }
}

/// IP blocks: the addresses the gateway uses (primary, NAT, VIPs).
pub async fn used_addresses(
    client: &VcdClient,
    gateway_id: &str,
) -> Result<Vec<(Ipv4Addr, String)>, VcdError> {
    Ok(client
        .used_ip_addresses(gateway_id)
        .await?
        .into_iter()
        .filter_map(|u| {
            let ip = u.ip_address.parse().ok()?;
            Some((ip, u.category.unwrap_or_else(|| "in use".to_string())))
        })
        .collect())
}

/// IP blocks: a free address of `ranges` for the Service `seed` names.
pub fn pick_block_address(
    ranges: &[Ipv4Range],
    reserved: &[Ipv4Addr],
    used: &HashSet<Ipv4Addr>,
    excluded: &HashSet<Ipv4Addr>,
    seed: &str,
) -> Option<Ipv4Addr> {
    let candidates: Vec<Ipv4Addr> = ranges
        .iter()
        .flat_map(|r| r.iter().take(65_536))
        .filter(|ip| !used.contains(ip) && !excluded.contains(ip) && !reserved.contains(ip))
        .collect();
    spread(candidates, seed).into_iter().next()
}

/// One-arm: `count` internal addresses of `range` no virtual service uses.
pub fn pick_internal(
    range: Ipv4Range,
    in_use: &HashSet<Ipv4Addr>,
    excluded: &HashSet<Ipv4Addr>,
    count: usize,
    seed: &str,
) -> Vec<Ipv4Addr> {
    let candidates: Vec<Ipv4Addr> = range
        .iter()
        .take(65_536)
        .filter(|ip| !in_use.contains(ip) && !excluded.contains(ip))
        .collect();
    spread(candidates, seed).into_iter().take(count).collect()
}

/// Whether an allocation is claimed for `owner`'s Service (with or without
/// the cluster identity, which older tags lack).
fn claimed_by(allocation: &IpAllocation, owner: &OwnerTag) -> bool {
    allocation.usage_state.as_deref() == Some("USED_MANUAL")
        && allocation
            .description
            .as_deref()
            .and_then(OwnerTag::parse)
            .is_some_and(|tagged| tagged.owner.same_service(owner))
}

/// IP Spaces: the allocations claimed for `owner` (normally at most one).
pub async fn find_claims(
    client: &VcdClient,
    spaces: &[Space],
    owner: &OwnerTag,
) -> Result<Vec<(String, IpAllocation)>, VcdError> {
    let mut claims = Vec::new();
    for space in spaces {
        for allocation in client.claimed_allocations(&space.id).await? {
            if claimed_by(&allocation, owner) {
                claims.push((space.id.clone(), allocation));
            }
        }
    }
    Ok(claims)
}

/// IP Spaces: rewrites the Service's claims that lack `owner`'s cluster
/// identity (written before identities were recorded).
pub async fn adopt_claims(
    client: &VcdClient,
    spaces: &[Space],
    owner: &OwnerTag,
) -> Result<(), VcdError> {
    let marker = owner.format();
    for (space_id, allocation) in find_claims(client, spaces, owner).await? {
        if allocation.description.as_deref() != Some(marker.as_str()) {
            client
                .claim_allocation(&space_id, &allocation, &marker)
                .await?;
        }
    }
    Ok(())
}

/// IP Spaces: what holds `ip` in `space` other than `owner`'s Service. An
/// allocation someone made and has not used yet is held too: it is a
/// reservation, not a free address.
pub async fn space_holder(
    client: &VcdClient,
    space: &Space,
    ip: &str,
    owner: &OwnerTag,
) -> Result<(Option<IpAllocation>, Option<String>), VcdError> {
    let allocation = client.find_allocation_by_value(&space.id, ip).await?;
    let holder = allocation.as_ref().and_then(|a| {
        let state = a.usage_state.as_deref().unwrap_or("UNUSED");
        match claimed_by(a, owner) {
            true => None,
            false => Some(format!(
                "IP Space allocation {} ({state}{})",
                a.value,
                a.description
                    .as_deref()
                    .filter(|d| !d.is_empty())
                    .map(|d| format!(", {d}"))
                    .unwrap_or_default()
            )),
        }
    });
    Ok((allocation, holder))
}

/// IP Spaces: an allocation no one has used or claimed: made, and then
/// neither claimed nor used.
pub fn unmarked(allocation: &IpAllocation) -> bool {
    allocation
        .usage_state
        .as_deref()
        .is_none_or(|s| s == "UNUSED")
        && allocation.description.as_deref().is_none_or(str::is_empty)
}

/// IP Spaces: the space's addresses no visible allocation holds, in the
/// order the Service `seed` names prefers them.
pub async fn free_in_space(
    client: &VcdClient,
    space: &Space,
    excluded: &HashSet<Ipv4Addr>,
    seed: &str,
) -> Result<Vec<Ipv4Addr>, VcdError> {
    let allocated: HashSet<Ipv4Addr> = client
        .ip_allocations(&space.id, None)
        .await?
        .iter()
        .filter_map(|a| a.value.parse().ok())
        .collect();
    let candidates = space
        .ranges
        .iter()
        .flat_map(|r| r.iter().take(65_536))
        .filter(|ip| !allocated.contains(ip) && !excluded.contains(ip))
        .collect();
    Ok(spread(candidates, seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_skip_used_reserved_and_excluded_addresses() {
        let range = Ipv4Range {
            first: Ipv4Addr::new(10, 0, 0, 1),
            last: Ipv4Addr::new(10, 0, 0, 3),
        };
        let used: HashSet<_> = [Ipv4Addr::new(10, 0, 0, 1)].into();
        let excluded: HashSet<_> = [Ipv4Addr::new(10, 0, 0, 2)].into();
        let reserved = [Ipv4Addr::new(10, 0, 0, 3)];
        assert_eq!(
            pick_block_address(&[range], &reserved, &used, &excluded, "s"),
            None
        );
        let picked = pick_block_address(&[range], &[], &used, &excluded, "s");
        assert_eq!(picked, Some(Ipv4Addr::new(10, 0, 0, 3)));
        assert_eq!(
            pick_internal(range, &used, &HashSet::new(), 5, "s").len(),
            2
        );
    }

    #[test]
    fn one_service_always_prefers_the_same_address() {
        let range = Ipv4Range {
            first: Ipv4Addr::new(10, 0, 0, 1),
            last: Ipv4Addr::new(10, 0, 0, 200),
        };
        let none = HashSet::new();
        let a = pick_block_address(&[range], &[], &none, &none, "uid-a");
        assert_eq!(a, pick_block_address(&[range], &[], &none, &none, "uid-a"));
        let spread: HashSet<_> = (0..20)
            .filter_map(|i| pick_block_address(&[range], &[], &none, &none, &format!("uid-{i}")))
            .collect();
        assert!(spread.len() > 10, "different Services start apart");
    }
}

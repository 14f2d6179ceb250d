//! Where external addresses come from (the gateway's IP blocks, limited by
//! `vipSubnet`, or IP Spaces), how a free one is picked, and internal
//! one-arm addresses (IP Space allocations are in `allocations`).

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use crate::lb::naming::short_hash;
use crate::lb::ranges::AddressRange;
use crate::lb::ranges::Ipv4Range;
use crate::policy::model::{AddressPool, IpAddress, IpFamily, IpRange, PoolSource};
use crate::vcd::resources::gateway::EdgeGateway;
use crate::vcd::resources::ipspace::IpSpace;
use crate::vcd::{VcdClient, VcdError};

/// An IP Space the gateway reaches.
#[derive(Debug, Clone)]
pub struct Space {
    pub id: String,
    pub name: String,
    pub ranges: Vec<AddressRange>,
    /// A PUBLIC space the gateway's uplink reaches; false for the PRIVATE
    /// space of `loadbalancer.internal.ipSpace`, whose addresses are internal.
    pub external: bool,
}

impl Space {
    /// The space as VCD describes it; `external` for a PUBLIC one.
    pub fn of(space: IpSpace, external: bool) -> Self {
        let ranges = space
            .ip_space_ranges
            .iter()
            .flat_map(|r| r.ip_ranges.iter())
            .filter_map(|r| AddressRange::parse(&r.start_ip_address, &r.end_ip_address))
            .collect();
        Space {
            id: space.id,
            name: space.name,
            ranges,
            external,
        }
    }
}

/// The IP-block addresses of one family, offered as one pool.
#[derive(Debug, Clone)]
pub struct Block {
    pub name: String,
    pub ranges: Vec<AddressRange>,
}

/// The external address source of the gateway, read once at start.
#[derive(Debug, Clone)]
pub enum IpSource {
    /// Sub-allocated ranges (IPv4 ones within `vipSubnet`), offered as a
    /// pool per family: IPv4 named after the gateway, IPv6 after it with
    /// `-ipv6`; `reserved` are its primary (SNAT) addresses.
    Blocks {
        blocks: Vec<Block>,
        reserved: Vec<IpAddr>,
    },
    Spaces(Vec<Space>),
}

/// The suffix of the IPv6 IP-block pool's name.
const IPV6_POOL_SUFFIX: &str = "-ipv6";

fn address(ip: IpAddr) -> IpAddress {
    IpAddress::from(ip)
}

/// `candidates` rotated by a hash of `seed`: concurrent pickers (other
/// Services, other clusters) start at different places, and one Service
/// always prefers the same address.
pub(in crate::lb) fn spread<T: Clone>(candidates: Vec<T>, seed: &str) -> Vec<T> {
    if candidates.is_empty() {
        return candidates;
    }
    let start = u32::from_str_radix(&short_hash(seed), 16).unwrap_or(0) as usize % candidates.len();
    let mut rotated = candidates[start..].to_vec();
    rotated.extend_from_slice(&candidates[..start]);
    rotated
}

/// The pools of `ranges`, one per family present: IPv4 named `name`,
/// IPv6 `name` with `-ipv6`.
pub(in crate::lb) fn blocks(name: &str, ranges: Vec<AddressRange>) -> Vec<Block> {
    [
        (IpFamily::Ipv4, name.to_string()),
        (IpFamily::Ipv6, format!("{name}{IPV6_POOL_SUFFIX}")),
    ]
    .into_iter()
    .filter_map(|(family, name)| {
        let ranges: Vec<AddressRange> = ranges
            .iter()
            .copied()
            .filter(|r| r.family() == family)
            .collect();
        (!ranges.is_empty()).then_some(Block { name, ranges })
    })
    .collect()
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
                .filter_map(|r| AddressRange::parse(&r.start_address, &r.end_address))
                .filter_map(|r| r.limited_to(vip_subnet))
                .collect();
            let reserved = gateway
                .primary_ips()
                .iter()
                .filter_map(|ip| ip.parse().ok())
                .collect();
            return Ok(IpSource::Blocks {
                blocks: blocks(&gateway.name, ranges),
                reserved,
            });
        }
        let mut spaces = Vec::new();
        for suggestion in client
            .ip_spaces()
            .floating_ip_suggestions(&gateway.id)
            .await?
        {
            let space = client.ip_spaces().get(&suggestion.ip_space_ref.id).await?;
            if space.space_type != "PUBLIC" {
                continue;
            }
            spaces.push(Space::of(space, true));
        }
        Ok(IpSource::Spaces(spaces))
    }

    pub fn is_spaces(&self) -> bool {
        matches!(self, IpSource::Spaces(_))
    }

    /// Every pool by name with its ranges and whether it is external, in
    /// the order offered.
    fn named_ranges(&self) -> Vec<(&str, &[AddressRange], bool)> {
        match self {
            IpSource::Blocks { blocks, .. } => blocks
                .iter()
                .map(|b| (b.name.as_str(), b.ranges.as_slice(), true))
                .collect(),
            IpSource::Spaces(spaces) => spaces
                .iter()
                .map(|s| (s.name.as_str(), s.ranges.as_slice(), s.external))
                .collect(),
        }
    }

    /// Adds the PRIVATE space of `loadbalancer.internal.ipSpace`.
    pub fn add_private_space(&mut self, space: Space) {
        if let IpSource::Spaces(spaces) = self {
            spaces.push(space);
        }
    }

    /// Whether `ip` lies in the PRIVATE space: an internal address.
    pub fn is_private(&self, ip: IpAddr) -> bool {
        self.space_of(ip).is_some_and(|space| !space.external)
    }

    fn reserved(&self) -> &[IpAddr] {
        match self {
            IpSource::Blocks { reserved, .. } => reserved,
            IpSource::Spaces(_) => &[],
        }
    }

    /// The pools offered to the policy. Free counts are estimates from the
    /// addresses observed on the gateway; allocation re-checks with VCD.
    pub fn address_pools(&self, in_use: &HashSet<IpAddr>) -> Vec<AddressPool> {
        let source = |external| match (self, external) {
            (IpSource::Blocks { .. }, _) => PoolSource::IpBlock,
            (IpSource::Spaces(_), true) => PoolSource::IpSpace,
            (IpSource::Spaces(_), false) => PoolSource::PrivateIpSpace,
        };
        let taken: HashSet<IpAddr> = in_use.iter().chain(self.reserved()).copied().collect();
        self.named_ranges()
            .into_iter()
            .map(|(name, ranges, external)| offered_pool(name, ranges, source(external), &taken))
            .collect()
    }

    /// The name of the pool holding `ip`.
    pub fn pool_of(&self, ip: IpAddr) -> Option<&str> {
        self.named_ranges()
            .into_iter()
            .find(|(_, ranges, _)| ranges.iter().any(|r| r.contains(ip)))
            .map(|(name, _, _)| name)
    }

    /// The name of a pool sharing an address with `range`.
    pub fn pool_overlapping(&self, range: &AddressRange) -> Option<&str> {
        self.named_ranges()
            .into_iter()
            .find(|(_, ranges, _)| ranges.iter().any(|r| r.overlaps(range)))
            .map(|(name, _, _)| name)
    }

    /// The external pools offering addresses of `family`, in the order
    /// offered.
    pub fn pools_of(&self, family: IpFamily) -> Vec<&str> {
        self.named_ranges()
            .into_iter()
            .filter(|(_, ranges, external)| {
                *external && ranges.iter().any(|r| r.family() == family)
            })
            .map(|(name, _, _)| name)
            .collect()
    }

    /// IP blocks: the pool named `name`.
    pub fn block_named(&self, name: &str) -> Option<&Block> {
        match self {
            IpSource::Blocks { blocks, .. } => blocks.iter().find(|b| b.name == name),
            IpSource::Spaces(_) => None,
        }
    }

    pub fn space_named(&self, name: &str) -> Option<&Space> {
        match self {
            IpSource::Spaces(spaces) => spaces.iter().find(|s| s.name == name),
            IpSource::Blocks { .. } => None,
        }
    }

    pub fn space_of(&self, ip: IpAddr) -> Option<&Space> {
        self.pool_of(ip).and_then(|name| self.space_named(name))
    }

    pub fn spaces(&self) -> &[Space] {
        match self {
            IpSource::Spaces(spaces) => spaces,
            IpSource::Blocks { .. } => &[],
        }
    }
}

/// The pool `name` of `ranges` as offered to a policy, its free count an
/// estimate from the addresses `taken`. Internal-range pools are the
/// ones not reached from outside.
pub(in crate::lb) fn offered_pool(
    name: &str,
    ranges: &[AddressRange],
    source: PoolSource,
    taken: &HashSet<IpAddr>,
) -> AddressPool {
    let size: u128 = ranges
        .iter()
        .fold(0, |sum, r| sum.saturating_add(r.address_count()));
    let taken = taken
        .iter()
        .filter(|ip| ranges.iter().any(|r| r.contains(**ip)))
        .count();
    AddressPool {
        name: name.to_string(),
        source,
        ranges: ranges
            .iter()
            .map(|r| IpRange {
                first: address(r.first()),
                last: address(r.last()),
            })
            .collect(),
        free_count: u32::try_from(size.saturating_sub(taken as u128)).unwrap_or(u32::MAX),
        external: !matches!(
            source,
            PoolSource::InternalRange | PoolSource::PrivateIpSpace
        ),
    }
}

/// IP blocks: the addresses the gateway uses (primary, NAT, VIPs).
pub async fn used_addresses(
    client: &VcdClient,
    gateway_id: &str,
) -> Result<Vec<(IpAddr, String)>, VcdError> {
    Ok(client
        .gateways()
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
    ranges: &[AddressRange],
    reserved: &[IpAddr],
    used: &HashSet<IpAddr>,
    excluded: &HashSet<IpAddr>,
    seed: &str,
) -> Option<IpAddr> {
    let candidates: Vec<IpAddr> = ranges
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_skip_used_reserved_and_excluded_addresses() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let range = AddressRange::parse("10.0.0.1", "10.0.0.3").unwrap();
        let used: HashSet<_> = [ip("10.0.0.1")].into();
        let excluded: HashSet<_> = [ip("10.0.0.2")].into();
        let reserved = [ip("10.0.0.3")];
        assert_eq!(
            pick_block_address(&[range], &reserved, &used, &excluded, "s"),
            None
        );
        let picked = pick_block_address(&[range], &[], &used, &excluded, "s");
        assert_eq!(picked, Some(ip("10.0.0.3")));
        let internal = Ipv4Range {
            first: Ipv4Addr::new(10, 0, 0, 1),
            last: Ipv4Addr::new(10, 0, 0, 3),
        };
        let used: HashSet<_> = [Ipv4Addr::new(10, 0, 0, 1)].into();
        assert_eq!(
            pick_internal(internal, &used, &HashSet::new(), 5, "s").len(),
            2
        );
    }

    #[test]
    fn one_service_always_prefers_the_same_address() {
        let range = AddressRange::parse("10.0.0.1", "10.0.0.200").unwrap();
        let none = HashSet::new();
        let a = pick_block_address(&[range], &[], &none, &none, "uid-a");
        assert_eq!(a, pick_block_address(&[range], &[], &none, &none, "uid-a"));
        let spread: HashSet<_> = (0..20)
            .filter_map(|i| pick_block_address(&[range], &[], &none, &none, &format!("uid-{i}")))
            .collect();
        assert!(spread.len() > 10, "different Services start apart");
    }
}

#[cfg(test)]
mod family_tests {
    use super::*;

    #[test]
    fn ip_blocks_offer_a_pool_per_family_with_arithmetic_free_counts() {
        let ranges = vec![
            AddressRange::parse("2001:db8::10", "2001:db8::ffff:ffff:ffff").unwrap(),
            AddressRange::parse("192.0.2.10", "192.0.2.19").unwrap(),
        ];
        let source = IpSource::Blocks {
            blocks: blocks("edge1", ranges),
            reserved: vec!["192.0.2.10".parse().unwrap()],
        };
        let in_use: HashSet<IpAddr> = ["192.0.2.11".parse().unwrap()].into();
        let pools = source.address_pools(&in_use);
        let summary: Vec<(&str, u32)> = pools
            .iter()
            .map(|p| (p.name.as_str(), p.free_count))
            .collect();
        assert_eq!(summary, vec![("edge1", 8), ("edge1-ipv6", u32::MAX)]);
        assert_eq!(source.pools_of(IpFamily::Ipv6), vec!["edge1-ipv6"]);
        assert_eq!(
            source.pool_of("2001:db8::10".parse().unwrap()),
            Some("edge1-ipv6")
        );
    }
}

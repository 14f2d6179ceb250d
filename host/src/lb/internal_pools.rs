//! Internal addresses: reached only inside the org's networks, so an
//! internal Service's virtual services listen on one directly, with no DNAT
//! rule and no external address. They come from `loadbalancer.internal`'s
//! ranges, else, in one-arm modes, from the one-arm range; they are offered
//! as one pool per family, `internal` and `internal-ipv6`. Nothing in VCD
//! reserves them, so a pick avoids every address the gateway uses and is
//! verified once written, as IP-block addresses are. A PRIVATE IP Space
//! (`loadbalancer.internal.ipSpace`) is offered too, allocated and claimed
//! like a PUBLIC one, as the address source's last space.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::config::InvalidLbConfig;
use crate::lb::errors::LbError;
use crate::lb::observe::ipam::{self, Block, IpSource, Space};
use crate::lb::ranges::AddressRange;
use crate::policy::model::{AddressPool, IpFamily, PoolSource};
use crate::vcd::VcdClient;

/// The name of the IPv4 internal pool (IPv6: with `-ipv6`).
const POOL_NAME: &str = "internal";

#[derive(Debug, Clone, Default)]
pub struct InternalPools {
    blocks: Vec<Block>,
}

impl InternalPools {
    /// The pools of `ranges`, refused where they overlap the external
    /// `source`: an address must say by itself which kind it is.
    pub fn new(ranges: Vec<AddressRange>, source: &IpSource) -> Result<Self, InvalidLbConfig> {
        for range in &ranges {
            if let Some(pool) = source.pool_overlapping(range) {
                return Err(InvalidLbConfig(format!(
                    "the internal range {}-{} overlaps the pool {pool}; internal addresses (loadbalancer.internal.ranges, else loadbalancer.oneArm) must lie outside the gateway's IP ranges and IP Spaces",
                    range.first(),
                    range.last()
                )));
            }
        }
        Ok(Self {
            blocks: ipam::blocks(POOL_NAME, ranges),
        })
    }

    /// Whether there is any internal pool.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The pools offered to the policy, after the external ones.
    pub fn address_pools(&self, in_use: &HashSet<IpAddr>) -> Vec<AddressPool> {
        self.blocks
            .iter()
            .map(|b| ipam::offered_pool(&b.name, &b.ranges, PoolSource::InternalRange, in_use))
            .collect()
    }

    /// The name of the pool holding `ip`.
    pub fn pool_of(&self, ip: IpAddr) -> Option<&str> {
        self.blocks
            .iter()
            .find(|b| b.ranges.iter().any(|r| r.contains(ip)))
            .map(|b| b.name.as_str())
    }

    /// The pool of `family`, if any.
    pub fn pool_of_family(&self, family: IpFamily) -> Option<&str> {
        self.blocks
            .iter()
            .find(|b| b.ranges.iter().any(|r| r.family() == family))
            .map(|b| b.name.as_str())
    }

    /// The ranges, for `vcd-ccm check`; `None` without any.
    pub fn describe(&self) -> Option<String> {
        let ranges: Vec<String> = self
            .blocks
            .iter()
            .flat_map(|b| &b.ranges)
            .map(|r| format!("{}-{}", r.first(), r.last()))
            .collect();
        (!ranges.is_empty()).then(|| ranges.join(", "))
    }

    pub fn named(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }
}

/// Reads the PRIVATE IP Space `name` of `loadbalancer.internal.ipSpace`
/// into `source`, as its last space.
pub async fn add_private_space(
    client: &VcdClient,
    source: &mut IpSource,
    gateway: &str,
    name: &str,
) -> Result<(), LbError> {
    let invalid = |problem: String| {
        LbError::from(InvalidLbConfig(format!(
            "loadbalancer.internal.ipSpace {name:?}: {problem}"
        )))
    };
    if !source.is_spaces() {
        return Err(invalid(format!(
            "edge gateway {gateway} takes its addresses from IP blocks, not IP Spaces, so no IP Space allocation serves it; give loadbalancer.internal.ranges instead"
        )));
    }
    let setup = |action: &str| LbError::vcd("(setup)", action.to_string());
    let summaries = client
        .ip_spaces()
        .summaries()
        .await
        .map_err(setup("listing the org's IP Spaces"))?;
    let Some(summary) = summaries.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = summaries.iter().map(|s| s.name.as_str()).collect();
        return Err(invalid(format!(
            "the org sees no IP Space of that name; it sees {names:?}"
        )));
    };
    if summary.space_type != "PRIVATE" {
        return Err(invalid(format!(
            "it is a {} IP Space; internal addresses come from a PRIVATE one (a PUBLIC space the gateway reaches serves external addresses already)",
            summary.space_type
        )));
    }
    let space = client
        .ip_spaces()
        .get(&summary.id)
        .await
        .map_err(setup("reading loadbalancer.internal.ipSpace"))?;
    source.add_private_space(Space::of(space, false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: &str, last: &str) -> AddressRange {
        AddressRange::parse(first, last).unwrap()
    }

    #[test]
    fn pools_per_family_are_internal_and_kept_apart_from_external_ones() {
        let source = IpSource::Blocks {
            blocks: ipam::blocks("edge1", vec![range("192.0.2.10", "192.0.2.19")]),
            reserved: Vec::new(),
        };
        let pools = InternalPools::new(
            vec![
                range("10.20.0.10", "10.20.0.19"),
                range("fd00::10", "fd00::1f"),
            ],
            &source,
        )
        .unwrap();
        let offered = pools.address_pools(&["10.20.0.11".parse().unwrap()].into());
        let summary: Vec<(&str, u32, bool)> = offered
            .iter()
            .map(|p| (p.name.as_str(), p.free_count, p.external))
            .collect();
        assert_eq!(
            summary,
            vec![("internal", 9, false), ("internal-ipv6", 16, false)]
        );
        assert_eq!(
            pools.pool_of("fd00::12".parse().unwrap()),
            Some("internal-ipv6")
        );
        assert_eq!(pools.pool_of("192.0.2.12".parse().unwrap()), None);

        let error = InternalPools::new(vec![range("192.0.2.1", "192.0.2.255")], &source)
            .unwrap_err()
            .to_string();
        assert!(error.contains("overlaps the pool edge1"), "{error}");
    }
}

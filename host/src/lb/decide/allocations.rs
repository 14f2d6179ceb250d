//! IP Space allocations of Services: which are claimed for a Service (by
//! its ownership tag in the description), who else holds an address, which
//! addresses of a space no allocation holds, and making and claiming one
//! (noted in the journal first).

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::observe::ipam::{Space, spread};
use crate::lb::ownership::{NewerTag, OwnerTag, Tagged};
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::{VcdClient, VcdError};

/// The claim an allocation carries, if it is one of ours.
fn claim_of(allocation: &IpAllocation) -> Option<Tagged> {
    (allocation.usage_state.as_deref() == Some("USED_MANUAL"))
        .then(|| allocation.description.as_deref().and_then(OwnerTag::parse))
        .flatten()
}

/// Whether an allocation is claimed for `owner`'s Service (with or without
/// the cluster identity, which older tags lack).
fn claimed_by(allocation: &IpAllocation, owner: &OwnerTag) -> bool {
    claim_of(allocation).is_some_and(|tagged| tagged.owner.same_service(owner))
}

/// Whether an allocation is `owner`'s Service's to take: claimed for it, or
/// retained for its namespace and name by an earlier Service of the cluster.
fn takeable_by(allocation: &IpAllocation, owner: &OwnerTag) -> bool {
    claim_of(allocation).is_some_and(|t| t.owner.same_service(owner) || t.retained_for(owner))
}

/// Whether an allocation is a claim kept past its Service
/// (`vcd-ccm.io/retain-address`): never released by a delete or a sweep.
pub fn retained(allocation: &IpAllocation) -> bool {
    claim_of(allocation).is_some_and(|tagged| tagged.retains())
}

/// IP Spaces: the addresses retained for `owner`'s namespace and name by
/// earlier Services of the cluster, which it may take back.
pub async fn retained_for(
    client: &VcdClient,
    spaces: &[Space],
    owner: &OwnerTag,
) -> Result<Vec<IpAddr>, VcdError> {
    let mut addresses = Vec::new();
    for space in spaces {
        for allocation in client.ip_spaces().claimed_allocations(&space.id).await? {
            let kept = claim_of(&allocation)
                .is_some_and(|t| t.retained_for(owner) && !t.owner.same_service(owner));
            if kept && let Ok(ip) = allocation.value.parse() {
                addresses.push(ip);
            }
        }
    }
    Ok(addresses)
}

/// IP Spaces: the allocations claimed for `owner` (normally at most one).
pub async fn find_claims(
    client: &VcdClient,
    spaces: &[Space],
    owner: &OwnerTag,
) -> Result<Vec<(String, IpAllocation)>, VcdError> {
    let mut claims = Vec::new();
    for space in spaces {
        for allocation in client.ip_spaces().claimed_allocations(&space.id).await? {
            if claimed_by(&allocation, owner) {
                claims.push((space.id.clone(), allocation));
            }
        }
    }
    Ok(claims)
}

/// IP Spaces: what holds `ip` in `space` other than `owner`'s Service. An
/// allocation someone made and has not used yet is held too, a
/// reservation, unless the provider lets Services take such allocations
/// (`take_unused`).
pub async fn space_holder(
    client: &VcdClient,
    space: &Space,
    ip: &str,
    owner: &OwnerTag,
    take_unused: bool,
) -> Result<(Option<IpAllocation>, Option<String>), VcdError> {
    let allocation = client.ip_spaces().find_allocation(&space.id, ip).await?;
    let holder = allocation.as_ref().and_then(|a| {
        let state = a.usage_state.as_deref().unwrap_or("UNUSED");
        // A tagged claim is named by its Service and cluster (a newer
        // format's as far as it says), any other description quoted.
        let description = a.description.as_deref().filter(|d| !d.is_empty());
        let held_by = match (
            description.and_then(OwnerTag::parse),
            description.and_then(NewerTag::parse),
        ) {
            (Some(tagged), _) if tagged.retains() => format!(
                ", kept for {} by vcd-ccm.io/retain-address: only a Service of that namespace and name in that cluster takes it back; release the allocation in VCD to free it",
                tagged.owner.describe_service()
            ),
            (Some(tagged), _) => format!(", {}", tagged.owner.describe_service()),
            (None, Some(newer)) => format!(", {}", newer.describe()),
            (None, None) => description.map(|d| format!(", {d}")).unwrap_or_default(),
        };
        match takeable_by(a, owner) || (take_unused && unmarked(a)) {
            true => None,
            false => Some(format!(
                "IP Space allocation {} ({state}{held_by})",
                a.value
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
    excluded: &HashSet<IpAddr>,
    seed: &str,
) -> Result<Vec<IpAddr>, VcdError> {
    let allocated: HashSet<IpAddr> = client
        .ip_spaces()
        .allocations(&space.id, None)
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

//! IP Space allocations of Services: which are claimed for a Service (by
//! its ownership tag in the description), who else holds an address, which
//! addresses of a space no allocation holds, and making and claiming one
//! (noted in the journal first).

use std::collections::HashSet;
use std::net::IpAddr;

use super::LbError;
use super::decide::{Address, AddressContext};
use super::ipam::{Space, spread};
use super::journal::Noted;
use super::ownership::{NewerTag, OwnerTag};
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::{VcdClient, VcdError};

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
        // A tagged claim is named by its Service and cluster (a newer
        // format's as far as it says), any other description quoted.
        let description = a.description.as_deref().filter(|d| !d.is_empty());
        let held_by = match (
            description.and_then(OwnerTag::parse),
            description.and_then(NewerTag::parse),
        ) {
            (Some(tagged), _) => format!(", {}", tagged.owner.describe_service()),
            (None, Some(newer)) => format!(", {}", newer.describe()),
            (None, None) => description.map(|d| format!(", {d}")).unwrap_or_default(),
        };
        match claimed_by(a, owner) {
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

impl AddressContext<'_> {
    /// An unmarked allocation of the address the journal noted for the
    /// Service in `space`: one a crash or a lost answer left unclaimed.
    pub(super) async fn noted_allocation(
        &self,
        space: &Space,
    ) -> Result<Option<IpAllocation>, LbError> {
        let Some(noted) = self
            .journal
            .noted(self.spec)
            .as_deref()
            .and_then(Noted::parse)
        else {
            return Ok(None);
        };
        if noted.space_id != space.id || self.excluded.contains(&noted.ip) {
            return Ok(None);
        }
        let found = self
            .client
            .find_allocation_by_value(&space.id, &noted.ip.to_string())
            .await
            .map_err(LbError::vcd(
                self.service,
                "looking up the noted IP Space allocation".into(),
            ))?;
        Ok(found.filter(unmarked))
    }

    /// Notes `ip`, allocates it and claims it. An answer lost after VCD
    /// allocated it leaves an unmarked allocation of exactly `ip`: that is
    /// the one just asked for.
    pub(super) async fn allocate(&self, space: &Space, ip: IpAddr) -> Result<Address, LbError> {
        let noted = Noted {
            space_id: space.id.clone(),
            ip,
        };
        self.journal
            .note(self.spec, noted.format())
            .await
            .map_err(|source| LbError::Journal {
                service: self.service.to_string(),
                source,
            })?;
        let text = ip.to_string();
        let vcd = |action: String| LbError::vcd(self.service, action);
        let allocated = self
            .client
            .allocate_floating_ip(&space.id, Some(&text))
            .await;
        let allocation = match allocated {
            Err(error @ VcdError::TaskFailed { .. }) => {
                return Err(vcd(format!("allocating {ip} from IP Space {}", space.name))(error));
            }
            _ => self
                .client
                .find_allocation_by_value(&space.id, &text)
                .await
                .map_err(vcd("looking up the new IP Space allocation".into()))?
                .filter(unmarked),
        };
        let Some(allocation) = allocation else {
            let error = allocated.err().unwrap_or(VcdError::Missing {
                what: "IP allocation",
                name: text,
                scope: format!("in IP Space {} right after allocating it", space.name),
            });
            return Err(vcd(format!("allocating {ip} from IP Space {}", space.name))(error));
        };
        self.claim(space, allocation).await
    }

    /// Before API 37.2 `allocate` takes no address, so the address is known
    /// only from the answer: noted and claimed right after (a crash between
    /// allocate and note still strands it; 37.2 closes that window).
    pub(super) async fn allocate_any(&self, space: &Space) -> Result<Address, VcdError> {
        let allocated = self.client.allocate_floating_ip(&space.id, None).await?;
        let allocation = self
            .client
            .find_allocation_by_value(&space.id, &allocated.value)
            .await?
            .ok_or_else(|| VcdError::Missing {
                what: "IP allocation",
                name: allocated.value.clone(),
                scope: format!("in IP Space {} right after allocating it", space.name),
            })?;
        if let Ok(ip) = allocated.value.parse() {
            let noted = Noted {
                space_id: space.id.clone(),
                ip,
            };
            if let Err(error) = self.journal.note(self.spec, noted.format()).await {
                tracing::warn!(service = %self.service, %error, "could not note the IP Space allocation; claiming it at once");
            }
        }
        self.client
            .claim_allocation(&space.id, &allocation, &self.owner.format())
            .await?;
        let ip = allocated.value.parse().map_err(|_| VcdError::Missing {
            what: "IP allocation with an address",
            name: allocated.value.clone(),
            scope: format!("in IP Space {}", space.name),
        })?;
        Ok(Address {
            ip,
            verify_claim: false,
        })
    }

    /// Claims `allocation` for the Service (again, if it is claimed already).
    pub(super) async fn claim(
        &self,
        space: &Space,
        allocation: IpAllocation,
    ) -> Result<Address, LbError> {
        let ip: IpAddr = allocation.value.parse().map_err(|_| {
            LbError::vcd(self.service, "reading the IP Space allocation".into())(
                VcdError::Missing {
                    what: "IP allocation with an address",
                    name: allocation.value.clone(),
                    scope: format!("in IP Space {}", space.name),
                },
            )
        })?;
        let marker = self.owner.format();
        if allocation.description.as_deref() != Some(marker.as_str()) {
            self.client
                .claim_allocation(&space.id, &allocation, &marker)
                .await
                .map_err(LbError::vcd(
                    self.service,
                    format!("claiming IP Space allocation {ip}"),
                ))?;
        }
        Ok(Address {
            ip,
            verify_claim: false,
        })
    }
}

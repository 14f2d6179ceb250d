//! The IP Space writes the address a decision resolves to needs, planned
//! for the applier: an allocation of the address (of any address, before
//! API 37.2), or a claim of one already made (the journal's note of an
//! allocation a crash or a lost answer left unclaimed).

use std::net::IpAddr;

use crate::lb::decide::address::{Address, AddressContext, Resolved, SpaceClaim};
use crate::lb::decide::allocations::unmarked;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::observe::ipam::Space;
use crate::vcd::VcdError;
use crate::vcd::resources::ipspace::IpAllocation;

impl AddressContext<'_> {
    /// An unmarked allocation of the address the journal noted for the
    /// Service in `space`: one a crash or a lost answer left unclaimed.
    pub(in crate::lb) async fn noted_allocation(
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
            .ip_spaces()
            .find_allocation(&space.id, &noted.ip.to_string())
            .await
            .map_err(LbError::vcd(
                self.service,
                "looking up the noted IP Space allocation".into(),
            ))?;
        Ok(found.filter(unmarked))
    }

    /// The allocation of `ip` from `space`, for the applier to make
    /// (noted in the journal first, then claimed).
    pub(in crate::lb) fn allocate(&self, space: &Space, ip: IpAddr) -> Address {
        Address {
            ip,
            verify_claim: false,
            claim: Some(SpaceClaim::Allocate {
                space_id: space.id.clone(),
                space_name: space.name.clone(),
                ip,
            }),
        }
    }

    /// Before API 37.2 the IP Space picks the address: its allocation is
    /// made first, and the Service decided again once it is claimed.
    pub(in crate::lb) fn allocate_any(&self, space: &Space) -> Resolved {
        Resolved::AllocateFirst(SpaceClaim::AllocateAny {
            space_id: space.id.clone(),
            space_name: space.name.clone(),
        })
    }

    /// The claim of `allocation` for the Service, unless it carries the
    /// Service's tag already.
    pub(in crate::lb) fn claim(
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
        let tagged = allocation.description.as_deref() == Some(self.owner.format().as_str());
        let claim = (!tagged).then(|| SpaceClaim::Tag {
            space_id: space.id.clone(),
            allocation,
        });
        Ok(Address {
            ip,
            verify_claim: false,
            claim,
        })
    }
}

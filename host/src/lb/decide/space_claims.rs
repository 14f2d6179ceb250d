//! Making and claiming an IP Space allocation for the address a decision
//! resolves to: noted in the allocation journal before the request, so a
//! crash or a lost answer leaves an allocation the next reconcile finds.

use crate::lb::decide::address::{Address, AddressContext};
use crate::lb::decide::allocations::unmarked;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::observe::ipam::Space;
use crate::vcd::VcdError;
use crate::vcd::resources::ipspace::IpAllocation;
use std::net::IpAddr;

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
    pub(in crate::lb) async fn allocate(
        &self,
        space: &Space,
        ip: IpAddr,
    ) -> Result<Address, LbError> {
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
    pub(in crate::lb) async fn allocate_any(&self, space: &Space) -> Result<Address, VcdError> {
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
    pub(in crate::lb) async fn claim(
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

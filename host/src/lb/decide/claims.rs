//! Address claims after the writes: on IP blocks, asking VCD whether
//! another owner took the same address meanwhile; on IP Spaces, releasing
//! the claims a moved or deleted Service no longer uses, or passing them to
//! a Service that shares the address.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::LoadBalancers;
use crate::lb::decide::allocations;
use crate::lb::decide::sharing;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::GatewayView;
use crate::lb::ownership::OwnerTag;
use crate::lb::service::ServiceSpec;
use crate::lb::vips::Vips;
use crate::vcd::VcdError;
use crate::vcd::resources::ipspace::IpAllocation;

impl LoadBalancers {
    /// Asks VCD who holds `ips` and reports an address another owner holds
    /// too (IP blocks reserve nothing; both of a racing pair see each other
    /// and move, so no address ends up shared). The virtual services are
    /// looked up by address, a read that does not grow with the gateway;
    /// NAT modes read the NAT rules too, as VCD cannot filter them.
    pub(in crate::lb) async fn verify(
        &self,
        service: &ServiceSpec,
        owner: &OwnerTag,
        ips: &[IpAddr],
    ) -> Result<Option<(IpAddr, String)>, LbError> {
        let addresses: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
        let view = GatewayView::read_holders(
            &self.client,
            &self.gateway.id,
            &addresses,
            self.mode.uses_nat(),
        )
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "verifying the address claim".into(),
        ))?;
        self.snapshot.learn(&view.virtual_services);
        Ok(ips.iter().find_map(|ip| {
            view.other_holder(&ip.to_string(), owner)
                .map(|holder| (*ip, holder))
        }))
    }

    /// IP Spaces: after moving to `keep`, releases the Service's other claims
    /// (or passes them on to a sharer still on their address).
    pub(in crate::lb) async fn release_other_claims(
        &self,
        service: &ServiceSpec,
        view: &GatewayView,
        owner: &OwnerTag,
        keep: &Vips,
    ) -> Result<(), LbError> {
        let vcd = |a: String| LbError::vcd(&service.key(), a);
        let claims = allocations::find_claims(&self.client, self.source.spaces(), owner)
            .await
            .map_err(vcd("finding the Service's IP Space allocations".into()))?;
        for (space_id, allocation) in claims {
            let kept = allocation.value.parse().is_ok_and(|ip| keep.contains(ip));
            if !kept {
                self.release_or_pass_on(view, &space_id, &allocation, owner, None)
                    .await
                    .map_err(vcd(format!(
                        "releasing IP Space allocation {}",
                        allocation.value
                    )))?;
            }
        }
        Ok(())
    }

    /// IP Spaces: releases `leaving`'s claim, unless another Service sharing
    /// its address still holds it in `view` (one of `live`, if given): the
    /// claim then passes to that Service, so a shared address lives as long
    /// as its last sharer. Whether the allocation was released.
    pub(in crate::lb) async fn release_or_pass_on(
        &self,
        view: &GatewayView,
        space_id: &str,
        allocation: &IpAllocation,
        leaving: &OwnerTag,
        live: Option<&HashSet<String>>,
    ) -> Result<bool, VcdError> {
        match sharing::successor(view, leaving, &allocation.value, live) {
            Some(sharer) => {
                tracing::info!(ip = %allocation.value, from = %format!("{}/{}", leaving.namespace, leaving.name), to = %format!("{}/{}", sharer.namespace, sharer.name), "a Service sharing the address keeps it: its IP Space claim passes on");
                self.client
                    .claim_allocation(space_id, allocation, &sharer.format())
                    .await?;
                Ok(false)
            }
            None => {
                self.client.release_allocation(space_id, allocation).await?;
                Ok(true)
            }
        }
    }
}

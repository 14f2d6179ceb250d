//! Address claims after the writes: on IP blocks, asking VCD whether
//! another owner took the same address meanwhile; on IP Spaces, releasing
//! the claims a moved Service no longer uses.

use std::net::Ipv4Addr;

use super::ipam;
use super::observe::GatewayView;
use super::ownership::OwnerTag;
use super::{LbError, LoadBalancers, ServiceSpec};

impl LoadBalancers {
    /// Asks VCD who holds `ips` and reports an address another owner holds
    /// too (IP blocks reserve nothing; both of a racing pair see each other
    /// and move, so no address ends up shared). The virtual services are
    /// looked up by address, a read that does not grow with the gateway;
    /// NAT modes read the NAT rules too, as VCD cannot filter them.
    pub(super) async fn verify(
        &self,
        service: &ServiceSpec,
        owner: &OwnerTag,
        ips: &[Ipv4Addr],
    ) -> Result<Option<(Ipv4Addr, String)>, LbError> {
        let addresses: Vec<String> = ips.iter().map(Ipv4Addr::to_string).collect();
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

    /// IP Spaces: after moving to `keep`, releases the Service's other claims.
    pub(super) async fn release_other_claims(
        &self,
        service: &ServiceSpec,
        owner: &OwnerTag,
        keep: Ipv4Addr,
    ) -> Result<(), LbError> {
        let vcd = |a: String| LbError::vcd(&service.key(), a);
        let claims = ipam::find_claims(&self.client, self.source.spaces(), owner)
            .await
            .map_err(vcd("finding the Service's IP Space allocations".into()))?;
        for (space_id, allocation) in claims {
            if allocation.value != keep.to_string() {
                self.client
                    .release_allocation(&space_id, &allocation)
                    .await
                    .map_err(vcd(format!(
                        "releasing IP Space allocation {}",
                        allocation.value
                    )))?;
            }
        }
        Ok(())
    }
}

//! Verifying an address claim after the writes: on IP blocks nothing
//! reserves an address, so VCD is asked whether another owner took the same
//! one meanwhile. (Releasing IP Space claims is planned in `plan/claims.rs`.)

use std::net::IpAddr;

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::GatewayView;
use crate::lb::ownership::OwnerTag;
use crate::lb::service::ServiceSpec;

/// Asks VCD who holds `ips` and reports an address another owner holds
/// too (IP blocks reserve nothing; both of a racing pair see each other
/// and move, so no address ends up shared). The virtual services are
/// looked up by address, a read that does not grow with the gateway;
/// NAT modes read the NAT rules too, as VCD cannot filter them.
pub(in crate::lb) async fn verify(
    ctx: &Context,
    service: &ServiceSpec,
    owner: &OwnerTag,
    ips: &[IpAddr],
) -> Result<Option<(IpAddr, String)>, LbError> {
    let addresses: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
    let view = GatewayView::read_holders(
        &ctx.client,
        &ctx.gateway.id,
        &addresses,
        ctx.mode.uses_nat(),
    )
    .await
    .map_err(LbError::vcd(
        &service.key(),
        "verifying the address claim".into(),
    ))?;
    ctx.snapshot.learn(&view.virtual_services);
    Ok(ips.iter().find_map(|ip| {
        view.other_holder(&ip.to_string(), owner)
            .map(|holder| (*ip, holder))
    }))
}

//! Which address a Service has now, before the policy decides: the one its
//! objects use, the one the upstream CCM's objects used, or, when it owns
//! nothing at all (a takeover or a create cut short), the one its status
//! still reports, if no one else holds it.
//!
//! On IP blocks VCD reserves nothing, so an address is trusted only while no
//! other owner's virtual service uses it: a write whose verification never
//! ran (a failed read, a crash) is checked again on the next pass.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::context::Context;
use crate::lb::decide::allocations;
use crate::lb::errors::LbError;
use crate::lb::observe::ipam::{self, IpSource};
use crate::lb::observe::objects::{GatewayView, ServiceObjects, vips_of};
use crate::lb::ownership::OwnerTag;
use crate::lb::ranges::{family_of, other_family};
use crate::lb::service::ServiceSpec;
use crate::lb::vips::Vips;
use crate::policy::model::IpFamily;

/// The Service's address as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// It has none.
    None,
    /// Its own (or the upstream CCM's) objects use it and no one else does.
    Held(IpAddr),
    /// Its status reports it and nothing in VCD holds it: usable, to be
    /// verified once written (IP blocks).
    Remembered(IpAddr),
    /// Another owner's objects use it too.
    Contested(IpAddr, String),
}

impl Current {
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            Current::Held(ip) | Current::Remembered(ip) => Some(*ip),
            Current::None | Current::Contested(..) => None,
        }
    }
}

/// The Service's addresses as found, one per family it asks for.
#[derive(Debug, Clone, Default)]
pub struct Currents(Vec<Current>);

impl Currents {
    /// The usable ones.
    pub fn vips(&self) -> Vips {
        self.0.iter().filter_map(Current::ip).collect::<Vips>()
    }

    /// An address another owner's objects use too, with that owner.
    pub fn contested(&self) -> Option<(IpAddr, String)> {
        self.0.iter().find_map(|current| match current {
            Current::Contested(ip, holder) => Some((*ip, holder.clone())),
            _ => None,
        })
    }

    /// Whether `ip` is known only from the Service's status.
    pub fn remembered(&self, ip: IpAddr) -> bool {
        self.0.contains(&Current::Remembered(ip))
    }
}

/// What the address is looked up from.
pub struct Found<'a> {
    pub view: &'a GatewayView,
    pub observed: &'a ServiceObjects,
    /// The address the upstream CCM's objects for the Service used.
    pub upstream_ip: Option<&'a str>,
    pub owner: &'a OwnerTag,
    pub excluded: &'a HashSet<IpAddr>,
}

/// The Service's addresses as VCD holds them, whatever mode made its
/// objects: its DNAT rules' external addresses, or without any, its
/// virtual services' VIPs of an external pool, or of an internal one where
/// nothing else can put them there: in NAT modes a one-arm VIP left
/// without its DNAT rule may lie in an internal pool too, so there the
/// Service's status (`reported`) must name it.
pub(in crate::lb) fn external_ips(
    ctx: &Context,
    observed: &ServiceObjects,
    reported: &[String],
) -> Vec<IpAddr> {
    let internal = |ip: IpAddr| {
        ctx.internal.pool_of(ip).is_some()
            && (!ctx.mode.uses_nat() || reported.iter().any(|r| r.parse() == Ok(ip)))
    };
    observed.external_ips(|ip| ctx.source.pool_of(ip).is_some() || internal(ip))
}

/// The VIPs of the Service's virtual services that lie in an internal
/// pool: kept when the Service takes an address of that pool.
pub(in crate::lb) fn internal_vips(ctx: &Context, observed: &ServiceObjects) -> Vec<IpAddr> {
    let mut vips: Vec<IpAddr> = observed
        .virtual_services
        .values()
        .flat_map(|vs| vips_of(&vs.object))
        .filter_map(|ip| ip.parse().ok())
        .filter(|ip| ctx.internal.pool_of(*ip).is_some())
        .collect();
    vips.sort();
    vips.dedup();
    vips
}

/// The Service's addresses as found: of its first family, and of the
/// other when it asks for both.
pub(in crate::lb) async fn current_addresses(
    ctx: &Context,
    service: &ServiceSpec,
    found: &Found<'_>,
) -> Result<Currents, LbError> {
    let first = service.first_family();
    let mut families = vec![first];
    if service.wants_dual_stack() {
        families.push(other_family(first));
    }
    let mut found_all = Vec::new();
    for family in families {
        found_all.push(current_address(ctx, service, found, family).await?);
    }
    Ok(Currents(found_all))
}

/// The Service's address of `family` as found.
async fn current_address(
    ctx: &Context,
    service: &ServiceSpec,
    found: &Found<'_>,
    family: IpFamily,
) -> Result<Current, LbError> {
    let parse = |ip: &str| {
        ip.parse::<IpAddr>()
            .ok()
            .filter(|ip| family_of(*ip) == family)
    };
    let usable = |ip: &IpAddr| !found.excluded.contains(ip);
    let held = external_ips(ctx, found.observed, &service.reported_ips)
        .into_iter()
        .find(|ip| family_of(*ip) == family);
    if let Some(ip) = held {
        if !usable(&ip) {
            return Ok(Current::None);
        }
        // On IP Spaces the claim says whose the address is; only our
        // own cluster's Services can hold it beside us (a group left).
        let contestable = matches!(ctx.source, IpSource::Blocks { .. })
            || found.view.held_by_another_service(ip, found.owner);
        return Ok(
            match found.view.other_holder(&ip.to_string(), found.owner) {
                Some(holder) if contestable => Current::Contested(ip, holder),
                _ => Current::Held(ip),
            },
        );
    }
    if let Some(ip) = found.upstream_ip.and_then(parse).filter(usable) {
        return Ok(Current::Held(ip));
    }
    let Some(ip) = service
        .reported_ips
        .iter()
        .find_map(|ip| parse(ip))
        .filter(usable)
    else {
        return Ok(Current::None);
    };
    let free = remembered_is_free(ctx, service, ip, found.owner).await?;
    Ok(if free {
        Current::Remembered(ip)
    } else {
        Current::None
    })
}

/// Whether the address the status reports is still the Service's to
/// take: on IP blocks unused by the gateway, on IP Spaces claimed for it.
async fn remembered_is_free(
    ctx: &Context,
    service: &ServiceSpec,
    ip: IpAddr,
    owner: &OwnerTag,
) -> Result<bool, LbError> {
    let vcd = |action: &str| LbError::vcd(&service.key(), action.to_string());
    match &ctx.source {
        IpSource::Blocks { .. } => {
            if ctx.source.pool_of(ip).is_none() {
                return Ok(false);
            }
            let used = ipam::used_addresses(&ctx.client, &ctx.gateway.id)
                .await
                .map_err(vcd("reading the gateway's used IP addresses"))?;
            Ok(!used.iter().any(|(u, _)| *u == ip))
        }
        IpSource::Spaces(_) => {
            let Some(space) = ctx.source.space_of(ip) else {
                return Ok(false);
            };
            let (allocation, holder) =
                allocations::space_holder(&ctx.client, space, &ip.to_string(), owner, false)
                    .await
                    .map_err(vcd("looking up the IP Space allocation"))?;
            Ok(allocation.is_some() && holder.is_none())
        }
    }
}

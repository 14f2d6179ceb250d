//! Which address a Service has now, before the policy decides: the one its
//! objects use, the one the upstream CCM's objects used, or, when it owns
//! nothing at all (a takeover or a create cut short), the one its status
//! still reports, if no one else holds it.
//!
//! On IP blocks VCD reserves nothing, so an address is trusted only while no
//! other owner's virtual service uses it: a write whose verification never
//! ran (a failed read, a crash) is checked again on the next pass.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use super::ipam::{self, IpSource};
use super::observe::{GatewayView, ServiceObjects};
use super::ownership::OwnerTag;
use super::{LbError, LoadBalancers, ServiceSpec};

/// The Service's address as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// It has none.
    None,
    /// Its own (or the upstream CCM's) objects use it and no one else does.
    Held(Ipv4Addr),
    /// Its status reports it and nothing in VCD holds it: usable, to be
    /// verified once written (IP blocks).
    Remembered(Ipv4Addr),
    /// Another owner's objects use it too.
    Contested(Ipv4Addr, String),
}

impl Current {
    pub fn ip(&self) -> Option<Ipv4Addr> {
        match self {
            Current::Held(ip) | Current::Remembered(ip) => Some(*ip),
            Current::None | Current::Contested(..) => None,
        }
    }
}

/// What the address is looked up from.
pub struct Found<'a> {
    pub view: &'a GatewayView,
    pub observed: &'a ServiceObjects,
    /// The address the upstream CCM's objects for the Service used.
    pub upstream_ip: Option<&'a str>,
    pub owner: &'a OwnerTag,
    pub excluded: &'a HashSet<Ipv4Addr>,
}

impl LoadBalancers {
    /// The Service's external addresses as VCD holds them, whatever mode
    /// made its objects.
    pub(super) fn external_ips(&self, observed: &ServiceObjects) -> Vec<Ipv4Addr> {
        observed.external_ips(|ip| self.source.pool_of(ip).is_some())
    }

    pub(super) async fn current_address(
        &self,
        service: &ServiceSpec,
        found: &Found<'_>,
    ) -> Result<Current, LbError> {
        let parse = |ip: &str| ip.parse::<Ipv4Addr>().ok();
        let usable = |ip: &Ipv4Addr| !found.excluded.contains(ip);
        if let Some(ip) = self.external_ips(found.observed).first().copied() {
            if !usable(&ip) {
                return Ok(Current::None);
            }
            // On IP Spaces the claim says whose the address is; only our
            // own cluster's Services can hold it beside us (a group left).
            let contestable = matches!(self.source, IpSource::Blocks { .. })
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
            .reported_ip
            .as_deref()
            .and_then(parse)
            .filter(usable)
        else {
            return Ok(Current::None);
        };
        let free = self.remembered_is_free(service, ip, found.owner).await?;
        Ok(if free {
            Current::Remembered(ip)
        } else {
            Current::None
        })
    }

    /// Whether the address the status reports is still the Service's to
    /// take: on IP blocks unused by the gateway, on IP Spaces claimed for it.
    async fn remembered_is_free(
        &self,
        service: &ServiceSpec,
        ip: Ipv4Addr,
        owner: &OwnerTag,
    ) -> Result<bool, LbError> {
        let vcd = |action: &str| LbError::vcd(&service.key(), action.to_string());
        match &self.source {
            IpSource::Blocks { ranges, .. } => {
                if !ranges.iter().any(|r| r.contains(ip)) {
                    return Ok(false);
                }
                let used = ipam::used_addresses(&self.client, &self.gateway.id)
                    .await
                    .map_err(vcd("reading the gateway's used IP addresses"))?;
                Ok(!used.iter().any(|(u, _)| *u == ip))
            }
            IpSource::Spaces(_) => {
                let Some(space) = self.source.space_of(ip) else {
                    return Ok(false);
                };
                let (allocation, holder) =
                    ipam::space_holder(&self.client, space, &ip.to_string(), owner)
                        .await
                        .map_err(vcd("looking up the IP Space allocation"))?;
                Ok(allocation.is_some() && holder.is_none())
            }
        }
    }
}

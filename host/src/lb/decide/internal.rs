//! One-arm internal VIPs: each port's address on the internal range, kept
//! from its virtual service once chosen, picked away from every VIP on the
//! gateway otherwise (and verified like IP-block addresses).

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, Ipv4Addr};

use crate::lb::config::Mode;
use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::{Names, PortKey};
use crate::lb::observe::ipam::pick_internal;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::service::ServiceSpec;

/// One-arm: each port's internal VIP (kept from its virtual service when
/// it has one), and which were newly picked.
pub(in crate::lb) fn internal_ips(
    ctx: &Context,
    service: &ServiceSpec,
    names: &Names,
    view: &GatewayView,
    observed: &ServiceObjects,
    excluded: &HashSet<IpAddr>,
    seed: &str,
) -> Result<(BTreeMap<PortKey, Ipv4Addr>, Vec<Ipv4Addr>), LbError> {
    let Some(range) = ctx.mode.internal_range() else {
        return Ok((BTreeMap::new(), Vec::new()));
    };
    let excluded: &HashSet<Ipv4Addr> = &excluded
        .iter()
        .filter_map(|ip| match ip {
            IpAddr::V4(v4) => Some(*v4),
            IpAddr::V6(_) => None,
        })
        .collect();
    let keys: Vec<PortKey> = service
        .ports
        .iter()
        .filter(|p| p.node_port.is_some_and(|n| n > 0))
        .map(|p| PortKey {
            protocol: p.protocol,
            port: p.port,
        })
        .collect();
    let existing_of = |key: &PortKey| {
        observed
            .virtual_services
            .get(&names.virtual_service(*key))
            .and_then(|vs| vs.object.virtual_ip_address.as_deref()?.parse().ok())
            .filter(|ip: &Ipv4Addr| range.contains(*ip) && !excluded.contains(ip))
    };
    let in_use: HashSet<Ipv4Addr> = view
        .virtual_services
        .iter()
        .filter_map(|vs| vs.virtual_ip_address.as_deref()?.parse().ok())
        .collect();
    let exhausted = || LbError::OneArmExhausted {
        service: service.key(),
        start: range.first.to_string(),
        end: range.last.to_string(),
    };
    let mut chosen = BTreeMap::new();
    let mut fresh = Vec::new();
    match ctx.mode {
        Mode::SharedVipOneArm(_) => {
            let ip = match keys.iter().find_map(existing_of) {
                Some(ip) => ip,
                None => {
                    let ip = *pick_internal(range, &in_use, excluded, 1, seed)
                        .first()
                        .ok_or_else(exhausted)?;
                    fresh.push(ip);
                    ip
                }
            };
            chosen.extend(keys.iter().map(|k| (*k, ip)));
        }
        Mode::OneArm(_) => {
            let missing = keys.iter().filter(|k| existing_of(k).is_none()).count();
            let mut taken: HashSet<Ipv4Addr> = in_use;
            taken.extend(keys.iter().filter_map(existing_of));
            let mut picks = pick_internal(range, &taken, excluded, missing, seed).into_iter();
            for key in &keys {
                let ip = match existing_of(key) {
                    Some(ip) => ip,
                    None => {
                        let ip = picks.next().ok_or_else(exhausted)?;
                        fresh.push(ip);
                        ip
                    }
                };
                chosen.insert(*key, ip);
            }
        }
        Mode::SharedVip => {}
    }
    Ok((chosen, fresh))
}

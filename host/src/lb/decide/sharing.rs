//! Sharing keys: Services annotated with the same `vcd-ccm.io/sharing-key`
//! may hold one external address, each with its own virtual services on
//! its own ports.
//!
//! The policy decides: a Service with a key is offered, after the ordinary
//! pools, one single-address pool per namespace whose Services with that key
//! already hold an address (`sharing-key/<namespace>/<key>`). Taking it (by
//! name, or by its address for the Service's own namespace) shares; the
//! default policy takes its own namespace's only. The group is read from the
//! ownership tags (` share=<key>`) in the gateway snapshot, so it costs no
//! VCD call, and two Services of one cluster with the same key never count
//! as each other's competitors for the address.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use crate::lb::config::Mode;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::{GatewayView, vips_of};
use crate::lb::ownership::{OwnerTag, describe_holder};
use crate::lb::service::ServiceSpec;
use crate::policy::model::{AddressPool, AppProfile, Decision, IpAddress, IpRange, PoolSource};
use crate::vcd::resources::virtual_service::ServicePort;

/// The annotation naming a Service's sharing group.
pub const SHARING_KEY_ANNOTATION: &str = "vcd-ccm.io/sharing-key";
/// How the pools of sharing groups are named for the policy.
pub const POOL_PREFIX: &str = "sharing-key/";
/// As long as a label value: the key is part of every ownership tag.
const MAX_KEY_LEN: usize = 63;

/// The Service's sharing key, checked: at most 63 letters, digits, `-`, `_`
/// and `.`, starting and ending with a letter or digit (a label value).
pub fn sharing_key(service: &ServiceSpec) -> Result<Option<String>, LbError> {
    let Some(value) = service.annotations.get(SHARING_KEY_ANNOTATION) else {
        return Ok(None);
    };
    let alnum_ends = value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric());
    let allowed = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if value.len() <= MAX_KEY_LEN && alnum_ends && allowed {
        return Ok(Some(value.clone()));
    }
    Err(LbError::InvalidService {
        service: service.key(),
        problem: format!(
            "annotation {SHARING_KEY_ANNOTATION}: {:?} is not a sharing key; use at most {MAX_KEY_LEN} letters, digits, '-', '_' and '.', starting and ending with a letter or digit (e.g. \"dns\")",
            crate::text::sanitize(value, 80)
        ),
    })
}

/// Refuses an unusable key, and any key in one-arm mode without shared
/// VIPs, where each port has an address of its own. Before any write.
pub(in crate::lb) fn check_sharing(mode: &Mode, service: &ServiceSpec) -> Result<(), LbError> {
    if sharing_key(service)?.is_some() && matches!(mode, Mode::OneArm(_)) {
        return Err(LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "annotation {SHARING_KEY_ANNOTATION}: addresses cannot be shared in one-arm mode without shared virtual service IPs, where every port gets addresses of its own; set loadbalancer.enableVirtualServiceSharedIP: true, or remove the annotation"
            ),
        });
    }
    Ok(())
}

/// Refuses a decision whose ports another owner already serves on
/// `ip`: the later of two sharers is told which Service and port, and
/// nothing is written.
pub(in crate::lb) fn check_ports_free(
    service: &ServiceSpec,
    view: &GatewayView,
    owner: &OwnerTag,
    decision: &Decision,
    ip: IpAddr,
) -> Result<(), LbError> {
    // Ports without a node port get no objects, so they cannot collide.
    let listening: Vec<(u16, bool)> = decision
        .ports
        .iter()
        .filter(|p| {
            service.ports.iter().any(|s| {
                s.port == p.service_port
                    && s.protocol == p.protocol
                    && s.node_port.is_some_and(|n| n > 0)
            })
        })
        .map(|p| (p.listen_port, p.profile == AppProfile::L4Udp))
        .collect();
    match collision(view, owner, ip, &listening) {
        None => Ok(()),
        Some((port, holder)) => Err(LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "port {port} on {ip}, shared by {SHARING_KEY_ANNOTATION} {:?}, is already served by {holder}; Services sharing an address need distinct ports (NSX ALB serves one virtual service per address, port and transport; a DNAT rule forwards every protocol of its port): change the port or the key; nothing was changed in VCD",
                owner.share.as_deref().unwrap_or_default()
            ),
        }),
    }
}

/// The address a namespace's Services with one key hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// `sharing-key/<namespace>/<key>`, the pool offered for it.
    pub pool: String,
    pub namespace: String,
    pub ip: IpAddr,
}

/// The addresses of the VIPs and NAT rules tagged for Services of `owner`'s
/// cluster with `owner`'s key (itself included), with their owners.
fn group_holders<'a>(
    view: &'a GatewayView,
    owner: &'a OwnerTag,
    is_external: impl Fn(IpAddr) -> bool + 'a,
) -> impl Iterator<Item = (IpAddr, OwnerTag)> + 'a {
    view.tagged_addresses()
        .filter(move |(ip, _)| is_external(*ip))
        .filter(move |(_, tagged)| tagged.same_group(owner))
}

/// The groups of `owner`'s key on the gateway: per namespace, the address
/// most of its Services with the key hold (the lowest on a tie), so Services
/// that started apart at the same time come together on one.
pub fn groups(
    view: &GatewayView,
    owner: &OwnerTag,
    is_external: impl Fn(IpAddr) -> bool,
) -> Vec<Group> {
    let Some(key) = owner.share.as_deref() else {
        return Vec::new();
    };
    let mut holders: BTreeMap<(String, IpAddr), BTreeSet<String>> = BTreeMap::new();
    for (ip, tagged) in group_holders(view, owner, is_external) {
        holders
            .entry((tagged.namespace.clone(), ip))
            .or_default()
            .insert(tagged.uid);
    }
    let mut best: BTreeMap<String, (usize, IpAddr)> = BTreeMap::new();
    for ((namespace, ip), uids) in holders {
        let entry = best.entry(namespace).or_insert((uids.len(), ip));
        if uids.len() > entry.0 {
            *entry = (uids.len(), ip);
        }
    }
    best.into_iter()
        .map(|(namespace, (_, ip))| Group {
            pool: format!("{POOL_PREFIX}{namespace}/{key}"),
            namespace,
            ip,
        })
        .collect()
}

/// The groups as pools for the policy: one address each, free to take.
pub fn pools(groups: &[Group], source_of: impl Fn(IpAddr) -> PoolSource) -> Vec<AddressPool> {
    groups
        .iter()
        .map(|group| {
            let ip = IpAddress::from(group.ip);
            AddressPool {
                name: group.pool.clone(),
                source: source_of(group.ip),
                ranges: vec![IpRange {
                    first: ip,
                    last: ip,
                }],
                free_count: 1,
                external: true,
            }
        })
        .collect()
}

/// The first of `ports` (number, UDP or not) another owner's virtual
/// service or DNAT rule on `ip` already listens on, with that owner: NSX
/// ALB refuses two virtual services on one VIP with the same transport on
/// overlapping ports, and a DNAT rule without a port profile forwards every
/// protocol of its port.
pub fn collision(
    view: &GatewayView,
    owner: &OwnerTag,
    ip: IpAddr,
    ports: &[(u16, bool)],
) -> Option<(u16, String)> {
    let text = ip.to_string();
    let foreign = |description: Option<&str>| {
        !description
            .and_then(OwnerTag::parse)
            .is_some_and(|t| t.owner.same_service(owner))
    };
    for (port, udp) in ports {
        let wanted = u32::from(*port);
        let vs = view.virtual_services.iter().find(|vs| {
            vips_of(vs).any(|vip| vip == text)
                && foreign(vs.description.as_deref())
                && vs
                    .service_ports
                    .iter()
                    .any(|p| is_udp(p) == *udp && covers(p, wanted))
        });
        if let Some(vs) = vs {
            let what = format!("virtual service {}", vs.name);
            return Some((*port, describe_holder(vs.description.as_deref(), &what)));
        }
        let nat = view.nat_rules.iter().find(|rule| {
            rule.external_addresses == text
                && foreign(rule.description.as_deref())
                && forwards(rule.dnat_external_port.as_deref(), wanted)
        });
        if let Some(rule) = nat {
            let what = format!("NAT rule {}", rule.name);
            return Some((*port, describe_holder(rule.description.as_deref(), &what)));
        }
    }
    None
}

/// Whether a virtual service port carries UDP (a `tcpUdpProfile` of a UDP
/// type, as the plan writes for `l4-udp`).
fn is_udp(port: &ServicePort) -> bool {
    port.transport().is_some_and(|kind| kind.starts_with("UDP"))
}

/// Whether `port` is a virtual service port or in its range.
fn covers(service_port: &ServicePort, port: u32) -> bool {
    let last = service_port.port_end.unwrap_or(service_port.port_start);
    (service_port.port_start..=last).contains(&port)
}

/// Whether a DNAT rule's external port (`80`, `8000-8080`, none or `ANY`
/// for every port) covers `port`.
fn forwards(external_port: Option<&str>, port: u32) -> bool {
    let Some(text) = external_port.map(str::trim).filter(|t| !t.is_empty()) else {
        return true;
    };
    if text.eq_ignore_ascii_case("any") {
        return true;
    }
    let (first, last) = text.split_once('-').unwrap_or((text, text));
    match (first.trim().parse::<u32>(), last.trim().parse::<u32>()) {
        (Ok(first), Ok(last)) => (first..=last).contains(&port),
        _ => true,
    }
}

/// A Service of the same cluster that still holds `ip` in the view and
/// shares it (has a sharing key), other than `leaving`: the one an IP Space
/// claim passes to, so the address lives as long as its last sharer.
/// `live` limits the choice to Services that still exist (the sweep).
pub fn successor(
    view: &GatewayView,
    leaving: &OwnerTag,
    ip: &str,
    live: Option<&std::collections::HashSet<String>>,
) -> Option<OwnerTag> {
    view.tagged_addresses()
        .filter(|(at, _)| at.to_string() == ip)
        .map(|(_, tagged)| tagged)
        .filter(|tagged| {
            tagged.share.is_some()
                && tagged.uid != leaving.uid
                && tagged.cluster_id == leaving.cluster_id
                && tagged.identity.is_some()
                && tagged.identity == leaving.identity
        })
        .find(|tagged| live.is_none_or(|live| live.contains(&tagged.uid)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dnat_ports_cover_what_they_forward() {
        assert!(forwards(Some("80"), 80));
        assert!(!forwards(Some("80"), 81));
        assert!(forwards(Some("8000-8080"), 8042));
        assert!(forwards(None, 1) && forwards(Some("ANY"), 1));
    }
}

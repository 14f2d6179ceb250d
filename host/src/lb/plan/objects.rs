//! Plan: the objects a decision asks for (a pool and a virtual service per
//! port, plus a DNAT rule per port in one-arm modes), compared with what the
//! Service owns in VCD, as an ordered list of writes. Each object's
//! description records a digest of its desired form, so an unchanged
//! object is recognised from the gateway's summaries and never written.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde_json::{Map, json};

use crate::lb::config::Mode;
use crate::lb::naming::{Names, PortKey, short_hash};
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::http_rules::{Recorded, RuleSet};
use crate::lb::plan::member_sets::{GroupWant, Members, node_addresses};
use crate::lb::plan::monitors::{self, MonitorNames, Monitoring};
use crate::lb::plan::op::Op;
use crate::lb::plan::summary_drift;
use crate::lb::plan::virtual_service_diff::{self, EditedList};
use crate::lb::service::{NodeSpec, ServiceSpec};
use crate::lb::vips::Vips;
use crate::policy::model::{AppProfile, Decision, PortDecision, PortTraffic};
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::certificate::CertificateItem;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::{PersistenceProfile, Pool, PoolMember};
use crate::vcd::resources::virtual_service::{ApplicationProfile, ServicePort, VirtualService};

/// The service engine group the decision names, if any; its id (or, for
/// an update without a choice, the group the virtual service runs on) is
/// filled in when the virtual service is written.
fn engine_group(decision: &Decision) -> EntityRef {
    EntityRef {
        name: decision.service_engine_group.clone(),
        id: String::new(),
    }
}

/// Everything the desired objects depend on.
pub struct Target<'a> {
    pub mode: Mode,
    pub gateway: &'a EntityRef,
    pub names: &'a Names,
    pub owner: &'a OwnerTag,
    pub service: &'a ServiceSpec,
    pub nodes: &'a [NodeSpec],
    /// Where the pools take their members from.
    pub members: &'a Members,
    pub decision: &'a Decision,
    pub certificates: &'a [CertificateItem],
    /// The external addresses; IPv6 only without NAT.
    pub external: Vips,
    /// The VIP of each port's virtual service in one-arm modes.
    pub internal_ips: &'a BTreeMap<PortKey, Ipv4Addr>,
    pub monitoring: Monitoring,
    pub monitor_names: &'a MonitorNames,
}

fn algorithm(decision: &PortDecision) -> String {
    decision
        .algorithm
        .wit_name()
        .replace('-', "_")
        .to_uppercase()
}

/// The decision's traffic entry for the port.
fn traffic<'a>(decision: &'a Decision, port: &PortDecision) -> Option<&'a PortTraffic> {
    decision
        .traffic
        .iter()
        .find(|t| t.service_port == port.service_port && t.protocol == port.protocol)
}

/// The pool's persistence, from the decision's traffic entry for the port.
fn persistence(decision: &Decision, port: &PortDecision) -> Option<PersistenceProfile> {
    let (kind, value) = traffic(decision, port)?.persistence.vcd_profile()?;
    Some(PersistenceProfile {
        profile_type: kind.into(),
        value: value.map(str::to_owned),
        extra: Map::new(),
    })
}

/// The pool's graceful timeout for a drain period: whole minutes, at
/// least the period; none without one, as VCD's default closes a disabled
/// member's connections at once.
fn drain_minutes(seconds: u32) -> Option<i32> {
    (seconds > 0).then(|| i32::try_from(seconds.div_ceil(60)).unwrap_or(i32::MAX))
}

/// `transparentModeEnabled` only when asked for: the field exists from API
/// 37.1, and absent means off on every version.
fn transparent_mode(decision: &Decision) -> Map<String, serde_json::Value> {
    let mut extra = Map::new();
    if decision.preserve_client_ip {
        extra.insert("transparentModeEnabled".into(), json!(true));
    }
    extra
}

/// A pool's member list, or its member group: named here, its id filled
/// in once the set is written ([`point_at_group`]), so the digest does not
/// depend on it.
fn members(target: &Target<'_>, node_port: u16) -> (Vec<PoolMember>, Option<EntityRef>) {
    if let Members::Group(want) = target.members {
        let group = EntityRef {
            name: Some(want.name.clone()),
            id: String::new(),
        };
        return (Vec::new(), Some(group));
    }
    let listed = node_addresses(target.nodes)
        .into_iter()
        .map(|ip| PoolMember {
            ip_address: ip,
            port: Some(u32::from(node_port)),
            ratio: Some(1),
            enabled: true,
            extra: Map::new(),
        })
        .collect();
    (listed, None)
}

/// A pool's spec word: its digest, and after `~` the mark of the selector
/// set it takes its members from, which keeps that set in use.
fn pool_spec(target: &Target<'_>, pool: &Pool) -> String {
    match target.members {
        Members::Group(GroupWant {
            mark: Some(mark), ..
        }) => format!("{}~{mark}", digest(pool)),
        _ => digest(pool),
    }
}

/// The selector-set marks the pools on the gateway carry in their tags.
pub fn selector_marks_in_use<'a>(
    descriptions: impl Iterator<Item = Option<&'a str>>,
) -> BTreeSet<String> {
    descriptions
        .filter_map(|d| OwnerTag::parse(d?)?.spec)
        .filter_map(|spec| Some(spec.split_once('~')?.1.to_string()))
        .collect()
}

/// Gives the pools `ops` write the id of the member group they name.
pub fn point_at_group(ops: &mut [Op], group: &EntityRef) {
    for op in ops {
        if let Op::CreatePool(pool) | Op::UpdatePool { pool, .. } = op
            && let Some(reference) = &mut pool.member_group_ref
        {
            reference.id.clone_from(&group.id);
        }
    }
}

fn profile(decision: &PortDecision) -> (ApplicationProfile, bool, &'static str) {
    let (name, kind, ssl) = match decision.profile {
        AppProfile::L4Tcp | AppProfile::L4Udp => ("System-L4-Application", "L4", false),
        AppProfile::L4Tls => ("System-SSL-Application", "L4_TLS", true),
        AppProfile::Http => ("System-HTTP", "HTTP", false),
        AppProfile::Https => ("System-Secure-HTTP", "HTTPS", true),
    };
    let transport = match decision.profile {
        AppProfile::L4Udp => "UDP_FAST_PATH",
        _ => "TCP_PROXY",
    };
    let application = ApplicationProfile {
        name: Some(name.into()),
        profile_type: kind.into(),
        system_defined: Some(true),
    };
    (application, ssl, transport)
}

/// Ends a virtual service's own digest when the Service keeps its address.
const RETAIN_SUFFIX: &str = "-retain";

/// Whether the Service's virtual services record that it keeps its address.
pub fn keeps_address(observed: &ServiceObjects) -> bool {
    observed.virtual_services.values().any(|vs| {
        vs.tag
            .spec
            .as_deref()
            .is_some_and(|spec| Recorded::split(spec).0.ends_with(RETAIN_SUFFIX))
    })
}

fn digest<T: serde::Serialize>(object: &T) -> String {
    short_hash(&serde_json::to_string(object).unwrap_or_default())
}

/// Tags a pool changed after it was planned (members kept or held for a
/// drain) with the digest of its new form, then `suffix`.
pub fn retag_pool(pool: &mut Pool, suffix: &str) {
    let prefix = pool
        .description
        .as_deref()
        .and_then(|d| d.rsplit_once(" spec="))
        .map(|(prefix, _)| prefix.to_string())
        .unwrap_or_default();
    pool.description = None;
    pool.description = Some(format!("{prefix} spec={}{suffix}", digest(&*pool)));
}

/// The desired objects of every port that has a node port (pools forward
/// to node ports; a port without one gets nothing, as upstream).
pub fn desired(target: &Target<'_>) -> Vec<DesiredPort> {
    let mut ports = Vec::new();
    for spec in &target.service.ports {
        let Some(node_port) = spec.node_port.filter(|p| *p > 0) else {
            continue;
        };
        let Some(decision) = target
            .decision
            .ports
            .iter()
            .find(|d| d.service_port == spec.port && d.protocol == spec.protocol)
        else {
            continue;
        };
        let key = PortKey {
            protocol: spec.protocol,
            port: spec.port,
        };
        let pool_name = target.names.pool(key);
        let (members, member_group_ref) = members(target, node_port);
        let drain_seconds = traffic(target.decision, decision).map_or(0, |t| t.drain_seconds);
        let tenant_monitors = match target.monitoring.tenant {
            true => monitors::port_monitors(
                target.monitor_names,
                target.monitoring.node_probe(target.service),
                decision,
            ),
            false => Vec::new(),
        };
        let mut pool = Pool {
            id: None,
            name: pool_name.clone(),
            description: None,
            enabled: true,
            default_port: Some(u32::from(node_port)),
            algorithm: Some(algorithm(decision)),
            members,
            member_group_ref,
            health_monitors: monitors::pool_items(decision, &tenant_monitors),
            persistence_profile: persistence(target.decision, decision),
            graceful_timeout_period: drain_minutes(drain_seconds),
            gateway_ref: target.gateway.clone(),
            extra: Map::new(),
        };
        pool.description = Some(target.owner.describe(&pool_spec(target, &pool)));

        let (application_profile, ssl, transport) = profile(decision);
        let certificate_ref = decision.certificate.as_ref().and_then(|alias| {
            let named = target.certificates.iter().find(|c| &c.alias == alias)?;
            // A Secret's `secret/<name>` stands for its upload: name that.
            let item = target
                .certificates
                .iter()
                .find(|c| c.id == named.id && c.alias != named.alias)
                .unwrap_or(named);
            Some(item.reference())
        });
        let internal = target.internal_ips.get(&key).copied();
        let vip = internal.or(target.external.v4());
        let mut port_extra = Map::new();
        port_extra.insert("tcpUdpProfile".into(), json!({"type": transport}));
        let mut virtual_service = VirtualService {
            id: None,
            name: target.names.virtual_service(key),
            description: None,
            enabled: true,
            virtual_ip_address: vip.map(|ip| ip.to_string()),
            ipv6_virtual_ip_address: target.external.v6().map(|ip| ip.to_string()),
            load_balancer_pool_ref: EntityRef {
                name: Some(pool_name),
                id: String::new(),
            },
            gateway_ref: target.gateway.clone(),
            service_engine_group_ref: engine_group(target.decision),
            certificate_ref,
            service_ports: vec![ServicePort {
                port_start: u32::from(decision.listen_port),
                port_end: Some(u32::from(decision.listen_port)),
                ssl_enabled: Some(ssl),
                extra: port_extra,
            }],
            application_profile,
            extra: transparent_mode(target.decision),
        };
        let rules = traffic(target.decision, decision)
            .map(|t| RuleSet::of(&t.http))
            .unwrap_or_default();
        // A Service whose address outlives it says so in its virtual
        // services' tags, so a pass that finds them unmarked (or marked)
        // knows the claim's mark may differ.
        let own = match target.decision.retain_address {
            true => format!("{}{RETAIN_SUFFIX}", digest(&virtual_service)),
            false => digest(&virtual_service),
        };
        let spec = rules.recorded().spec(&own);
        virtual_service.description = Some(target.owner.describe(&spec));

        let dnat = target.mode.uses_nat().then(|| {
            let mut rule = NatRule {
                id: None,
                name: target.names.dnat(key),
                description: None,
                enabled: true,
                rule_type: Some("DNAT".into()),
                external_addresses: target
                    .external
                    .v4()
                    .map(|ip| ip.to_string())
                    .unwrap_or_default(),
                internal_addresses: vip.map(|ip| ip.to_string()).unwrap_or_default(),
                dnat_external_port: Some(decision.listen_port.to_string()),
                application_port_profile: None,
                version: None,
                extra: Map::new(),
            };
            rule.description = Some(target.owner.describe(&digest(&rule)));
            rule
        });
        ports.push(DesiredPort {
            pool,
            monitors: tenant_monitors,
            virtual_service,
            rules,
            drain_seconds,
            dnat,
        });
    }
    ports
}

/// The writes that turn `observed` into `desired`, deletes first (NAT,
/// virtual services, pools), then pools, virtual services and NAT rules.
/// A virtual service whose VIP changes is replaced: VCD refuses to move a
/// VIP other virtual services share.
pub fn diff(desired: &[DesiredPort], observed: &ServiceObjects, edited: &[EditedList]) -> Vec<Op> {
    let mut ops = Vec::new();
    for port in desired {
        let pool = &port.pool;
        match observed.pools.get(&pool.name) {
            None => ops.push(Op::CreatePool(pool.clone())),
            Some(seen) => {
                // A group's size moves with the set, not with the pool.
                let same_members = match pool.member_group_ref {
                    Some(_) => seen.object.member_group_type.as_deref() == Some("IP_SET"),
                    None => {
                        seen.object.member_group_type.is_none()
                            && seen.object.member_count == Some(pool.members.len() as u32)
                    }
                };
                let same = seen.tag.written_as(pool.description.as_deref()) && same_members;
                if !same {
                    ops.push(Op::UpdatePool {
                        id: seen.object.id.clone(),
                        pool: pool.clone(),
                    });
                }
            }
        }
        virtual_service_diff::diff(port, observed, edited, &mut ops);
        if let Some(rule) = &port.dnat {
            match observed.nat_rules.get(&rule.name) {
                None => ops.push(Op::CreateNat(rule.clone())),
                Some(seen) => {
                    let changed = !seen.tag.written_as(rule.description.as_deref())
                        || summary_drift::nat_rule_changed(&seen.object, rule);
                    if changed && let Some(id) = &seen.object.id {
                        ops.push(Op::UpdateNat {
                            id: id.clone(),
                            rule: NatRule {
                                version: seen.object.version,
                                ..rule.clone()
                            },
                        });
                    }
                }
            }
        }
    }
    let wanted = |name: &str| {
        desired.iter().any(|p| {
            p.pool.name == name
                || p.virtual_service.name == name
                || p.dnat.as_ref().is_some_and(|d| d.name == name)
        })
    };
    for (name, rule) in &observed.nat_rules {
        if !wanted(name)
            && let Some(id) = &rule.object.id
        {
            ops.push(Op::DeleteNat {
                id: id.clone(),
                name: name.clone(),
            });
        }
    }
    for (name, vs) in &observed.virtual_services {
        if !wanted(name) {
            ops.push(Op::DeleteVirtualService {
                id: vs.object.id.clone(),
                name: name.clone(),
            });
        }
    }
    for (name, pool) in &observed.pools {
        if !wanted(name) {
            ops.push(Op::DeletePool {
                id: pool.object.id.clone(),
                name: name.clone(),
            });
        }
    }
    ops.sort_by_key(Op::rank);
    ops
}

/// Every write that removes what `observed` holds, in order.
pub fn teardown(observed: &ServiceObjects) -> Vec<Op> {
    diff(&[], observed, &[])
}

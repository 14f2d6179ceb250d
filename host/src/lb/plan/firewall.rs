//! The managed gateway firewall (`loadbalancer.manageFirewall: true`): per
//! Service, one allow rule from its source ranges (any source when none)
//! to its addresses on its ports, built from two IP sets and a port profile
//! as the API requires, all tagged with the ownership tag. The rule is
//! appended to the user-defined rules, so it comes after the rules already
//! there and before the gateway's default rules.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Map, Value};

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::{FIREWALL_PREFIX, Names};
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::op::FirewallOp;
use crate::lb::service::ServiceSpec;
use crate::lb::source_ranges::SourceRange;
use crate::policy::model::Protocol;
use crate::vcd::VcdError;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::firewall::FirewallRule;
use crate::vcd::resources::ip_set::IpSet;
use crate::vcd::resources::profiles::{ApplicationPort, PortProfile};

/// Where a Service is reachable: what its rule lets in.
#[derive(Debug, Clone)]
pub(in crate::lb) struct Exposure {
    /// The external address and, in one-arm modes, the internal VIPs the
    /// DNAT rules translate it to (the firewall may match either).
    pub addresses: Vec<IpAddr>,
    /// The ports with objects (those with a node port).
    pub ports: Vec<(Protocol, u16)>,
}

impl Exposure {
    /// The Service at `ips` (and `internal` VIPs), on its ports with a node port.
    pub fn of(service: &ServiceSpec, ips: &[IpAddr], internal: &[Ipv4Addr]) -> Self {
        let mut addresses: Vec<IpAddr> = ips
            .iter()
            .copied()
            .chain(internal.iter().copied().map(IpAddr::V4))
            .collect();
        addresses.sort_unstable();
        addresses.dedup();
        let ports = service
            .ports
            .iter()
            .filter(|p| p.node_port.is_some_and(|n| n > 0))
            .map(|p| (p.protocol, p.port))
            .collect();
        Self { addresses, ports }
    }
}

/// The firewall objects of one Service, as found on the gateway.
#[derive(Default)]
struct Found {
    rule: Option<FirewallRule>,
    sources: Option<IpSet>,
    destinations: Option<IpSet>,
    ports: Option<PortProfile>,
}

fn vcd(owner: &OwnerTag, action: &str) -> impl FnOnce(VcdError) -> LbError {
    LbError::vcd(
        &format!("{}/{}", owner.namespace, owner.name),
        action.to_string(),
    )
}

fn application_ports(ports: &[(Protocol, u16)]) -> Vec<ApplicationPort> {
    [(Protocol::Tcp, "TCP"), (Protocol::Udp, "UDP")]
        .into_iter()
        .filter_map(|(protocol, name)| {
            let mut numbers: Vec<u16> = ports
                .iter()
                .filter(|(p, _)| *p == protocol)
                .map(|(_, n)| *n)
                .collect();
            numbers.sort_unstable();
            numbers.dedup();
            (!numbers.is_empty()).then(|| ApplicationPort {
                protocol: name.to_string(),
                destination_ports: numbers.iter().map(ToString::to_string).collect(),
            })
        })
        .collect()
}

/// Whether an object's description is `owner`'s tag, identity included.
pub(in crate::lb) fn is_ours(description: Option<&str>, owner: &OwnerTag) -> bool {
    description
        .and_then(OwnerTag::parse)
        .is_some_and(|t| t.owner.same_service(owner) && t.owner.identity == owner.identity)
}

/// The Service's firewall objects. An object carrying one of its names
/// but not its tag belongs to someone else: an error, nothing changed.
async fn find_firewall(ctx: &Context, owner: &OwnerTag, names: &Names) -> Result<Found, LbError> {
    let gateway = &ctx.gateway.id;
    let rules = ctx
        .client
        .firewall()
        .user_rules(gateway)
        .await
        .map_err(vcd(owner, "reading the gateway firewall rules"))?;
    let rule = rules
        .iter()
        .filter_map(|r| serde_json::from_value::<FirewallRule>(r.clone()).ok())
        .find(|r| is_ours(r.description.as_deref(), owner));
    let sets = ctx
        .client
        .ip_sets()
        .list(gateway, |n| {
            n == names.firewall_sources() || n == names.firewall_destinations()
        })
        .await
        .map_err(vcd(owner, "reading the gateway's IP sets"))?;
    let profile = ctx
        .client
        .port_profiles()
        .find("TENANT", &names.firewall_ports())
        .await
        .map_err(vcd(owner, "reading the firewall port profile"))?;
    let mut found = Found {
        rule,
        ports: profile,
        ..Found::default()
    };
    for set in sets {
        let slot = if set.name == names.firewall_sources() {
            &mut found.sources
        } else if set.name == names.firewall_destinations() {
            &mut found.destinations
        } else {
            continue;
        };
        *slot = Some(set);
    }
    let foreign = [
        found
            .sources
            .as_ref()
            .map(|s| (&s.name, s.description.as_deref())),
        found
            .destinations
            .as_ref()
            .map(|s| (&s.name, s.description.as_deref())),
        found
            .ports
            .as_ref()
            .map(|p| (&p.name, p.description.as_deref())),
    ]
    .into_iter()
    .flatten()
    .find(|(_, description)| !is_ours(*description, owner));
    if let Some((name, _)) = foreign {
        return Err(LbError::InvalidService {
            service: format!("{}/{}", owner.namespace, owner.name),
            problem: format!(
                "the gateway holds {name}, which the Service's firewall rule needs, without this Service's ownership tag; rename or delete it"
            ),
        });
    }
    Ok(found)
}

/// The writes that converge the Service's firewall rule: its IP sets
/// and port profile first, then the rule naming them, then a sources
/// set it no longer needs.
pub(in crate::lb) async fn plan_firewall(
    ctx: &Context,
    owner: &OwnerTag,
    names: &Names,
    exposure: &Exposure,
    ranges: &[SourceRange],
) -> Result<Vec<FirewallOp>, LbError> {
    let found = find_firewall(ctx, owner, names).await?;
    let mut ops = Vec::new();
    let addresses: Vec<String> = exposure.addresses.iter().map(ToString::to_string).collect();
    let destinations = want_ip_set(
        ctx,
        owner,
        found.destinations,
        &names.firewall_destinations(),
        addresses,
        &mut ops,
    );
    let sources = (!ranges.is_empty()).then(|| {
        let ranges = ranges.iter().map(ToString::to_string).collect();
        want_ip_set(
            ctx,
            owner,
            found.sources.clone(),
            &names.firewall_sources(),
            ranges,
            &mut ops,
        )
    });
    let ports = want_ports(ctx, owner, found.ports, names, exposure, &mut ops);
    let mut wanted = FirewallRule {
        id: None,
        name: names.firewall_rule(),
        description: Some(owner.format()),
        source_firewall_groups: sources.iter().map(IpSet::reference).collect(),
        destination_firewall_groups: vec![destinations.reference()],
        application_port_profiles: vec![EntityRef {
            name: Some(ports.name.clone()),
            id: ports.id.clone().unwrap_or_default(),
        }],
        // Either side of IPv6 needs the rule to match IPv6 too.
        ip_protocol: Some(
            if ranges.iter().any(SourceRange::is_ipv6)
                || exposure.addresses.iter().any(IpAddr::is_ipv6)
            {
                "IPV4_IPV6"
            } else {
                "IPV4"
            }
            .into(),
        ),
        action_value: Some("ALLOW".into()),
        direction: Some("IN".into()),
        logging: false,
        enabled: true,
        version: None,
        extra: Map::new(),
    };
    match found.rule {
        None => ops.push(FirewallOp::AddRule {
            rule: wanted,
            owner: owner.clone(),
        }),
        Some(current) => {
            wanted.id = current.id.clone();
            wanted.version = current.version;
            wanted.extra = current.extra.clone();
            if wanted != current {
                ops.push(FirewallOp::UpdateRule(wanted));
            }
        }
    }
    if let (None, Some(stale)) = (sources, found.sources) {
        ops.push(FirewallOp::DeleteGroup {
            id: stale.id.unwrap_or_default(),
            name: stale.name,
        });
    }
    Ok(ops)
}

/// The set as wanted; its write joins `ops` when it differs.
fn want_ip_set(
    ctx: &Context,
    owner: &OwnerTag,
    current: Option<IpSet>,
    name: &str,
    addresses: Vec<String>,
    ops: &mut Vec<FirewallOp>,
) -> IpSet {
    let set = match current {
        Some(set) if set.ip_addresses == addresses => return set,
        Some(mut set) => {
            set.ip_addresses = addresses;
            set
        }
        None => IpSet::new(name, &owner.format(), &ctx.gateway, addresses),
    };
    ops.push(FirewallOp::WriteGroup(set.clone()));
    set
}

/// The port profile as wanted; its write joins `ops` when it differs.
fn want_ports(
    ctx: &Context,
    owner: &OwnerTag,
    current: Option<PortProfile>,
    names: &Names,
    exposure: &Exposure,
    ops: &mut Vec<FirewallOp>,
) -> PortProfile {
    let ports = application_ports(&exposure.ports);
    let profile = match current {
        Some(profile) if profile.application_ports == ports => return profile,
        Some(mut profile) => {
            profile.application_ports = ports;
            profile
        }
        None => {
            let mut profile =
                PortProfile::tenant(&names.firewall_ports(), &ctx.org, &ctx.gateway_owner, ports);
            profile.description = Some(owner.format());
            profile
        }
    };
    ops.push(FirewallOp::WriteProfile(profile.clone()));
    profile
}

/// The firewall objects on the gateway with a description, as (kind,
/// name, description); the sweep reads their tags.
pub(in crate::lb) async fn firewall_descriptions(
    ctx: &Context,
) -> Result<Vec<(&'static str, String, String)>, LbError> {
    let sweep = |action: &str| LbError::vcd("(sweep)", action.to_string());
    let rules = ctx
        .client
        .firewall()
        .user_rules(&ctx.gateway.id)
        .await
        .map_err(sweep("reading the gateway firewall rules"))?;
    let sets = ctx
        .client
        .ip_sets()
        .list(&ctx.gateway.id, |n| n.starts_with(FIREWALL_PREFIX))
        .await
        .map_err(sweep("reading the gateway's IP sets"))?;
    let profiles = ctx
        .client
        .port_profiles()
        .list("TENANT")
        .await
        .map_err(sweep("reading the port profiles"))?;
    let text = |rule: &Value, key: &str| rule.get(key).and_then(Value::as_str).map(str::to_string);
    let rules = rules.iter().filter_map(|r| {
        let description = text(r, "description")?;
        Some((
            "firewall_rule",
            text(r, "name").unwrap_or_default(),
            description,
        ))
    });
    let sets = sets
        .into_iter()
        .filter_map(|s| Some(("ip_set", s.name, s.description?)));
    let profiles = profiles
        .into_iter()
        .filter(|p| p.name.starts_with(FIREWALL_PREFIX))
        .filter_map(|p| Some(("port_profile", p.name, p.description?)));
    Ok(rules.chain(sets).chain(profiles).collect())
}

/// The deletes of the Service's rule, then of the sets and the profile
/// it named.
pub(in crate::lb) async fn plan_firewall_removal(
    ctx: &Context,
    owner: &OwnerTag,
    names: &Names,
) -> Result<Vec<FirewallOp>, LbError> {
    let found = find_firewall(ctx, owner, names).await?;
    let mut ops = Vec::new();
    if let Some(rule) = found.rule
        && let Some(id) = rule.id
    {
        ops.push(FirewallOp::DeleteRule {
            id,
            name: rule.name,
        });
    }
    for set in found.sources.into_iter().chain(found.destinations) {
        ops.push(FirewallOp::DeleteGroup {
            id: set.id.unwrap_or_default(),
            name: set.name,
        });
    }
    if let Some(profile) = found.ports
        && let Some(id) = profile.id
    {
        ops.push(FirewallOp::DeleteProfile {
            id,
            name: profile.name,
        });
    }
    Ok(ops)
}

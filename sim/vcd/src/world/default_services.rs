//! VCD's default gateway services for IP Space uplinks (API 38.0, VCD
//! 10.5): on a gateway with an uplink to an IP Space that has them, a
//! NO SNAT rule (priority 1001), an SNAT rule (priority 1000) and a
//! firewall rule at the end of the user-defined list, per space. VCD owns
//! these rules (their ids are in `World::vcd_rules`), whatever their names: re-applying the
//! defaults deletes and recreates VCD's NAT rules (new ids), updates VCD's
//! firewall rules in place (a new version), creates what is missing and
//! never touches a rule a client created.

use std::net::IpAddr;

use serde::Serialize;

use super::firewall::{FirewallRule, FirewallRuleBody};
use super::hooks::HookError;
use super::ip_space::{ClaimedUsage, IpAllocation, IpSpace};
use super::nat::{NatRule, NatRuleBody, ObjectVersion};
use super::network::DeploymentMode;
use super::{World, find};
use crate::ids::{new_urn, new_uuid};

/// Priorities of VCD's default NAT rules (a lower value wins; rules
/// created by users default to 50).
pub const NO_SNAT_PRIORITY: i32 = 1001;
pub const SNAT_PRIORITY: i32 = 1000;

/// What marks the floating IP VCD allocates for a default SNAT rule.
const ALLOCATION_DESCRIPTION: &str = "Default gateway services";

/// One rule a re-application deleted, created or updated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleChange {
    /// `NAT` or `FIREWALL`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub name: String,
}

/// What applying the defaults to a gateway did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultsApplied {
    pub gateway_id: String,
    pub deleted: Vec<RuleChange>,
    pub created: Vec<RuleChange>,
    pub updated: Vec<RuleChange>,
}

fn change(kind: &'static str, id: Option<&str>, name: &str) -> RuleChange {
    RuleChange {
        kind,
        id: id.unwrap_or_default().to_string(),
        name: name.to_string(),
    }
}

fn nat_rule(
    name: String,
    kind: &str,
    priority: i32,
    external: String,
    internal: String,
) -> NatRuleBody {
    let mut body: NatRuleBody = serde_json::from_value(serde_json::json!({
        "name": name, "type": kind, "externalAddresses": external,
        "internalAddresses": internal, "priority": priority,
        "firewallMatch": "MATCH_INTERNAL_ADDRESS",
    }))
    .expect("a default NAT rule is a valid body");
    body.id = Some(new_uuid());
    body.version = Some(ObjectVersion { version: 0 });
    body
}

fn firewall_rule(space: &IpSpace) -> FirewallRuleBody {
    let protocol = match (space.has_family(false), space.has_family(true)) {
        (true, false) => "IPV4",
        (false, true) => "IPV6",
        _ => "IPV4_IPV6",
    };
    serde_json::from_value(serde_json::json!({
        "name": format!("DEFAULT_ALLOW_OUTBOUND_{}", space.name),
        "actionValue": "ALLOW", "direction": "OUT", "ipProtocol": protocol,
        "logging": false, "enabled": true,
    }))
    .expect("a default firewall rule is a valid body")
}

/// The IP Spaces with default gateway services the gateway reaches.
fn default_spaces(world: &World, gateway_id: &str) -> Vec<IpSpace> {
    let Some(gateway) = find(&world.gateways, gateway_id) else {
        return Vec::new();
    };
    if gateway.deployment_mode == DeploymentMode::DistributedOnly {
        return Vec::new();
    }
    gateway
        .ip_space_ids
        .iter()
        .filter_map(|id| find(&world.ip_spaces, id))
        .filter(|space| space.default_gateway_services)
        .cloned()
        .collect()
}

/// The IPv4 floating IP of the space's default SNAT rule on the
/// gateway: the one in use, else VCD's allocation to the org, else a
/// new allocation of the first free address.
fn default_snat_ip(
    world: &mut World,
    gateway_id: &str,
    space: &IpSpace,
    previous: &[NatRule],
) -> Option<IpAddr> {
    let org_id = world.gateway_org(gateway_id)?.to_string();
    let in_use = previous
        .iter()
        .filter(|r| r.body.kind() == "SNAT")
        .filter_map(|r| r.body.external_addresses.parse().ok())
        .find(|ip| space.contains(*ip));
    let allocated = || {
        world
            .ip_allocations
            .iter()
            .find(|a| {
                a.space_id == space.id
                    && a.org_id == org_id
                    && a.description == ALLOCATION_DESCRIPTION
            })
            .map(|a| a.value)
    };
    if let Some(ip) = in_use.or_else(allocated) {
        return Some(ip);
    }
    let taken = |ip: &IpAddr| {
        world
            .ip_allocations
            .iter()
            .any(|a| a.space_id == space.id && a.value == *ip)
    };
    let ip = space
        .ranges
        .iter()
        .flat_map(|r| r.range.addresses())
        .find(|ip| ip.is_ipv4() && !taken(ip))?;
    world.ip_allocations.push(IpAllocation {
        id: new_urn("ipSpaceIpAllocation"),
        space_id: space.id.clone(),
        org_id,
        value: ip,
        allocation_date: crate::tasks::now_rfc3339(),
        claimed: ClaimedUsage::Unused,
        description: ALLOCATION_DESCRIPTION.to_string(),
    });
    Some(ip)
}

/// Applies (or re-applies) VCD's default gateway services to a gateway,
/// as VCD does; rules of clients are left as they are.
pub fn apply(world: &mut World, gateway_id: &str) -> Result<DefaultsApplied, HookError> {
    let gateway_id = find(&world.gateways, gateway_id)
        .ok_or_else(|| HookError::NotFound {
            kind: "gateway",
            id: gateway_id.to_string(),
        })?
        .id
        .clone();
    let spaces = default_spaces(world, &gateway_id);
    let mut applied = DefaultsApplied {
        gateway_id: gateway_id.clone(),
        ..DefaultsApplied::default()
    };
    let vcd_rules = std::mem::take(&mut world.vcd_rules);
    let is_vcds = |id: Option<&str>| id.is_some_and(|id| vcd_rules.iter().any(|v| v == id));
    let (previous, kept): (Vec<NatRule>, Vec<NatRule>) = std::mem::take(&mut world.nat_rules)
        .into_iter()
        .partition(|r| r.gateway_id == gateway_id && is_vcds(r.body.id.as_deref()));
    world.nat_rules = kept;
    for rule in &previous {
        applied
            .deleted
            .push(change("NAT", rule.body.id.as_deref(), &rule.body.name));
    }
    for space in &spaces {
        let scope = space.internal_scope.join(",");
        let mut bodies = vec![nat_rule(
            format!("DEFAULT_NO_SNAT_{}", space.name),
            "NO_SNAT",
            NO_SNAT_PRIORITY,
            String::new(),
            scope.clone(),
        )];
        bodies[0].snat_destination_addresses = Some(scope);
        if let Some(ip) = default_snat_ip(world, &gateway_id, space, &previous) {
            let name = format!("DEFAULT_SNAT_{}", space.name);
            bodies.push(nat_rule(
                name,
                "SNAT",
                SNAT_PRIORITY,
                ip.to_string(),
                "0.0.0.0/0".into(),
            ));
        }
        for body in bodies {
            applied
                .created
                .push(change("NAT", body.id.as_deref(), &body.name));
            world.nat_rules.push(NatRule {
                gateway_id: gateway_id.clone(),
                body,
            });
        }
    }
    world.vcd_rules = vcd_rules;
    apply_default_firewall(world, &gateway_id, &spaces, &mut applied);
    // VCD's rules are those it created, less those gone since.
    let (nat, firewall) = (&world.nat_rules, &world.firewall_rules);
    let exists = |id: &String| find(nat, id).is_some() || find(firewall, id).is_some();
    let mut kept: Vec<String> = world
        .vcd_rules
        .iter()
        .filter(|id| exists(id))
        .cloned()
        .collect();
    for created in &applied.created {
        if !kept.contains(&created.id) {
            kept.push(created.id.clone());
        }
    }
    world.vcd_rules = kept;
    Ok(applied)
}

/// VCD's firewall rule per space: updated in place (a new version),
/// created at the end of the user-defined list when missing; VCD's
/// rules for spaces without defaults any more are deleted.
fn apply_default_firewall(
    world: &mut World,
    gateway_id: &str,
    spaces: &[IpSpace],
    applied: &mut DefaultsApplied,
) {
    let wanted: Vec<FirewallRuleBody> = spaces.iter().map(firewall_rule).collect();
    let vcd_rules = &world.vcd_rules;
    let ours = |r: &FirewallRule| {
        r.gateway_id == gateway_id
            && r.body
                .id
                .as_deref()
                .is_some_and(|id| vcd_rules.iter().any(|v| v == id))
    };
    world.firewall_rules.retain(|r| {
        let stale = ours(r) && !wanted.iter().any(|w| w.name == r.body.name);
        if stale {
            applied
                .deleted
                .push(change("FIREWALL", r.body.id.as_deref(), &r.body.name));
        }
        !stale
    });
    for mut body in wanted {
        let existing = world
            .firewall_rules
            .iter_mut()
            .find(|r| ours(r) && r.body.name == body.name);
        match existing {
            Some(rule) => {
                let version = rule.body.version.as_ref().map_or(0, |v| v.version);
                body.id = rule.body.id.clone();
                body.version = Some(ObjectVersion {
                    version: version + 1,
                });
                rule.body = body;
                applied
                    .updated
                    .push(change("FIREWALL", rule.body.id.as_deref(), &rule.body.name));
            }
            None => {
                body.id = Some(new_urn("firewallRule"));
                body.version = Some(ObjectVersion { version: 0 });
                applied
                    .created
                    .push(change("FIREWALL", body.id.as_deref(), &body.name));
                world.firewall_rules.push(FirewallRule {
                    gateway_id: gateway_id.to_string(),
                    body,
                });
            }
        }
    }
}

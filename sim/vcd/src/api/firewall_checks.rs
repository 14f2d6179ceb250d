//! What a gateway firewall write must satisfy, and how a rule is stored:
//! fields against their enums and limits, references (firewall groups of
//! the gateway, port profiles of its org), at most 1000 user-defined rules,
//! `version` checked as on NAT rules, the defaults VCD fills in, and the
//! default rule, of which only the action may change.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::world::firewall::{FirewallRuleBody, MAX_USER_RULES};
use crate::world::nat::ObjectVersion;
use crate::world::{World, find};

const ACTIONS: [&str; 3] = ["ALLOW", "DROP", "REJECT"];
const DIRECTIONS: [&str; 3] = ["IN", "OUT", "IN_OUT"];
const PROTOCOLS: [&str; 3] = ["IPV4", "IPV6", "IPV4_IPV6"];
/// The spec's `maxItems` of each group and profile list of a rule.
const MAX_REFS: usize = 128;
const MAX_COMMENTS: usize = 2048;

fn bad(message: String) -> ApiError {
    ApiError::bad_request(message)
}

fn one_of(field: &str, value: Option<&str>, allowed: &[&str]) -> ApiResult<()> {
    match value {
        Some(v) if !allowed.contains(&v) => Err(bad(format!(
            "Invalid {field} '{v}'; allowed: {}.",
            allowed.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A rule's fields and references, as VCD checks them on write.
pub(super) fn validate(world: &World, gateway_id: &str, rule: &FirewallRuleBody) -> ApiResult<()> {
    let name = &rule.name;
    if name.trim().is_empty() {
        return Err(bad("A firewall rule needs a name.".into()));
    }
    if rule.action().is_none() {
        return Err(bad(format!(
            "Firewall rule {name} needs actionValue (or action)."
        )));
    }
    one_of("actionValue", rule.action_value.as_deref(), &ACTIONS)?;
    one_of("action", rule.action.as_deref(), &ACTIONS[..2])?;
    one_of("direction", rule.direction.as_deref(), &DIRECTIONS)?;
    one_of("ipProtocol", rule.ip_protocol.as_deref(), &PROTOCOLS)?;
    let lists = [
        ("sourceFirewallGroups", &rule.source_firewall_groups),
        (
            "destinationFirewallGroups",
            &rule.destination_firewall_groups,
        ),
        ("applicationPortProfiles", &rule.application_port_profiles),
    ];
    for (field, list) in lists {
        let count = list.as_ref().map_or(0, Vec::len);
        if count > MAX_REFS {
            return Err(bad(format!(
                "Firewall rule {name} has {count} {field}; at most {MAX_REFS} are allowed."
            )));
        }
    }
    if rule
        .comments
        .as_ref()
        .is_some_and(|c| c.len() > MAX_COMMENTS)
    {
        return Err(bad(format!(
            "The comments of firewall rule {name} exceed {MAX_COMMENTS} characters."
        )));
    }
    for group in rule.groups() {
        let owned =
            find(&world.firewall_groups, &group.id).is_some_and(|g| g.gateway_id == gateway_id);
        if !owned {
            return Err(bad(format!(
                "Firewall group {} does not exist on this edge gateway.",
                group.id
            )));
        }
    }
    for profile in rule.application_port_profiles.iter().flatten() {
        if !world.profile_usable_on(&profile.id, gateway_id) {
            return Err(bad(format!(
                "Application port profile {} does not exist.",
                profile.id
            )));
        }
    }
    // Neither network context profiles nor service interfaces exist in
    // vcdsim's world, so any reference to one names nothing.
    if let Some(profile) = rule.network_context_profiles.iter().flatten().next() {
        return Err(bad(format!(
            "Network context profile {} does not exist.",
            profile.id
        )));
    }
    if let Some(network) = &rule.applied_to {
        return Err(bad(format!(
            "Network {} is not a service interface of this edge gateway.",
            network.id
        )));
    }
    Ok(())
}

/// The stored version of user-defined rule `id` of the gateway, if any.
pub(super) fn stored_version(world: &World, gateway_id: &str, id: &str) -> Option<i64> {
    find(&world.firewall_rules, id)
        .filter(|r| r.gateway_id == gateway_id)
        .map(|r| r.body.version.as_ref().map_or(0, |v| v.version))
}

fn require_version(rule: &FirewallRuleBody, current: i64) -> ApiResult<()> {
    match &rule.version {
        Some(v) if v.version == current => Ok(()),
        Some(v) => Err(bad(format!(
            "The firewall rule {} was changed by someone else: version {} is not the current version {current}.",
            rule.name, v.version
        ))),
        None => Err(bad(format!(
            "The version of firewall rule {} is required on update.",
            rule.name
        ))),
    }
}

/// A rule naming an existing rule of the gateway must carry its version.
pub(super) fn check_version(
    world: &World,
    gateway_id: &str,
    rule: &FirewallRuleBody,
) -> ApiResult<()> {
    let current = rule
        .id
        .as_deref()
        .and_then(|id| stored_version(world, gateway_id, id));
    current.map_or(Ok(()), |current| require_version(rule, current))
}

/// The user-defined list of a whole-list PUT.
pub(super) fn check_list(
    world: &World,
    gateway_id: &str,
    rules: &[FirewallRuleBody],
) -> ApiResult<()> {
    if rules.len() > MAX_USER_RULES {
        return Err(bad(format!(
            "An edge gateway holds at most {MAX_USER_RULES} user-defined firewall rules; {} were given.",
            rules.len()
        )));
    }
    let mut seen: Vec<&str> = Vec::new();
    for id in rules.iter().filter_map(|r| r.id.as_deref()) {
        if seen.iter().any(|s| same_id(s, id)) {
            return Err(bad(format!(
                "Firewall rule {id} appears twice in the list."
            )));
        }
        seen.push(id);
    }
    for rule in rules {
        validate(world, gateway_id, rule)?;
        check_version(world, gateway_id, rule)?;
    }
    Ok(())
}

/// The rule with the defaults VCD fills in (`actionValue` from the
/// deprecated `action` when only that is given).
fn normalized(mut rule: FirewallRuleBody) -> FirewallRuleBody {
    rule.action_value = rule.action().map(str::to_string);
    rule.ip_protocol.get_or_insert_with(|| "IPV4_IPV6".into());
    rule.direction.get_or_insert_with(|| "IN_OUT".into());
    rule.logging.get_or_insert(false);
    rule.enabled.get_or_insert(true);
    rule
}

/// `rule` as stored: a rule of the gateway it leaves as it is stays
/// byte for byte, one it changes becomes its next version; anything else is
/// a new rule at version 0 with a new id (whatever id it named).
pub(super) fn stored(world: &World, gateway_id: &str, rule: FirewallRuleBody) -> FirewallRuleBody {
    let existing = rule
        .id
        .as_deref()
        .and_then(|id| find(&world.firewall_rules, id))
        .filter(|r| r.gateway_id == gateway_id);
    let mut rule = normalized(rule);
    let Some(current) = existing else {
        rule.id = Some(new_urn("firewallRule"));
        rule.version = Some(ObjectVersion { version: 0 });
        return rule;
    };
    rule.id = current.body.id.clone();
    rule.version = current.body.version.clone();
    if rule == normalized(current.body.clone()) {
        return current.body.clone();
    }
    let version = current.body.version.as_ref().map_or(0, |v| v.version);
    rule.version = Some(ObjectVersion {
        version: version + 1,
    });
    rule
}

/// The default rules of a PUT: the gateway's one default rule, at its
/// current version, changed in its action alone.
pub(super) fn check_default(
    world: &World,
    gateway_id: &str,
    rules: &[FirewallRuleBody],
) -> ApiResult<()> {
    let [rule] = rules else {
        return Err(bad(format!(
            "An edge gateway has one default firewall rule; {} were given.",
            rules.len()
        )));
    };
    let current = &find(&world.gateway_firewalls, gateway_id)
        .ok_or_else(|| ApiError::forbidden(gateway_id))?
        .default_rule;
    let id = rule.id.as_deref().unwrap_or_default();
    if !same_id(current.id.as_deref().unwrap_or_default(), id) {
        return Err(bad(format!(
            "{id:?} is not the default firewall rule of this edge gateway."
        )));
    }
    require_version(rule, current.version.as_ref().map_or(0, |v| v.version))?;
    one_of("actionValue", rule.action_value.as_deref(), &ACTIONS)?;
    one_of("action", rule.action.as_deref(), &ACTIONS[..2])?;
    let (sent, stored) = (serde_json::to_value(rule), serde_json::to_value(current));
    let (Ok(Value::Object(sent)), Ok(stored)) = (sent, stored) else {
        return Err(bad("The default firewall rule cannot be read.".into()));
    };
    let fixed = ["id", "version", "action", "actionValue"];
    match sent.iter().find(|(key, value)| {
        !value.is_null()
            && !fixed.contains(&key.as_str())
            && stored.get(key.as_str()) != Some(*value)
    }) {
        Some((key, _)) => Err(bad(format!(
            "Only the action of the default firewall rule can change, not {key}."
        ))),
        None => Ok(()),
    }
}

/// Applies a checked default rule: its action, and the next version when
/// that changed.
pub(super) fn apply_default(world: &mut World, gateway_id: &str, rule: &FirewallRuleBody) {
    let Some(firewall) = world
        .gateway_firewalls
        .iter_mut()
        .find(|f| f.gateway_id == gateway_id)
    else {
        return;
    };
    let current = &mut firewall.default_rule;
    let action = rule.action().map(str::to_string);
    if action.is_none() || action == current.action_value {
        return;
    }
    current.action_value = action;
    let version = current.version.as_ref().map_or(0, |v| v.version) + 1;
    current.version = Some(ObjectVersion { version });
}

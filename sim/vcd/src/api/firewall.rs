//! The edge gateway firewall: `GET`/`PUT` of the whole rule set (only the
//! user-defined list changes; rules are created only this way) and
//! `GET`/`PUT`/`DELETE` of one user-defined rule. Writes are gateway-scoped
//! tasks (`BUSY_ENTITY` while another runs); `version` is checked as on NAT
//! rules. System and default rules are fixed: one system rule, and a
//! default rule that drops everything the user-defined rules do not allow.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::gateways::visible_gateway;
use super::parse_body;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::firewall::{FirewallRule, FirewallRuleBody, FirewallRulesBody, MAX_USER_RULES};
use crate::world::nat::ObjectVersion;
use crate::world::task::TaskOwner;
use crate::world::{World, find, find_mut};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules",
            get(get_rules).put(put_rules),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules/{rule}",
            get(get_rule).put(put_rule).delete(delete_rule),
        )
}

fn fixed_rule(gateway_id: &str, kind: &str, name: &str, action: &str) -> Value {
    let uuid = gateway_id.rsplit(':').next().unwrap_or(gateway_id);
    json!({
        "id": format!("{kind}-{uuid}"),
        "name": name,
        "description": null,
        "ipProtocol": "IPV4_IPV6",
        "action": action,
        "actionValue": action,
        "direction": "IN_OUT",
        "logging": false,
        "enabled": true,
        "version": {"version": 0},
    })
}

fn rule_view(rule: &FirewallRuleBody) -> Value {
    json!(rule)
}

fn rules_view(world: &World, gateway_id: &str) -> Value {
    let user: Vec<Value> = world
        .firewall_rules
        .iter()
        .filter(|r| r.gateway_id == gateway_id)
        .map(|r| rule_view(&r.body))
        .collect();
    json!({
        "status": "REALIZED",
        "systemRules": [fixed_rule(gateway_id, "system", "Allow ALB health monitors", "ALLOW")],
        "userDefinedRules": user,
        "defaultRules": [fixed_rule(gateway_id, "default", "default_rule", "DROP")],
    })
}

const ACTIONS: [&str; 3] = ["ALLOW", "DROP", "REJECT"];
const DIRECTIONS: [&str; 3] = ["IN", "OUT", "IN_OUT"];
const PROTOCOLS: [&str; 3] = ["IPV4", "IPV6", "IPV4_IPV6"];

fn one_of(field: &str, value: Option<&String>, allowed: &[&str]) -> ApiResult<()> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(ApiError::bad_request(format!(
            "Invalid {field} '{v}'; allowed: {}.",
            allowed.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A rule's fields and references, as VCD checks them on write.
fn validate(world: &World, gateway_id: &str, rule: &FirewallRuleBody) -> ApiResult<()> {
    if rule.name.trim().is_empty() {
        return Err(ApiError::bad_request("A firewall rule needs a name."));
    }
    one_of("actionValue", rule.action_value.as_ref(), &ACTIONS)?;
    one_of("action", rule.action.as_ref(), &ACTIONS[..2])?;
    one_of("direction", rule.direction.as_ref(), &DIRECTIONS)?;
    one_of("ipProtocol", rule.ip_protocol.as_ref(), &PROTOCOLS)?;
    for group in rule.groups() {
        let owned =
            find(&world.firewall_groups, &group.id).is_some_and(|g| g.gateway_id == gateway_id);
        if !owned {
            return Err(ApiError::bad_request(format!(
                "Firewall group {} does not exist on this edge gateway.",
                group.id
            )));
        }
    }
    let gateway_org = world.gateway_org(gateway_id);
    for profile in rule.application_port_profiles.iter().flatten() {
        let usable = find(&world.port_profiles, &profile.id).is_some_and(|p| {
            p.org_ref
                .as_ref()
                .is_none_or(|o| Some(o.id.as_str()) == gateway_org)
        });
        if !usable {
            return Err(ApiError::bad_request(format!(
                "Application port profile {} does not exist.",
                profile.id
            )));
        }
    }
    Ok(())
}

/// The stored version of rule `id` on the gateway, if it exists.
fn stored_version(world: &World, gateway_id: &str, id: &str) -> Option<i64> {
    find(&world.firewall_rules, id)
        .filter(|r| r.gateway_id == gateway_id)
        .map(|r| r.body.version.as_ref().map_or(0, |v| v.version))
}

fn check_version(world: &World, gateway_id: &str, rule: &FirewallRuleBody) -> ApiResult<()> {
    let Some(id) = rule.id.as_deref() else {
        return Ok(());
    };
    let Some(current) = stored_version(world, gateway_id, id) else {
        return Ok(());
    };
    match &rule.version {
        Some(v) if v.version == current => Ok(()),
        Some(v) => Err(ApiError::bad_request(format!(
            "The firewall rule {} was changed by someone else: version {} is not the current version {current}.",
            rule.name, v.version
        ))),
        None => Err(ApiError::bad_request(format!(
            "The version of firewall rule {} is required on update.",
            rule.name
        ))),
    }
}

fn check_list(world: &World, gateway_id: &str, rules: &[FirewallRuleBody]) -> ApiResult<()> {
    if rules.len() > MAX_USER_RULES {
        return Err(ApiError::bad_request(format!(
            "An edge gateway holds at most {MAX_USER_RULES} user-defined firewall rules; {} were given.",
            rules.len()
        )));
    }
    for rule in rules {
        validate(world, gateway_id, rule)?;
        check_version(world, gateway_id, rule)?;
    }
    Ok(())
}

/// Stores `rule` as the next version of itself (or a new rule).
fn stored(world: &World, gateway_id: &str, mut rule: FirewallRuleBody) -> FirewallRuleBody {
    let id = rule.id.clone().unwrap_or_else(|| new_urn("firewallRule"));
    let next = match stored_version(world, gateway_id, &id) {
        Some(current) => {
            let same = find(&world.firewall_rules, &id).is_some_and(|r| {
                FirewallRuleBody {
                    version: None,
                    ..r.body.clone()
                } == FirewallRuleBody {
                    version: None,
                    id: Some(id.clone()),
                    ..rule.clone()
                }
            });
            if same { current } else { current + 1 }
        }
        None => 0,
    };
    rule.id = Some(id);
    rule.version = Some(ObjectVersion { version: next });
    rule
}

fn owner(gateway_id: &str, name: &str) -> TaskOwner {
    TaskOwner {
        id: gateway_id.to_string(),
        name: name.to_string(),
        href_path: format!("/edgeGateways/{gateway_id}/firewall/rules"),
        media_type: "application/json".to_string(),
    }
}

fn gateway_of(state: &AppState, principal: &Principal, id: &str) -> ApiResult<(String, String)> {
    let world = state.world();
    let gateway = visible_gateway(&world, principal, id)?;
    Ok((gateway.id.clone(), gateway.org_id.clone()))
}

async fn get_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let gateway = visible_gateway(&world, &principal, &id)?;
    Ok(respond::ok(&rules_view(&world, &gateway.id)))
}

async fn put_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body: FirewallRulesBody = parse_body(&body)?;
    let rules = body.user_defined_rules.unwrap_or_default();
    let (gateway_id, org_id) = gateway_of(&state, &principal, &id)?;
    let request = TaskRequest {
        operation_name: "updateEdgeGatewayFirewallRules",
        operation: "Updating edge gateway firewall rules".to_string(),
        gateway_id: Some(gateway_id.clone()),
        owner: owner(&gateway_id, "firewall"),
        org_id,
    };
    let (check_rules, check_gateway) = (rules.clone(), gateway_id.clone());
    let effect: tasks::Effect = Box::new(move |world| {
        check_list(world, &gateway_id, &rules)?;
        let replaced: Vec<FirewallRule> = rules
            .into_iter()
            .map(|rule| FirewallRule {
                gateway_id: gateway_id.clone(),
                body: stored(world, &gateway_id, rule),
            })
            .collect();
        world.firewall_rules.retain(|r| r.gateway_id != gateway_id);
        world.firewall_rules.extend(replaced);
        Ok(None)
    });
    let check = move |w: &World| check_list(w, &check_gateway, &check_rules);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

fn visible_rule<'a>(
    world: &'a World,
    principal: &Principal,
    gateway_id: &str,
    rule_id: &str,
) -> ApiResult<&'a FirewallRule> {
    let gateway = visible_gateway(world, principal, gateway_id)?;
    find(&world.firewall_rules, rule_id)
        .filter(|r| r.gateway_id == gateway.id)
        .ok_or_else(|| ApiError::not_found(&format!("firewall rule {rule_id}")))
}

async fn get_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let world = state.world();
    let rule = visible_rule(&world, &principal, &id, &rule_id)?;
    Ok(respond::ok(&rule_view(&rule.body)))
}

async fn put_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut rule: FirewallRuleBody = parse_body(&body)?;
    let (gateway_id, org_id, rule_id) = {
        let world = state.world();
        let existing = visible_rule(&world, &principal, &id, &rule_id)?;
        let org = world
            .gateway_org(&existing.gateway_id)
            .unwrap_or_default()
            .to_string();
        (
            existing.gateway_id.clone(),
            org,
            existing.body.id.clone().unwrap_or_default(),
        )
    };
    if rule.version.is_none() {
        return Err(ApiError::bad_request(format!(
            "The version of firewall rule {} is required on update.",
            rule.name
        )));
    }
    rule.id = Some(rule_id.clone());
    let request = TaskRequest {
        operation_name: "updateEdgeGatewayFirewallRule",
        operation: format!("Updating firewall rule {}", rule.name),
        gateway_id: Some(gateway_id.clone()),
        owner: owner(&gateway_id, &rule.name),
        org_id,
    };
    let (check_rule, check_gateway) = (rule.clone(), gateway_id.clone());
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &gateway_id, &rule)?;
        check_version(world, &gateway_id, &rule)?;
        let next = stored(world, &gateway_id, rule);
        let slot = find_mut(&mut world.firewall_rules, &rule_id)
            .ok_or_else(|| ApiError::not_found("firewall rule"))?;
        slot.body = next;
        Ok(None)
    });
    let check = move |w: &World| {
        validate(w, &check_gateway, &check_rule)?;
        check_version(w, &check_gateway, &check_rule)
    };
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn delete_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (gateway_id, org_id, rule_id, name) = {
        let world = state.world();
        let existing = visible_rule(&world, &principal, &id, &rule_id)?;
        let org = world
            .gateway_org(&existing.gateway_id)
            .unwrap_or_default()
            .to_string();
        let rule_id = existing.body.id.clone().unwrap_or_default();
        (
            existing.gateway_id.clone(),
            org,
            rule_id,
            existing.body.name.clone(),
        )
    };
    let request = TaskRequest {
        operation_name: "deleteEdgeGatewayFirewallRule",
        operation: format!("Deleting firewall rule {name}"),
        gateway_id: Some(gateway_id.clone()),
        owner: owner(&gateway_id, &name),
        org_id,
    };
    let effect: tasks::Effect = Box::new(move |world| {
        world.firewall_rules.retain(|r| {
            !(r.gateway_id == gateway_id
                && same_id(r.body.id.as_deref().unwrap_or_default(), &rule_id))
        });
        Ok(None)
    });
    let task_id = tasks::submit(&state, &principal, request, |_| Ok(()), effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

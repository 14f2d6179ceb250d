//! The edge gateway firewall: `GET`/`PUT` of the whole rule set and
//! `GET`/`PUT`/`DELETE` of one rule. A list PUT replaces the user-defined
//! rules in the order given (the only way to create one) and may change the
//! default rule's action; system rules are read-only. Writes are
//! gateway-scoped tasks (`BUSY_ENTITY` while another runs). The checks live
//! in `firewall_checks`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::firewall_checks::{
    apply_default, check_default, check_list, check_version, stored, validate,
};
use super::gateways::service_router_gateway;
use super::parse_body;
use super::task_writes::{submit_checked, task_owner};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::same_id;
use crate::respond;
use crate::state::AppState;
use crate::tasks::TaskRequest;
use crate::world::firewall::{FirewallRule, FirewallRuleBody, FirewallRulesBody};
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

const FIREWALL: &str = "The gateway firewall";

fn rules_view(world: &World, gateway_id: &str) -> Value {
    let user: Vec<&FirewallRuleBody> = world
        .firewall_rules
        .iter()
        .filter(|r| r.gateway_id == gateway_id)
        .map(|r| &r.body)
        .collect();
    let fixed = find(&world.gateway_firewalls, gateway_id);
    json!({
        "status": "REALIZED",
        "systemRules": fixed.map(|f| [&f.system_rule]),
        "userDefinedRules": user,
        "defaultRules": fixed.map(|f| [&f.default_rule]),
    })
}

/// Where a rule id lands on a gateway.
enum Slot {
    User(FirewallRuleBody),
    System(FirewallRuleBody),
    Default(FirewallRuleBody),
}

impl Slot {
    fn body(&self) -> &FirewallRuleBody {
        match self {
            Slot::User(body) | Slot::System(body) | Slot::Default(body) => body,
        }
    }
}

/// The gateway (id, org) and the rule `rule_id` on it.
fn visible_rule(
    world: &World,
    principal: &Principal,
    gateway_id: &str,
    rule_id: &str,
) -> ApiResult<(String, String, Slot)> {
    let gateway = service_router_gateway(world, principal, gateway_id, FIREWALL)?;
    let is = |body: &FirewallRuleBody| same_id(body.id.as_deref().unwrap_or_default(), rule_id);
    let user = world
        .firewall_rules
        .iter()
        .find(|r| r.gateway_id == gateway.id && is(&r.body));
    let fixed = find(&world.gateway_firewalls, &gateway.id);
    let slot = match (user, fixed) {
        (Some(rule), _) => Slot::User(rule.body.clone()),
        (None, Some(f)) if is(&f.system_rule) => Slot::System(f.system_rule.clone()),
        (None, Some(f)) if is(&f.default_rule) => Slot::Default(f.default_rule.clone()),
        _ => return Err(ApiError::not_found(&format!("Firewall rule {rule_id}"))),
    };
    Ok((gateway.id.clone(), gateway.org_id.clone(), slot))
}

/// Firewall writes are tasks of the gateway.
fn request(
    operation_name: &'static str,
    operation: String,
    gateway: (String, String),
) -> TaskRequest {
    let (gateway_id, org_id) = gateway;
    TaskRequest {
        operation_name,
        operation,
        owner: task_owner(
            format!("/edgeGateways/{gateway_id}/firewall/rules"),
            &gateway_id,
            "firewall",
        ),
        gateway_id: Some(gateway_id),
        org_id,
    }
}

async fn get_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let gateway = service_router_gateway(&world, &principal, &id, FIREWALL)?;
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
    // An absent or empty default list leaves the default rule as it is.
    let defaults = body.default_rules.filter(|d| !d.is_empty());
    let gateway = {
        let world = state.world();
        let gateway = service_router_gateway(&world, &principal, &id, FIREWALL)?;
        (gateway.id.clone(), gateway.org_id.clone())
    };
    let gateway_id = gateway.0.clone();
    let request = request(
        "updateEdgeGatewayFirewallRules",
        "Updating edge gateway firewall rules".to_string(),
        gateway,
    );
    let check = {
        let (rules, defaults, gateway_id) = (rules.clone(), defaults.clone(), gateway_id.clone());
        move |w: &World| {
            check_list(w, &gateway_id, &rules)?;
            defaults
                .as_deref()
                .map_or(Ok(()), |d| check_default(w, &gateway_id, d))
        }
    };
    let apply = move |world: &mut World| {
        if let Some(defaults) = &defaults {
            apply_default(world, &gateway_id, &defaults[0]);
        }
        let replaced: Vec<FirewallRule> = rules
            .into_iter()
            .map(|rule| FirewallRule {
                gateway_id: gateway_id.clone(),
                body: stored(world, &gateway_id, rule),
            })
            .collect();
        world.firewall_rules.retain(|r| r.gateway_id != gateway_id);
        world.firewall_rules.extend(replaced);
        Ok(())
    };
    submit_checked(&state, &principal, request, check, apply).await
}

async fn get_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let world = state.world();
    let (_, _, slot) = visible_rule(&world, &principal, &id, &rule_id)?;
    Ok(respond::ok(slot.body()))
}

async fn put_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut rule: FirewallRuleBody = parse_body(&body)?;
    let (gateway_id, org_id, slot) = {
        let world = state.world();
        visible_rule(&world, &principal, &id, &rule_id)?
    };
    rule.id = slot.body().id.clone();
    let is_default = match slot {
        Slot::System(_) => {
            return Err(ApiError::bad_request(
                "System firewall rules are read-only.",
            ));
        }
        Slot::Default(_) => true,
        Slot::User(_) => false,
    };
    if rule.version.is_none() {
        return Err(ApiError::bad_request(format!(
            "The version of firewall rule {} is required on update.",
            rule.name
        )));
    }
    let request = request(
        "updateEdgeGatewayFirewallRule",
        format!("Updating firewall rule {}", rule.name),
        (gateway_id.clone(), org_id),
    );
    let check = {
        let (rule, gateway_id) = (rule.clone(), gateway_id.clone());
        move |w: &World| match is_default {
            true => check_default(w, &gateway_id, std::slice::from_ref(&rule)),
            false => {
                validate(w, &gateway_id, &rule).and_then(|()| check_version(w, &gateway_id, &rule))
            }
        }
    };
    let apply = move |world: &mut World| {
        if is_default {
            apply_default(world, &gateway_id, &rule);
            return Ok(());
        }
        let rule_id = rule.id.clone().unwrap_or_default();
        let next = stored(world, &gateway_id, rule);
        let slot = find_mut(&mut world.firewall_rules, &rule_id)
            .ok_or_else(|| ApiError::not_found("Firewall rule"))?;
        slot.body = next;
        Ok(())
    };
    submit_checked(&state, &principal, request, check, apply).await
}

async fn delete_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (gateway_id, org_id, slot) = {
        let world = state.world();
        visible_rule(&world, &principal, &id, &rule_id)?
    };
    let Slot::User(rule) = slot else {
        return Err(ApiError::bad_request(
            "System and default firewall rules cannot be deleted.",
        ));
    };
    let rule_id = rule.id.unwrap_or_default();
    let request = request(
        "deleteEdgeGatewayFirewallRule",
        format!("Deleting firewall rule {}", rule.name),
        (gateway_id.clone(), org_id),
    );
    let apply = move |world: &mut World| {
        world.firewall_rules.retain(|r| {
            !(r.gateway_id == gateway_id
                && same_id(r.body.id.as_deref().unwrap_or_default(), &rule_id))
        });
        Ok(())
    };
    submit_checked(&state, &principal, request, |_| Ok(()), apply).await
}

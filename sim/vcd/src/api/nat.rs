//! NAT rules of a gateway: cursor-paged list, writes as gateway-scoped
//! tasks, optimistic locking through `version`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::gateways::service_router_gateway;
use super::task_writes::{submit_checked, task_owner};
use super::{Params, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::new_uuid;
use crate::paging::{ListParams, STANDARD, cursor_page};
use crate::respond;
use crate::state::AppState;
use crate::tasks::TaskRequest;
use crate::world::ip::parse_ipv4;
use crate::world::nat::{NatRule, NatRuleBody, ObjectVersion};
use crate::world::{Keyed, World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules",
            get(list_rules).post(create_rule),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules/{rule}",
            get(get_rule).put(update_rule).delete(delete_rule),
        )
}

const KINDS: [&str; 5] = ["DNAT", "SNAT", "NO_DNAT", "NO_SNAT", "REFLEXIVE"];

/// Reads return both the deprecated `ruleType` and `type`.
fn rule_view(rule: &NatRule) -> Value {
    let mut body = rule.body.clone();
    let kind = body.kind().to_string();
    body.nat_type = Some(kind.clone());
    body.rule_type = (kind != "REFLEXIVE").then_some(kind);
    json!(body)
}

fn validate(world: &World, gateway_id: &str, body: &NatRuleBody, strict: bool) -> ApiResult<()> {
    let kind = body.kind();
    if !KINDS.contains(&kind) {
        return Err(ApiError::bad_request(format!(
            "Invalid NAT rule type {kind}."
        )));
    }
    if body.name.trim().is_empty() {
        return Err(ApiError::bad_request("A NAT rule needs a name."));
    }
    if let Some(port) = &body.dnat_external_port {
        let valid = port == "ANY" || port.split('-').all(|p| p.trim().parse::<u16>().is_ok());
        if !valid {
            return Err(ApiError::bad_request(format!(
                "Invalid dnatExternalPort '{port}'."
            )));
        }
    }
    if let Some(profile) = &body.application_port_profile
        && !world.profile_usable_on(&profile.id, gateway_id)
    {
        return Err(ApiError::bad_request(format!(
            "Application port profile {} does not exist.",
            profile.id
        )));
    }
    if strict && matches!(kind, "DNAT" | "SNAT" | "REFLEXIVE") {
        let gateway =
            find(&world.gateways, gateway_id).ok_or_else(|| ApiError::forbidden(gateway_id))?;
        let ip = parse_ipv4(&body.external_addresses)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        if !world.is_external_ip(gateway, ip.into()) {
            return Err(ApiError::bad_request(format!(
                "External address {ip} is not allocated to edge gateway {}.",
                gateway.name
            )));
        }
    }
    Ok(())
}

/// A task of the rule's gateway, owned by the rule, e.g. `Creating NAT rule web`.
fn rule_task(
    (operation_name, doing): (&'static str, &str),
    rule: &NatRule,
    org_id: String,
) -> TaskRequest {
    let rule_id = rule.key();
    let href = format!("/edgeGateways/{}/nat/rules/{rule_id}", rule.gateway_id);
    TaskRequest {
        operation_name,
        operation: format!("{doing} NAT rule {}", rule.body.name),
        gateway_id: Some(rule.gateway_id.clone()),
        owner: task_owner(href, rule_id, &rule.body.name),
        org_id,
    }
}

async fn list_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let (items, gateway_id) = {
        let world = state.world();
        let gateway = service_router_gateway(&world, &principal, &id, "NAT")?;
        let items: Vec<Value> = world
            .nat_rules
            .iter()
            .filter(|r| r.gateway_id == gateway.id)
            .map(rule_view)
            .collect();
        (items, gateway.id.clone())
    };
    let list_params = ListParams::parse(&params.0, STANDARD)?;
    let selected = list_params.select(items, None);
    let url = state.cloudapi_url(&format!("/edgeGateways/{gateway_id}/nat/rules"));
    let (values, next) = cursor_page(selected, &list_params, &url);
    let mut response = respond::ok(&json!({"status": "REALIZED", "values": values}));
    if let Some(link) = next.and_then(|l| axum::http::HeaderValue::from_str(&l).ok()) {
        response
            .headers_mut()
            .append(axum::http::header::LINK, link);
    }
    Ok(response)
}

async fn create_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body: NatRuleBody = parse_body(&body)?;
    let strict = state.knobs().strict_external_ips;
    let (gateway_id, org_id) = {
        let world = state.world();
        let gateway = service_router_gateway(&world, &principal, &id, "NAT")?;
        (gateway.id.clone(), gateway.org_id.clone())
    };
    body.id = Some(new_uuid());
    body.version = Some(ObjectVersion { version: 0 });
    let rule = NatRule { gateway_id, body };
    let request = rule_task(("createNatRule", "Creating"), &rule, org_id);
    let checked = rule.clone();
    let check = move |w: &World| validate(w, &checked.gateway_id, &checked.body, strict);
    let apply = move |world: &mut World| {
        world.nat_rules.push(rule);
        Ok(())
    };
    submit_checked(&state, &principal, request, check, apply).await
}

fn visible_rule<'a>(
    world: &'a World,
    principal: &Principal,
    gateway_id: &str,
    rule_id: &str,
) -> ApiResult<&'a NatRule> {
    let gateway = service_router_gateway(world, principal, gateway_id, "NAT")?;
    find(&world.nat_rules, rule_id)
        .filter(|r| r.gateway_id == gateway.id)
        .ok_or_else(|| ApiError::not_found(&format!("NAT rule {rule_id}")))
}

/// A rule the principal sees and the org of its gateway.
fn existing_rule(
    state: &AppState,
    principal: &Principal,
    gateway_id: &str,
    rule_id: &str,
) -> ApiResult<(NatRule, String)> {
    let world = state.world();
    let rule = visible_rule(&world, principal, gateway_id, rule_id)?;
    let org_id = world.gateway_org(&rule.gateway_id).unwrap_or_default();
    Ok((rule.clone(), org_id.to_string()))
}

async fn get_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(&rule_view(visible_rule(
        &world, &principal, &id, &rule_id,
    )?)))
}

fn check_version(world: &World, rule_id: &str, body: &NatRuleBody) -> ApiResult<()> {
    let current = find(&world.nat_rules, rule_id)
        .and_then(|r| r.body.version.as_ref())
        .map_or(0, |v| v.version);
    match &body.version {
        Some(v) if v.version == current => Ok(()),
        Some(v) => Err(ApiError::bad_request(format!(
            "The NAT rule was changed by someone else: version {} is not the current version {current}.",
            v.version
        ))),
        None => Err(ApiError::bad_request(
            "The version of the NAT rule is required on update.",
        )),
    }
}

async fn update_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body: NatRuleBody = parse_body(&body)?;
    let strict = state.knobs().strict_external_ips;
    let (existing, org_id) = existing_rule(&state, &principal, &id, &rule_id)?;
    body.id = Some(existing.key().to_string());
    let rule = NatRule {
        gateway_id: existing.gateway_id,
        body,
    };
    let request = rule_task(("updateNatRule", "Updating"), &rule, org_id);
    let checked = rule.clone();
    let check = move |w: &World| {
        validate(w, &checked.gateway_id, &checked.body, strict)?;
        check_version(w, checked.key(), &checked.body)
    };
    let apply = move |world: &mut World| {
        let stored = find_mut(&mut world.nat_rules, rule.key())
            .ok_or_else(|| ApiError::not_found("NAT rule"))?;
        let next = stored.body.version.as_ref().map_or(0, |v| v.version) + 1;
        stored.body = NatRuleBody {
            version: Some(ObjectVersion { version: next }),
            ..rule.body
        };
        Ok(())
    };
    submit_checked(&state, &principal, request, check, apply).await
}

async fn delete_rule(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, rule_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (rule, org_id) = existing_rule(&state, &principal, &id, &rule_id)?;
    let request = rule_task(("deleteNatRule", "Deleting"), &rule, org_id);
    let apply = move |world: &mut World| {
        remove(&mut world.nat_rules, rule.key());
        Ok(())
    };
    submit_checked(&state, &principal, request, |_| Ok(()), apply).await
}

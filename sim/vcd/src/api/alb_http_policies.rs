//! `GET`/`PUT /cloudapi/1.0.0/loadBalancer/virtualServices/{id}/httpPolicy/{requestRules,responseRules,securityRules}`
//! (API 38.0+): `{"values": [rule, ...]}`; a PUT replaces the whole
//! ordered list, as a task of the gateway like other load-balancer writes.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::parse_body;
use crate::auth::Principal;
use crate::context;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::http_rules::HttpPolicies;
use crate::world::http_rules::{RequestRule, ResponseRule, SecurityRule};
use crate::world::task::TaskOwner;
use crate::world::{World, find, find_mut};

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/cloudapi/1.0.0/loadBalancer/virtualServices/{id}/httpPolicy/{kind}",
        get(get_rules).put(put_rules),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Values<T> {
    values: Vec<T>,
}

/// One of the three lists, parsed and checked.
#[derive(Clone)]
enum Rules {
    Request(Vec<RequestRule>),
    Response(Vec<ResponseRule>),
    Security(Vec<SecurityRule>),
}

fn checked<T: DeserializeOwned>(
    body: &[u8],
    check: fn(&T, &str) -> Result<(), String>,
) -> ApiResult<Vec<T>> {
    let Values { values } = parse_body::<Values<T>>(body)?;
    for (i, rule) in values.iter().enumerate() {
        check(rule, &format!("values[{i}]")).map_err(ApiError::bad_request)?;
    }
    Ok(values)
}

impl Rules {
    fn parse(kind: &str, body: &[u8]) -> ApiResult<Self> {
        Ok(match kind {
            "requestRules" => Self::Request(checked(body, RequestRule::check)?),
            "responseRules" => Self::Response(checked(body, ResponseRule::check)?),
            _ => Self::Security(checked(body, SecurityRule::check)?),
        })
    }

    fn is_empty(&self) -> bool {
        match self {
            Self::Request(rules) => rules.is_empty(),
            Self::Response(rules) => rules.is_empty(),
            Self::Security(rules) => rules.is_empty(),
        }
    }

    fn store(self, policies: &mut HttpPolicies) {
        match self {
            Self::Request(rules) => policies.request_rules = rules,
            Self::Response(rules) => policies.response_rules = rules,
            Self::Security(rules) => policies.security_rules = rules,
        }
    }
}

fn view(policies: Option<&HttpPolicies>, kind: &str) -> Value {
    let values = match (policies, kind) {
        (None, _) => json!([]),
        (Some(p), "requestRules") => json!(p.request_rules),
        (Some(p), "responseRules") => json!(p.response_rules),
        (Some(p), _) => json!(p.security_rules),
    };
    json!({ "values": values })
}

/// The version and the list's name; below 38.0 the endpoints do not exist.
fn check_route(kind: &str) -> ApiResult<()> {
    if !["requestRules", "responseRules", "securityRules"].contains(&kind) {
        return Err(ApiError::not_found(&format!("httpPolicy/{kind}")));
    }
    if !context::api_at_least(38, 0) {
        return Err(ApiError::bad_request(format!(
            "HTTP policies (httpPolicy/{kind}) need API version 38.0 or later, not {}.",
            context::current().api_version
        )));
    }
    Ok(())
}

/// The virtual service's id, gateway and org, if the principal sees it.
fn visible(
    world: &World,
    principal: &Principal,
    id: &str,
) -> ApiResult<(String, String, String, String)> {
    let vs = find(&world.virtual_services, id).ok_or_else(|| ApiError::forbidden(id))?;
    let org = world
        .gateway_org(&vs.gateway_ref.id)
        .unwrap_or_default()
        .to_string();
    principal.check(Some(&org), id)?;
    let vs_id = vs.id.clone().unwrap_or_default();
    Ok((vs_id, vs.name.clone(), vs.gateway_ref.id.clone(), org))
}

/// Rules apply to HTTP traffic only; any virtual service takes an empty list.
fn takes_rules(world: &World, vs_id: &str, has_rules: bool) -> ApiResult<()> {
    let Some(vs) = find(&world.virtual_services, vs_id) else {
        return Err(ApiError::forbidden(vs_id));
    };
    let profile = &vs.application_profile.profile_type;
    if has_rules && !["HTTP", "HTTPS"].contains(&profile.as_str()) {
        return Err(ApiError::bad_request(format!(
            "HTTP policies apply to virtual services with an HTTP or HTTPS application profile; {} has {profile}.",
            vs.name
        )));
    }
    Ok(())
}

async fn get_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, kind)): Path<(String, String)>,
) -> ApiResult<Response> {
    check_route(&kind)?;
    let world = state.world();
    let (vs_id, ..) = visible(&world, &principal, &id)?;
    Ok(respond::ok(&view(
        find(&world.http_policies, &vs_id),
        &kind,
    )))
}

async fn put_rules(
    State(state): State<AppState>,
    principal: Principal,
    Path((id, kind)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Response> {
    check_route(&kind)?;
    let rules = Rules::parse(&kind, &body)?;
    let (vs_id, name, gateway_id, org_id) = {
        let world = state.world();
        visible(&world, &principal, &id)?
    };
    let request = TaskRequest {
        operation_name: "updateVirtualServiceHttpPolicy",
        operation: format!("Updating the HTTP {kind} of virtual service {name}"),
        gateway_id: Some(gateway_id),
        owner: TaskOwner {
            href_path: format!("/loadBalancer/virtualServices/{vs_id}"),
            id: vs_id.clone(),
            name,
            media_type: "application/json".to_string(),
        },
        org_id,
    };
    let (checked_id, has_rules) = (vs_id.clone(), !rules.is_empty());
    let effect: tasks::Effect = Box::new(move |world| {
        if find(&world.virtual_services, &vs_id).is_none() {
            return Err(ApiError::forbidden(&vs_id));
        }
        if find(&world.http_policies, &vs_id).is_none() {
            world.http_policies.push(HttpPolicies {
                virtual_service_id: vs_id.clone(),
                ..HttpPolicies::default()
            });
        }
        if let Some(policies) = find_mut(&mut world.http_policies, &vs_id) {
            rules.store(policies);
        }
        Ok(None)
    });
    let check = move |world: &World| takes_rules(world, &checked_id, has_rules);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

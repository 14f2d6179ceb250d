//! ALB pools: `/cloudapi/1.0.0/loadBalancer/pools` and the per-gateway
//! `poolSummaries`. Names are unique per gateway; a pool used by a virtual
//! service cannot be deleted; health is derived from member health.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::gateways::visible_gateway;
use super::{Params, alb_pool_persistence, list, parse_body};
use crate::auth::Principal;
use crate::context::api_at_least;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::paging::{STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::strict::not_in_version;
use crate::tasks::{self, TaskRequest};
use crate::world::alb::{MemberCounts, Pool};
use crate::world::ip::parse_ip;
use crate::world::task::TaskOwner;
use crate::world::{Ref, World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/loadBalancer/pools", post(create_pool))
        .route(
            "/cloudapi/1.0.0/loadBalancer/pools/{id}",
            get(get_pool).put(update_pool).delete(delete_pool),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/loadBalancer/poolSummaries",
            get(pool_summaries),
        )
}

const BASIC_ALGORITHMS: [&str; 3] = ["LEAST_CONNECTIONS", "ROUND_ROBIN", "CONSISTENT_HASH"];
const PREMIUM_ALGORITHMS: [&str; 6] = [
    "FASTEST_RESPONSE",
    "LEAST_LOAD",
    "FEWEST_SERVERS",
    "RANDOM",
    "FEWEST_TASKS",
    "CORE_AFFINITY",
];

fn virtual_service_refs(world: &World, pool: &Pool) -> Vec<Ref> {
    let id = pool.id.as_deref().unwrap_or_default();
    world
        .virtual_services
        .iter()
        .filter(|vs| same_id(id, &vs.load_balancer_pool_ref.id))
        .map(|vs| Ref::new(&vs.name, vs.id.as_deref().unwrap_or_default()))
        .collect()
}

fn health(pool: &Pool, members: MemberCounts, used: bool) -> &'static str {
    let MemberCounts { enabled, up, .. } = members;
    match () {
        _ if !pool.enabled => "DISABLED",
        _ if enabled == 0 || !used => "UNAVAILABLE",
        _ if up == 0 => "DOWN",
        _ if up * 2 < enabled => "RUNNING",
        _ => "UP",
    }
}

/// The computed fields shared by the pool and its summary.
fn computed(world: &World, pool: &Pool) -> Value {
    let refs = virtual_service_refs(world, pool);
    let members = world.member_counts(pool);
    json!({
        "status": "REALIZED",
        "healthStatus": health(pool, members, !refs.is_empty()),
        "healthMessage": null,
        "memberCount": members.total,
        "enabledMemberCount": members.enabled,
        "upMemberCount": members.up,
        "virtualServiceRefs": refs,
    })
}

fn merge(target: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (target.as_object_mut(), extra) {
        target.extend(extra);
    }
}

fn pool_view(world: &World, pool: &Pool) -> Value {
    let mut view = json!(pool);
    merge(&mut view, computed(world, pool));
    let members: Vec<Value> = pool
        .members
        .iter()
        .map(|m| {
            let mut member = json!(m);
            merge(&mut member, json!({"healthStatus": pool.health_of(m), "markedDownBy": [], "detailedHealthMessage": null}));
            member
        })
        .collect();
    view["members"] = json!(members);
    view
}

fn summary_view(world: &World, pool: &Pool) -> Value {
    let mut view = json!({
        "id": pool.id,
        "name": pool.name,
        "description": pool.description,
        "enabled": pool.enabled,
        "passiveMonitoringEnabled": pool.passive_monitoring_enabled,
        "activeMonitoringEnabled": !pool.health_monitors.is_empty(),
        "memberSslEnabled": pool.ssl_enabled.unwrap_or(false),
        // Only IP sets can be member groups here.
        "memberGroupType": pool.member_group_ref.as_ref().map(|_| "IP_SET"),
    });
    merge(&mut view, computed(world, pool));
    if let Some(refs) = view["virtualServiceRefs"].as_array_mut() {
        refs.truncate(10);
    }
    view
}

fn visible_pool<'a>(world: &'a World, principal: &Principal, id: &str) -> ApiResult<&'a Pool> {
    find(&world.pools, id)
        .filter(|p| {
            world
                .gateway_org(&p.gateway_ref.id)
                .is_some_and(|org| principal.sees(org))
        })
        .ok_or_else(|| ApiError::forbidden(id))
}

fn validate(world: &World, pool: &Pool) -> ApiResult<()> {
    let gateway = find(&world.gateways, &pool.gateway_ref.id).ok_or_else(|| {
        ApiError::bad_request(format!(
            "Edge gateway {} does not exist.",
            pool.gateway_ref.id
        ))
    })?;
    if !gateway.load_balancer.enabled {
        return Err(ApiError::bad_request(format!(
            "The load balancer is not enabled on edge gateway {}.",
            gateway.name
        )));
    }
    if pool.name.trim().is_empty() {
        return Err(ApiError::bad_request("A pool needs a name."));
    }
    let duplicate = world
        .pools
        .iter()
        .any(|p| p.name == pool.name && same_id(&gateway.id, &p.gateway_ref.id) && p.id != pool.id);
    if duplicate {
        return Err(ApiError::duplicate_name(
            "load balancer pool",
            &pool.name,
            &format!("edge gateway {}", gateway.name),
        ));
    }
    if let Some(algorithm) = &pool.algorithm {
        let premium = gateway.load_balancer.supported_feature_set == "PREMIUM";
        let known = BASIC_ALGORITHMS.contains(&algorithm.as_str())
            || (premium && PREMIUM_ALGORITHMS.contains(&algorithm.as_str()));
        if !known {
            return Err(ApiError::bad_request(format!(
                "Algorithm {algorithm} is not available on this gateway."
            )));
        }
    }
    if let Some(profile) = &pool.persistence_profile {
        alb_pool_persistence::check(profile, &gateway.load_balancer.supported_feature_set)?;
    }
    if let Some(member) = pool
        .members
        .iter()
        .find(|m| parse_ip(&m.ip_address).is_err())
    {
        return Err(ApiError::bad_request(format!(
            "Invalid member address '{}'.",
            member.ip_address
        )));
    }
    let transparent = world.virtual_services.iter().find(|vs| {
        vs.transparent_mode_enabled == Some(true)
            && pool
                .id
                .as_deref()
                .is_some_and(|id| same_id(id, &vs.load_balancer_pool_ref.id))
    });
    if let Some(vs) = transparent.filter(|_| pool.member_group_ref.is_none()) {
        return Err(ApiError::bad_request(format!(
            "Virtual service {} preserves the client IP (transparent mode), so pool {} must keep a member group (memberGroupRef).",
            vs.name, pool.name
        )));
    }
    if let Some(group) = &pool.member_group_ref {
        if !pool.members.is_empty() {
            return Err(ApiError::bad_request(
                "members and memberGroupRef are mutually exclusive.",
            ));
        }
        let owned =
            find(&world.firewall_groups, &group.id).is_some_and(|g| g.gateway_id == gateway.id);
        if !owned {
            return Err(ApiError::bad_request(format!(
                "Firewall group {} does not exist on edge gateway {}.",
                group.id, gateway.name
            )));
        }
    }
    Ok(())
}

/// `memberGroupRef` exists from API 37.1 (VCD 10.4.1).
fn check_version(pool: &Pool) -> ApiResult<()> {
    if pool.member_group_ref.is_some() && !api_at_least(37, 1) {
        return Err(not_in_version("memberGroupRef", "EdgeLoadBalancerPool"));
    }
    Ok(())
}

fn owner(pool: &Pool) -> TaskOwner {
    let id = pool.id.clone().unwrap_or_default();
    TaskOwner {
        href_path: format!("/loadBalancer/pools/{id}"),
        id,
        name: pool.name.clone(),
        media_type: "application/json".to_string(),
    }
}

async fn create_pool(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut pool: Pool = parse_body(&body)?;
    check_version(&pool)?;
    let org_id = {
        let world = state.world();
        let gateway = visible_gateway(&world, &principal, &pool.gateway_ref.id)?;
        pool.gateway_ref = Ref::new(&gateway.name, &gateway.id);
        gateway.org_id.clone()
    };
    pool.id = Some(new_urn("loadBalancerPool"));
    pool.algorithm
        .get_or_insert_with(|| "LEAST_CONNECTIONS".to_string());
    let request = TaskRequest {
        operation_name: "createLoadBalancerPool",
        operation: format!("Creating load balancer pool {}", pool.name),
        gateway_id: Some(pool.gateway_ref.id.clone()),
        owner: owner(&pool),
        org_id,
    };
    let check_pool = pool.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &pool)?;
        world.pools.push(pool);
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| validate(w, &check_pool),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn get_pool(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(&pool_view(
        &world,
        visible_pool(&world, &principal, &id)?,
    )))
}

async fn update_pool(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut pool: Pool = parse_body(&body)?;
    check_version(&pool)?;
    let org_id = {
        let world = state.world();
        let existing = visible_pool(&world, &principal, &id)?;
        if !same_id(&existing.gateway_ref.id, &pool.gateway_ref.id) {
            return Err(ApiError::bad_request(
                "A pool cannot move to another edge gateway.",
            ));
        }
        pool.id = existing.id.clone();
        pool.gateway_ref = existing.gateway_ref.clone();
        pool.member_health = existing.member_health.clone();
        pool.algorithm
            .get_or_insert_with(|| "LEAST_CONNECTIONS".to_string());
        world
            .gateway_org(&existing.gateway_ref.id)
            .unwrap_or_default()
            .to_string()
    };
    let request = TaskRequest {
        operation_name: "updateLoadBalancerPool",
        operation: format!("Updating load balancer pool {}", pool.name),
        gateway_id: Some(pool.gateway_ref.id.clone()),
        owner: owner(&pool),
        org_id,
    };
    let check_pool = pool.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &pool)?;
        let id = pool.id.clone().unwrap_or_default();
        let stored = find_mut(&mut world.pools, &id).ok_or_else(|| ApiError::forbidden(&id))?;
        // Member health survives updates of members that stay.
        let mut pool = pool;
        pool.member_health
            .retain(|ip, _| pool.members.iter().any(|m| &m.ip_address == ip));
        *stored = pool;
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| validate(w, &check_pool),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

fn check_unused(world: &World, pool_id: &str) -> ApiResult<()> {
    let Some(pool) = find(&world.pools, pool_id) else {
        return Err(ApiError::not_found(&format!(
            "Load balancer pool {pool_id}"
        )));
    };
    match virtual_service_refs(world, pool).first() {
        Some(vs) => Err(ApiError::bad_request(format!(
            "Load balancer pool {} is in use by virtual service {} and cannot be deleted.",
            pool.name, vs.name
        ))),
        None => Ok(()),
    }
}

async fn delete_pool(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (pool_owner, gateway_id, org_id) = {
        let world = state.world();
        let pool = visible_pool(&world, &principal, &id)?;
        let org = world
            .gateway_org(&pool.gateway_ref.id)
            .unwrap_or_default()
            .to_string();
        (owner(pool), pool.gateway_ref.id.clone(), org)
    };
    let pool_id = pool_owner.id.clone();
    let check_id = pool_id.clone();
    let request = TaskRequest {
        operation_name: "deleteLoadBalancerPool",
        operation: format!("Deleting load balancer pool {}", pool_owner.name),
        gateway_id: Some(gateway_id),
        owner: pool_owner,
        org_id,
    };
    let effect: tasks::Effect = Box::new(move |world| {
        check_unused(world, &pool_id)?;
        remove(&mut world.pools, &pool_id);
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| check_unused(w, &check_id),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn pool_summaries(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        let gateway = visible_gateway(&world, &principal, &id)?;
        world
            .pools
            .iter()
            .filter(|p| same_id(&gateway.id, &p.gateway_ref.id))
            .map(|p| summary_view(&world, p))
            .collect()
    };
    let path = format!("/edgeGateways/{id}/loadBalancer/poolSummaries");
    list(
        &state,
        &path,
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "EdgeLoadBalancerPoolSummaries",
    )
}

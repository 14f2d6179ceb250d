//! ALB pools: `/cloudapi/1.0.0/loadBalancer/pools` and the per-gateway
//! `poolSummaries`. Names are unique per gateway; a pool used by a virtual
//! service cannot be deleted; health is derived from member health
//! (`alb_pool_views`); tenant health monitors are `alb_pool_monitors`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};

use super::alb_pool_monitors::{self as monitors, Listed};
use super::alb_pool_views::{pool_view, summary_view, virtual_service_refs};
use super::gateways::visible_gateway;
use super::{Params, alb_pool_persistence, gateway_summaries, parse_body};
use crate::auth::Principal;
use crate::context::api_at_least;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::respond;
use crate::state::AppState;
use crate::strict::not_in_version;
use crate::tasks::{self, TaskRequest};
use crate::world::alb::Pool;
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

pub(super) fn visible_pool<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a Pool> {
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

/// An update's checks: the pool's, and the tenant monitors its body lists.
fn validate_update(world: &World, pool: &Pool, listed: Option<&[Listed]>) -> ApiResult<()> {
    validate(world, pool)?;
    let pool_id = pool.id.as_deref().unwrap_or_default();
    monitors::check_listed(world, pool_id, listed.unwrap_or_default())
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
    monitors::refuse_on_create(monitors::take_listed(&mut pool)?.as_ref())?;
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
    let listed = monitors::take_listed(&mut pool)?;
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
    let (check_pool, check_listed) = (pool.clone(), listed.clone());
    let effect: tasks::Effect = Box::new(move |world| {
        validate_update(world, &pool, listed.as_deref())?;
        let id = pool.id.clone().unwrap_or_default();
        let stored = find_mut(&mut world.pools, &id).ok_or_else(|| ApiError::forbidden(&id))?;
        // Member health survives updates of members that stay.
        let mut pool = pool;
        pool.member_health
            .retain(|ip, _| pool.members.iter().any(|m| &m.ip_address == ip));
        *stored = pool;
        if let Some(listed) = &listed {
            monitors::unassign_unlisted(world, &id, listed);
        }
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| validate_update(w, &check_pool, check_listed.as_deref()),
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
        world.retain_assignments(&pool_id, |_| false);
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
    let kind = ("pool", "EdgeLoadBalancerPoolSummaries");
    gateway_summaries(&state, &principal, &id, &params, kind, |world, gateway| {
        world
            .pools
            .iter()
            .filter(|p| same_id(&gateway.id, &p.gateway_ref.id))
            .map(|p| summary_view(world, p))
            .collect()
    })
}

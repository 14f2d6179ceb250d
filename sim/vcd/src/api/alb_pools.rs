//! ALB pools: `/cloudapi/1.0.0/loadBalancer/pools` and the per-gateway
//! `poolSummaries`. Names are unique per gateway; a pool used by a virtual
//! service cannot be deleted; health is derived from member health
//! (`alb_pool_views`); tenant health monitors are `alb_pool_monitors`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::Value;

use super::alb_pool_monitors::{self as monitors, Listed};
use super::alb_pool_views::{pool_view, summary_view, virtual_service_refs};
use super::collection::{Collection, get_item, sees_gateway};
use super::gateways::Gateways;
use super::task_writes::{Operations, Placement, Verb, Writable, create, delete_item, submit};
use super::{Params, alb_pool_persistence, gateway_summaries, parse_body};
use crate::auth::Principal;
use crate::context::api_at_least;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::state::AppState;
use crate::strict::not_in_version;
use crate::world::alb::Pool;
use crate::world::ip::parse_ip;
use crate::world::member_health::retain_assignments;
use crate::world::{Keyed, Ref, World, find, find_mut};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/loadBalancer/pools", post(create_pool))
        .route(
            "/cloudapi/1.0.0/loadBalancer/pools/{id}",
            get(get_item::<Pools>)
                .put(update_pool)
                .delete(delete_item::<Pools>),
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

pub(super) struct Pools;

impl Collection for Pools {
    type Item = Pool;

    fn all(world: &World) -> &[Pool] {
        &world.pools
    }

    fn visible(world: &World, principal: &Principal, pool: &Pool) -> bool {
        sees_gateway(world, principal, &pool.gateway_ref.id)
    }

    fn view(world: &World, pool: &Pool) -> Value {
        pool_view(world, pool)
    }
}

impl Writable for Pools {
    const NOUN: &'static str = "load balancer pool";
    const PATH: &'static str = "/loadBalancer/pools";
    const OPERATIONS: Operations = Operations {
        create: "createLoadBalancerPool",
        update: "updateLoadBalancerPool",
        delete: "deleteLoadBalancerPool",
    };

    fn all_mut(world: &mut World) -> &mut Vec<Pool> {
        &mut world.pools
    }

    fn name(pool: &Pool) -> &str {
        &pool.name
    }

    fn placement(world: &World, _principal: &Principal, pool: &Pool) -> Placement {
        Placement::on_gateway(world, &pool.gateway_ref.id)
    }

    fn check_removable(world: &World, pool: &Pool) -> ApiResult<()> {
        check_unused(world, pool.key())
    }

    fn on_removed(world: &mut World, id: &str) {
        retain_assignments(world, id, |_| false);
    }
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

async fn create_pool(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut pool: Pool = parse_body(&body)?;
    check_version(&pool)?;
    monitors::refuse_on_create(monitors::take_listed(&mut pool)?.as_ref())?;
    let placement = {
        let world = state.world();
        let gateway = Gateways::find_visible(&world, &principal, &pool.gateway_ref.id)?;
        pool.gateway_ref = Ref::new(&gateway.name, &gateway.id);
        Pools::placement(&world, &principal, &pool)
    };
    pool.id = Some(new_urn("loadBalancerPool"));
    pool.algorithm
        .get_or_insert_with(|| "LEAST_CONNECTIONS".to_string());
    let checked = pool.clone();
    let check = move |w: &World| validate(w, &checked);
    create::<Pools>(&state, &principal, pool, placement, check).await
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
    let placement = {
        let world = state.world();
        let existing = Pools::find_visible(&world, &principal, &id)?;
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
        Pools::placement(&world, &principal, &pool)
    };
    let (checked, check_listed) = (pool.clone(), listed.clone());
    let check = move |w: &World| validate_update(w, &checked, check_listed.as_deref());
    let updated = pool.clone();
    let apply = move |world: &mut World| {
        let id = updated.key().to_string();
        let stored = find_mut(&mut world.pools, &id).ok_or_else(|| ApiError::forbidden(&id))?;
        // Member health survives updates of members that stay.
        let mut pool = updated;
        pool.member_health
            .retain(|ip, _| pool.members.iter().any(|m| &m.ip_address == ip));
        *stored = pool;
        if let Some(listed) = &listed {
            monitors::unassign_unlisted(world, &id, listed);
        }
        Ok(())
    };
    submit::<Pools>(
        &state,
        &principal,
        Verb::Update,
        &pool,
        placement,
        check,
        apply,
    )
    .await
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

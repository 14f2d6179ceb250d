//! ALB virtual services: `/cloudapi/1.0.0/loadBalancer/virtualServices` and
//! the per-gateway `virtualServiceSummaries`; health is derived from the
//! pool's members. The invariants live in `alb_virtual_service_checks`.

use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::alb_virtual_service_checks::validate;
use super::alb_virtual_service_versions::{check_body, complete, shape_view};
use super::alb_virtual_service_vips::check_vip_change;
use super::gateways::visible_gateway;
use super::{Params, gateway_summaries, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::alb::VirtualService;
use crate::world::task::TaskOwner;
use crate::world::{Ref, World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/virtualServices",
            post(create_vs),
        )
        .route(
            "/cloudapi/1.0.0/loadBalancer/virtualServices/{id}",
            get(get_vs).put(update_vs).delete(delete_vs),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/loadBalancer/virtualServiceSummaries",
            get(vs_summaries),
        )
}

fn health(world: &World, vs: &VirtualService) -> &'static str {
    if !vs.enabled {
        return "DISABLED";
    }
    if vs.pending_until.is_some_and(|until| Instant::now() < until) {
        return "PENDING";
    }
    match find(&world.pools, &vs.load_balancer_pool_ref.id) {
        Some(pool) if world.member_counts(pool).up > 0 => "UP",
        _ => "DOWN",
    }
}

fn vs_view(world: &World, vs: &VirtualService) -> Value {
    let mut view = json!(vs);
    view["status"] = json!("REALIZED");
    view["healthStatus"] = json!(health(world, vs));
    view["healthMessage"] = Value::Null;
    view["detailedHealthMessage"] = Value::Null;
    shape_view(&mut view, vs);
    view
}

fn summary_view(world: &World, vs: &VirtualService) -> Value {
    let mut view = vs_view(world, vs);
    if let Some(object) = view.as_object_mut() {
        object.remove("applicationProfile");
    }
    view["applicationProfileType"] = json!(vs.application_profile.profile_type);
    view
}

fn visible_vs<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a VirtualService> {
    find(&world.virtual_services, id)
        .filter(|vs| {
            world
                .gateway_org(&vs.gateway_ref.id)
                .is_some_and(|org| principal.sees(org))
        })
        .ok_or_else(|| ApiError::forbidden(id))
}

fn owner(vs: &VirtualService) -> TaskOwner {
    let id = vs.id.clone().unwrap_or_default();
    TaskOwner {
        href_path: format!("/loadBalancer/virtualServices/{id}"),
        id,
        name: vs.name.clone(),
        media_type: "application/json".to_string(),
    }
}

/// Fills reference names from the world.
fn resolve_refs(world: &World, vs: &mut VirtualService) {
    if let Some(pool) = find(&world.pools, &vs.load_balancer_pool_ref.id) {
        vs.load_balancer_pool_ref = Ref::new(&pool.name, pool.id.as_deref().unwrap_or_default());
    }
    if let Some(seg) = find(
        &world.service_engine_groups,
        &vs.service_engine_group_ref.id,
    ) {
        vs.service_engine_group_ref = Ref::new(&seg.name, &seg.id);
    }
}

async fn create_vs(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut vs: VirtualService = parse_body(&body)?;
    check_body(&mut vs)?;
    complete(&mut vs, None);
    let knobs = state.knobs();
    let org_id = {
        let world = state.world();
        let gateway = visible_gateway(&world, &principal, &vs.gateway_ref.id)?;
        vs.gateway_ref = Ref::new(&gateway.name, &gateway.id);
        resolve_refs(&world, &mut vs);
        gateway.org_id.clone()
    };
    vs.id = Some(new_urn("loadBalancerVirtualService"));
    let pending = Duration::from_millis(knobs.vs_pending_ms);
    let strict = knobs.strict_external_ips;
    let request = TaskRequest {
        operation_name: "createVirtualService",
        operation: format!("Creating virtual service {}", vs.name),
        gateway_id: Some(vs.gateway_ref.id.clone()),
        owner: owner(&vs),
        org_id,
    };
    let check_vs = vs.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &vs, strict)?;
        let mut vs = vs;
        vs.pending_until = (!pending.is_zero()).then(|| Instant::now() + pending);
        world.virtual_services.push(vs);
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| validate(w, &check_vs, strict),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn get_vs(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(&vs_view(
        &world,
        visible_vs(&world, &principal, &id)?,
    )))
}

async fn update_vs(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut vs: VirtualService = parse_body(&body)?;
    check_body(&mut vs)?;
    let strict = state.knobs().strict_external_ips;
    let org_id = {
        let world = state.world();
        let existing = visible_vs(&world, &principal, &id)?;
        if !same_id(&existing.gateway_ref.id, &vs.gateway_ref.id) {
            return Err(ApiError::bad_request(
                "A virtual service cannot move to another edge gateway.",
            ));
        }
        // A client at an older version does not know the newer
        // properties, so its PUT leaves them as stored.
        complete(&mut vs, Some(existing));
        check_vip_change(&world, existing, &vs)?;
        vs.id = existing.id.clone();
        vs.gateway_ref = existing.gateway_ref.clone();
        vs.pending_until = existing.pending_until;
        resolve_refs(&world, &mut vs);
        world
            .gateway_org(&existing.gateway_ref.id)
            .unwrap_or_default()
            .to_string()
    };
    let request = TaskRequest {
        operation_name: "updateVirtualService",
        operation: format!("Updating virtual service {}", vs.name),
        gateway_id: Some(vs.gateway_ref.id.clone()),
        owner: owner(&vs),
        org_id,
    };
    let check_vs = vs.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &vs, strict)?;
        let id = vs.id.clone().unwrap_or_default();
        let stored =
            find_mut(&mut world.virtual_services, &id).ok_or_else(|| ApiError::forbidden(&id))?;
        *stored = vs;
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| validate(w, &check_vs, strict),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn delete_vs(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (vs_owner, gateway_id, org_id) = {
        let world = state.world();
        let vs = visible_vs(&world, &principal, &id)?;
        let org = world
            .gateway_org(&vs.gateway_ref.id)
            .unwrap_or_default()
            .to_string();
        (owner(vs), vs.gateway_ref.id.clone(), org)
    };
    let vs_id = vs_owner.id.clone();
    let request = TaskRequest {
        operation_name: "deleteVirtualService",
        operation: format!("Deleting virtual service {}", vs_owner.name),
        gateway_id: Some(gateway_id),
        owner: vs_owner,
        org_id,
    };
    let effect: tasks::Effect = Box::new(move |world| {
        remove(&mut world.virtual_services, &vs_id);
        remove(&mut world.http_policies, &vs_id);
        Ok(None)
    });
    let task_id = tasks::submit(&state, &principal, request, |_| Ok(()), effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn vs_summaries(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let kind = ("virtualService", "EdgeLoadBalancerVirtualServiceSummaries");
    gateway_summaries(&state, &principal, &id, &params, kind, |world, gateway| {
        world
            .virtual_services
            .iter()
            .filter(|vs| same_id(&gateway.id, &vs.gateway_ref.id))
            .map(|vs| summary_view(world, vs))
            .collect()
    })
}

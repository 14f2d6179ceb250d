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
use super::collection::{Collection, get_item, sees_gateway};
use super::gateways::Gateways;
use super::task_writes::{Operations, Placement, Verb, Writable, delete_item, replace, submit};
use super::{Params, gateway_summaries, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::state::AppState;
use crate::world::alb::VirtualService;
use crate::world::member_health::MemberCounts;
use crate::world::{Ref, World, find, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/virtualServices",
            post(create_vs),
        )
        .route(
            "/cloudapi/1.0.0/loadBalancer/virtualServices/{id}",
            get(get_item::<VirtualServices>)
                .put(update_vs)
                .delete(delete_item::<VirtualServices>),
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
        Some(pool) if MemberCounts::of(world, pool).up > 0 => "UP",
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

pub(super) struct VirtualServices;

impl Collection for VirtualServices {
    type Item = VirtualService;

    fn all(world: &World) -> &[VirtualService] {
        &world.virtual_services
    }

    fn visible(world: &World, principal: &Principal, vs: &VirtualService) -> bool {
        sees_gateway(world, principal, &vs.gateway_ref.id)
    }

    fn view(world: &World, vs: &VirtualService) -> Value {
        vs_view(world, vs)
    }
}

impl Writable for VirtualServices {
    const NOUN: &'static str = "virtual service";
    const PATH: &'static str = "/loadBalancer/virtualServices";
    const OPERATIONS: Operations = Operations {
        create: "createVirtualService",
        update: "updateVirtualService",
        delete: "deleteVirtualService",
    };

    fn all_mut(world: &mut World) -> &mut Vec<VirtualService> {
        &mut world.virtual_services
    }

    fn name(vs: &VirtualService) -> &str {
        &vs.name
    }

    fn placement(world: &World, _principal: &Principal, vs: &VirtualService) -> Placement {
        Placement::on_gateway(world, &vs.gateway_ref.id)
    }

    fn on_removed(world: &mut World, id: &str) {
        remove(&mut world.http_policies, id);
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
    let placement = {
        let world = state.world();
        let gateway = Gateways::find_visible(&world, &principal, &vs.gateway_ref.id)?;
        vs.gateway_ref = Ref::new(&gateway.name, &gateway.id);
        resolve_refs(&world, &mut vs);
        VirtualServices::placement(&world, &principal, &vs)
    };
    vs.id = Some(new_urn("loadBalancerVirtualService"));
    let pending = Duration::from_millis(knobs.vs_pending_ms);
    let strict = knobs.strict_external_ips;
    let checked = vs.clone();
    let check = move |w: &World| validate(w, &checked, strict);
    let mut created = vs.clone();
    // The service is PENDING for a while from the moment it exists.
    let apply = move |world: &mut World| {
        created.pending_until = (!pending.is_zero()).then(|| Instant::now() + pending);
        world.virtual_services.push(created);
        Ok(())
    };
    submit::<VirtualServices>(
        &state,
        &principal,
        Verb::Create,
        &vs,
        placement,
        check,
        apply,
    )
    .await
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
    let placement = {
        let world = state.world();
        let existing = VirtualServices::find_visible(&world, &principal, &id)?;
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
        VirtualServices::placement(&world, &principal, &vs)
    };
    let checked = vs.clone();
    let check = move |w: &World| validate(w, &checked, strict);
    replace::<VirtualServices>(&state, &principal, vs, placement, check).await
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

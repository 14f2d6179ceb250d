//! `/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments` (read):
//! which SEGs a gateway may place virtual services on, and how full they are.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, list};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::STANDARD;
use crate::respond;
use crate::state::AppState;
use crate::world::alb::SegAssignment;
use crate::world::{Ref, World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments",
            get(list_assignments),
        )
        .route(
            "/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments/{id}",
            get(get_assignment),
        )
}

fn assignment_view(world: &World, assignment: &SegAssignment) -> Value {
    let seg = find(&world.service_engine_groups, &assignment.seg_id);
    let gateway = find(&world.gateways, &assignment.gateway_id);
    json!({
        "id": assignment.id,
        "maxVirtualServices": assignment.max_virtual_services,
        "minVirtualServices": assignment.min_virtual_services,
        "numDeployedVirtualServices": world.deployed_virtual_services(&assignment.seg_id, &assignment.gateway_id),
        "serviceEngineGroupRef": seg.map(|s| Ref::new(&s.name, &s.id)),
        "gatewayRef": world.gateway_ref(&assignment.gateway_id),
        "gatewayOwnerRef": gateway.map(|g| world.owner_ref(&g.owner_id)),
        "gatewayOrgRef": gateway.map(|g| world.org_ref(&g.org_id)),
        "serviceEngineGroupSupportedFeatureSet": seg.map(|s| s.supported_feature_set.clone()),
        "gatewaySupportedFeatureSet": gateway.map(|g| g.load_balancer.supported_feature_set.clone()),
        "serviceEngineGroupHaMode": seg.map(|s| s.ha_mode.clone()),
    })
}

fn visible(world: &World, principal: &Principal, assignment: &SegAssignment) -> bool {
    world
        .gateway_org(&assignment.gateway_id)
        .is_some_and(|org| principal.sees(org))
}

async fn list_assignments(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .seg_assignments
            .iter()
            .filter(|a| visible(&world, &principal, a))
            .map(|a| assignment_view(&world, a))
            .collect()
    };
    list(
        &state,
        "/loadBalancer/serviceEngineGroups/assignments",
        &params,
        STANDARD,
        items,
        None,
        "LoadBalancerServiceEngineGroupAssignments",
    )
}

async fn get_assignment(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let assignment = find(&world.seg_assignments, &id)
        .filter(|a| visible(&world, &principal, a))
        .ok_or_else(|| ApiError::forbidden(&id))?;
    Ok(respond::ok(&assignment_view(&world, assignment)))
}

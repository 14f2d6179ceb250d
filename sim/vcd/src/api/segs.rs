//! `/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments` (read):
//! which SEGs a gateway may place virtual services on, and how full they are.

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, get_item, list_items, sees_gateway};
use crate::auth::Principal;
use crate::paging::Sort;
use crate::state::AppState;
use crate::world::alb::SegAssignment;
use crate::world::{Ref, World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments",
            get(list_items::<SegAssignments>),
        )
        .route(
            "/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments/{id}",
            get(get_item::<SegAssignments>),
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

pub(super) struct SegAssignments;

impl Collection for SegAssignments {
    type Item = SegAssignment;

    fn all(world: &World) -> &[SegAssignment] {
        &world.seg_assignments
    }

    fn visible(world: &World, principal: &Principal, assignment: &SegAssignment) -> bool {
        sees_gateway(world, principal, &assignment.gateway_id)
    }

    fn view(world: &World, assignment: &SegAssignment) -> Value {
        assignment_view(world, assignment)
    }
}

impl Listed for SegAssignments {
    const LIST_PATH: &'static str = "/loadBalancer/serviceEngineGroups/assignments";
    const MODEL: &'static str = "LoadBalancerServiceEngineGroupAssignments";

    fn default_sort() -> Option<Sort> {
        None
    }
}

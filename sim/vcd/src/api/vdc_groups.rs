//! `/cloudapi/1.0.0/vdcGroups`: the data-center groups of the caller's org,
//! read only (groups come from the scenario).

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, get_item, list_items};
use crate::auth::Principal;
use crate::state::AppState;
use crate::world::World;
use crate::world::compute::VdcGroup;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/vdcGroups", get(list_items::<VdcGroups>))
        .route("/cloudapi/1.0.0/vdcGroups/{id}", get(get_item::<VdcGroups>))
}

/// A LOCAL NSX-T group, as VCD shows one whose members are all realized.
fn group_view(world: &World, group: &VdcGroup) -> Value {
    let members: Vec<Value> = group
        .vdc_ids
        .iter()
        .map(|vdc_id| {
            json!({
                "vdcRef": world.vdc_ref(vdc_id),
                "orgRef": world.org_ref(&group.org_id),
                "siteRef": {"name": world.site.name, "id": world.site.id},
                "networkProviderScope": "nsxt-manager",
                "faultDomainTag": "pvdc1",
                "remoteOrg": false,
                "status": "REALIZED",
            })
        })
        .collect();
    json!({
        "id": group.id,
        "orgId": group.org_id,
        "name": group.name,
        "description": "",
        "localEgress": false,
        "participatingOrgVdcs": members,
        "universalNetworkingEnabled": false,
        "networkPoolUniversalId": null,
        "networkPoolId": null,
        "status": "REALIZED",
        "type": "LOCAL",
        "networkProviderType": "NSX_T",
        "dfwEnabled": false,
        "errorMessage": null,
    })
}

pub(super) struct VdcGroups;

impl Collection for VdcGroups {
    type Item = VdcGroup;

    fn all(world: &World) -> &[VdcGroup] {
        &world.vdc_groups
    }

    fn visible(_world: &World, principal: &Principal, group: &VdcGroup) -> bool {
        principal.sees(&group.org_id)
    }

    fn view(world: &World, group: &VdcGroup) -> Value {
        group_view(world, group)
    }
}

impl Listed for VdcGroups {
    const LIST_PATH: &'static str = "/vdcGroups";
    const MODEL: &'static str = "VdcGroups";
}

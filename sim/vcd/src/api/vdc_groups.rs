//! `/cloudapi/1.0.0/vdcGroups`: the data-center groups of the caller's org,
//! read only (groups come from the scenario).

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, list};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::compute::VdcGroup;
use crate::world::{World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/vdcGroups", get(list_groups))
        .route("/cloudapi/1.0.0/vdcGroups/{id}", get(get_group))
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

async fn list_groups(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .vdc_groups
            .iter()
            .filter(|g| principal.sees(&g.org_id))
            .map(|g| group_view(&world, g))
            .collect()
    };
    list(
        &state,
        "/vdcGroups",
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "VdcGroups",
    )
}

async fn get_group(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let group = find(&world.vdc_groups, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    principal.check(Some(&group.org_id), &id)?;
    Ok(respond::ok(&group_view(&world, group)))
}

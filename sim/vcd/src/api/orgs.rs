//! `/cloudapi/1.0.0/orgs` and `/vdcs`.

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
use crate::world::compute::{PowerState, Vdc};
use crate::world::identity::Org;
use crate::world::{World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/orgs", get(list_orgs))
        .route("/cloudapi/1.0.0/orgs/{id}", get(get_org))
        .route("/cloudapi/1.0.0/vdcs", get(list_vdcs))
        .route("/cloudapi/1.0.0/vdcs/{id}", get(get_vdc))
}

fn org_view(world: &World, org: &Org) -> Value {
    let vdcs: Vec<&Vdc> = world.vdcs.iter().filter(|v| v.org_id == org.id).collect();
    let vapps: Vec<&str> = world
        .vapps
        .iter()
        .filter(|a| vdcs.iter().any(|v| v.id == a.vdc_id))
        .map(|a| a.id.as_str())
        .collect();
    let running = world
        .vms
        .iter()
        .filter(|vm| vapps.contains(&vm.vapp_id.as_str()) && vm.power == PowerState::PoweredOn)
        .count();
    json!({
        "id": org.id,
        "name": org.name,
        "displayName": org.full_name,
        "description": "",
        "isEnabled": org.enabled,
        "orgVdcCount": vdcs.len(),
        "catalogCount": 0,
        "vappCount": vapps.len(),
        "runningVMCount": running,
        "userCount": world.users.iter().filter(|u| u.org_id == org.id).count(),
        "diskCount": 0,
        "canPublish": false,
    })
}

fn vdc_view(world: &World, vdc: &Vdc) -> Value {
    json!({
        "id": vdc.id,
        "name": vdc.name,
        "description": "",
        "allocationType": vdc.allocation_type,
        "org": world.org_ref(&vdc.org_id),
    })
}

async fn list_orgs(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .orgs
            .iter()
            .filter(|o| principal.sees(&o.id) && (principal.sysadmin || !o.is_system()))
            .map(|o| org_view(&world, o))
            .collect()
    };
    list(
        &state,
        "/orgs",
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "Orgs",
    )
}

async fn get_org(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let org = find(&world.orgs, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    principal.check(Some(&org.id), &id)?;
    Ok(respond::ok(&org_view(&world, org)))
}

async fn list_vdcs(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .vdcs
            .iter()
            .filter(|v| principal.sees(&v.org_id))
            .map(|v| vdc_view(&world, v))
            .collect()
    };
    list(
        &state,
        "/vdcs",
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "OrgVdcs",
    )
}

async fn get_vdc(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let vdc = find(&world.vdcs, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    principal.check(Some(&vdc.org_id), &id)?;
    Ok(respond::ok(&vdc_view(&world, vdc)))
}

//! `/cloudapi/1.0.0/orgs` and `/vdcs`.

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, get_item, list_items};
use crate::auth::Principal;
use crate::state::AppState;
use crate::world::World;
use crate::world::compute::{PowerState, Vdc};
use crate::world::identity::Org;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/orgs", get(list_items::<Orgs>))
        .route("/cloudapi/1.0.0/orgs/{id}", get(get_item::<Orgs>))
        .route("/cloudapi/1.0.0/vdcs", get(list_items::<Vdcs>))
        .route("/cloudapi/1.0.0/vdcs/{id}", get(get_item::<Vdcs>))
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

pub(super) struct Orgs;

impl Collection for Orgs {
    type Item = Org;

    fn all(world: &World) -> &[Org] {
        &world.orgs
    }

    fn visible(_world: &World, principal: &Principal, org: &Org) -> bool {
        principal.sees(&org.id)
    }

    fn view(world: &World, org: &Org) -> Value {
        org_view(world, org)
    }
}

impl Listed for Orgs {
    const LIST_PATH: &'static str = "/orgs";
    const MODEL: &'static str = "Orgs";

    /// Only a sysadmin lists `System`; a read by id is visibility alone.
    fn listed(world: &World, principal: &Principal, org: &Org) -> bool {
        Self::visible(world, principal, org) && (principal.sysadmin || !org.is_system())
    }
}

pub(super) struct Vdcs;

impl Collection for Vdcs {
    type Item = Vdc;

    fn all(world: &World) -> &[Vdc] {
        &world.vdcs
    }

    fn visible(_world: &World, principal: &Principal, vdc: &Vdc) -> bool {
        principal.sees(&vdc.org_id)
    }

    fn view(world: &World, vdc: &Vdc) -> Value {
        vdc_view(world, vdc)
    }
}

impl Listed for Vdcs {
    const LIST_PATH: &'static str = "/vdcs";
    const MODEL: &'static str = "OrgVdcs";
}

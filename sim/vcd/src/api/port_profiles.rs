//! `/cloudapi/1.0.0/applicationPortProfiles`: SYSTEM and PROVIDER profiles
//! are visible to all, TENANT profiles to their org; SYSTEM is read-only.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, context_params, list_parsed, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::new_urn;
use crate::paging::{STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::nat::AppPortProfile;
use crate::world::task::TaskOwner;
use crate::world::{World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/applicationPortProfiles",
            get(list_profiles).post(create_profile),
        )
        .route(
            "/cloudapi/1.0.0/applicationPortProfiles/{id}",
            get(get_profile).put(update_profile).delete(delete_profile),
        )
}

const PROTOCOLS: [&str; 4] = ["TCP", "UDP", "ICMPv4", "ICMPv6"];

fn visible(principal: &Principal, profile: &AppPortProfile) -> bool {
    profile
        .org_ref
        .as_ref()
        .is_none_or(|org| principal.sees(&org.id))
}

fn profile_view(profile: &AppPortProfile) -> Value {
    let mut view = json!(profile);
    view["usableForNAT"] = json!(profile.usable_for_nat());
    view["status"] = json!("REALIZED");
    view
}

fn owner(profile: &AppPortProfile) -> TaskOwner {
    let id = profile.id.clone().unwrap_or_default();
    TaskOwner {
        href_path: format!("/applicationPortProfiles/{id}"),
        id,
        name: profile.name.clone(),
        media_type: "application/json".to_string(),
    }
}

/// `_context==<VDC or group id>` keeps the profiles usable there: SYSTEM
/// and PROVIDER ones and the TENANT ones of the context's org.
async fn list_profiles(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let (list_params, context) = context_params(&params, STANDARD)?;
    let items = {
        let world = state.world();
        let context_org = context.map(|id| world.context_org(&id).map(str::to_string));
        world
            .port_profiles
            .iter()
            .filter(|p| visible(&principal, p))
            .filter(|p| match (&context_org, &p.org_ref) {
                (Some(org), Some(owner)) => org.as_deref() == Some(owner.id.as_str()),
                (Some(org), None) => org.is_some(),
                (None, _) => true,
            })
            .map(profile_view)
            .collect()
    };
    let default_sort = Some(Sort::ascending("name"));
    let path = "/applicationPortProfiles";
    Ok(list_parsed(
        &state,
        path,
        &list_params,
        items,
        default_sort,
        "ApplicationPortProfiles",
    ))
}

fn visible_profile<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a AppPortProfile> {
    find(&world.port_profiles, id)
        .filter(|p| visible(principal, p))
        .ok_or_else(|| ApiError::forbidden(id))
}

async fn get_profile(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(&profile_view(visible_profile(
        &world, &principal, &id,
    )?)))
}

/// Shape, scope and name checks; `own_id` is the profile being replaced.
fn validate(
    world: &World,
    principal: &Principal,
    profile: &AppPortProfile,
    own_id: Option<&str>,
) -> ApiResult<()> {
    match profile.scope.as_str() {
        "TENANT" => {
            let org = profile
                .org_ref
                .as_ref()
                .ok_or_else(|| ApiError::bad_request("orgRef is required for a TENANT profile."))?;
            if find(&world.orgs, &org.id).is_none() || !principal.sees(&org.id) {
                return Err(ApiError::forbidden(&org.id));
            }
        }
        "PROVIDER" => principal.require_provider()?,
        other => {
            return Err(ApiError::bad_request(format!(
                "Profiles of scope {other} cannot be written."
            )));
        }
    }
    if profile.application_ports.is_empty() {
        return Err(ApiError::bad_request("applicationPorts must not be empty."));
    }
    if let Some(port) = profile
        .application_ports
        .iter()
        .find(|p| !PROTOCOLS.contains(&p.protocol.as_str()))
    {
        return Err(ApiError::bad_request(format!(
            "Invalid protocol {}.",
            port.protocol
        )));
    }
    let org_id = profile.org_ref.as_ref().map(|o| o.id.as_str());
    if own_id.is_none() && profile.scope == "TENANT" {
        let context = profile.context_entity_id.as_deref().unwrap_or_default();
        if world.context_org(context).is_none() || world.context_org(context) != org_id {
            return Err(ApiError::bad_request(format!(
                "contextEntityId {context} is not a VDC or VDC group of the profile's organization."
            )));
        }
    }
    let duplicate = world.port_profiles.iter().any(|p| {
        p.name == profile.name
            && p.scope == profile.scope
            && p.org_ref.as_ref().map(|o| o.id.as_str()) == org_id
            && p.id.as_deref() != own_id
    });
    if duplicate {
        return Err(ApiError::duplicate_name(
            "application port profile",
            &profile.name,
            "this organization",
        ));
    }
    Ok(())
}

async fn create_profile(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut profile: AppPortProfile = parse_body(&body)?;
    if profile.context_entity_id.is_none() {
        return Err(ApiError::bad_request("contextEntityId is required."));
    }
    profile.id = Some(new_urn("applicationPortProfile"));
    let org_id = profile
        .org_ref
        .as_ref()
        .map(|o| o.id.clone())
        .unwrap_or_else(|| principal.org.id.clone());
    let request = TaskRequest {
        operation_name: "createApplicationPortProfile",
        operation: format!("Creating application port profile {}", profile.name),
        gateway_id: None,
        owner: owner(&profile),
        org_id,
    };
    let (check_profile, effect_principal, check_principal) =
        (profile.clone(), principal.clone(), principal.clone());
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &effect_principal, &profile, None)?;
        world.port_profiles.push(profile);
        Ok(None)
    });
    let check = move |w: &World| validate(w, &check_principal, &check_profile, None);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

/// A user-defined profile the principal may change.
fn writable<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a AppPortProfile> {
    let profile = visible_profile(world, principal, id)?;
    if profile.scope == "SYSTEM" {
        return Err(ApiError::bad_request(
            "SYSTEM application port profiles are read-only.",
        ));
    }
    Ok(profile)
}

async fn update_profile(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut profile: AppPortProfile = parse_body(&body)?;
    let (profile_id, org_ref) = {
        let world = state.world();
        let existing = writable(&world, &principal, &id)?;
        (
            existing.id.clone().unwrap_or_default(),
            existing.org_ref.clone(),
        )
    };
    // orgRef is immutable.
    profile.id = Some(profile_id.clone());
    profile.org_ref = org_ref;
    let org_id = profile
        .org_ref
        .as_ref()
        .map_or_else(|| principal.org.id.clone(), |o| o.id.clone());
    let request = TaskRequest {
        operation_name: "updateApplicationPortProfile",
        operation: format!("Updating application port profile {}", profile.name),
        gateway_id: None,
        owner: owner(&profile),
        org_id,
    };
    let (check_profile, check_principal, effect_principal) =
        (profile.clone(), principal.clone(), principal.clone());
    let check_id = profile_id.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &effect_principal, &profile, Some(&profile_id))?;
        let stored = find_mut(&mut world.port_profiles, &profile_id)
            .ok_or_else(|| ApiError::forbidden(&profile_id))?;
        *stored = profile;
        Ok(None)
    });
    let check = move |w: &World| validate(w, &check_principal, &check_profile, Some(&check_id));
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

fn check_unreferenced(world: &World, profile_id: &str) -> ApiResult<()> {
    let user = world.nat_rules.iter().find(|r| {
        r.body
            .application_port_profile
            .as_ref()
            .is_some_and(|p| crate::ids::same_id(profile_id, &p.id))
    });
    match user {
        Some(rule) => Err(ApiError::bad_request(format!(
            "The application port profile is used by NAT rule {}.",
            rule.body.name
        ))),
        None => Ok(()),
    }
}

async fn delete_profile(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (profile_owner, org_id, profile_id) = {
        let world = state.world();
        let existing = writable(&world, &principal, &id)?;
        let org = existing
            .org_ref
            .as_ref()
            .map_or_else(|| principal.org.id.clone(), |o| o.id.clone());
        (
            owner(existing),
            org,
            existing.id.clone().unwrap_or_default(),
        )
    };
    let request = TaskRequest {
        operation_name: "deleteApplicationPortProfile",
        operation: format!("Deleting application port profile {}", profile_owner.name),
        gateway_id: None,
        owner: profile_owner,
        org_id,
    };
    let check_id = profile_id.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        check_unreferenced(world, &profile_id)?;
        remove(&mut world.port_profiles, &profile_id);
        Ok(None)
    });
    let task_id = tasks::submit(
        &state,
        &principal,
        request,
        move |w| check_unreferenced(w, &check_id),
        effect,
    )
    .await?;
    Ok(respond::accepted(&state, &task_id))
}

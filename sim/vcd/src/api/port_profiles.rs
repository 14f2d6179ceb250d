//! `/cloudapi/1.0.0/applicationPortProfiles`: SYSTEM and PROVIDER profiles
//! are visible to all, TENANT profiles to their org; SYSTEM is read-only.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, InContext, Listed, get_item, list_items_in_context};
use super::parse_body;
use super::task_writes::{Operations, Placement, Writable, create, delete_item, replace};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::state::AppState;
use crate::world::nat::AppPortProfile;
use crate::world::{Keyed, World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/applicationPortProfiles",
            get(list_items_in_context::<PortProfiles>).post(create_profile),
        )
        .route(
            "/cloudapi/1.0.0/applicationPortProfiles/{id}",
            get(get_item::<PortProfiles>)
                .put(update_profile)
                .delete(delete_item::<PortProfiles>),
        )
}

const PROTOCOLS: [&str; 4] = ["TCP", "UDP", "ICMPv4", "ICMPv6"];

fn profile_view(profile: &AppPortProfile) -> Value {
    let mut view = json!(profile);
    view["usableForNAT"] = json!(profile.usable_for_nat());
    view["status"] = json!("REALIZED");
    view
}

pub(super) struct PortProfiles;

impl Collection for PortProfiles {
    type Item = AppPortProfile;

    fn all(world: &World) -> &[AppPortProfile] {
        &world.port_profiles
    }

    /// SYSTEM and PROVIDER profiles, and the TENANT ones of the
    /// principal's org.
    fn visible(_world: &World, principal: &Principal, profile: &AppPortProfile) -> bool {
        profile
            .org_ref
            .as_ref()
            .is_none_or(|org| principal.sees(&org.id))
    }

    fn view(_world: &World, profile: &AppPortProfile) -> Value {
        profile_view(profile)
    }
}

impl Listed for PortProfiles {
    const LIST_PATH: &'static str = "/applicationPortProfiles";
    const MODEL: &'static str = "ApplicationPortProfiles";
}

/// `_context==<VDC or group id>` keeps the profiles usable there: SYSTEM
/// and PROVIDER ones and the TENANT ones of the context's org.
impl InContext for PortProfiles {
    fn in_context(world: &World, context: &str, profile: &AppPortProfile) -> bool {
        let org = world.context_org(context);
        match &profile.org_ref {
            Some(owner) => org == Some(owner.id.as_str()),
            None => org.is_some(),
        }
    }
}

impl Writable for PortProfiles {
    const NOUN: &'static str = "application port profile";
    const PATH: &'static str = "/applicationPortProfiles";
    const OPERATIONS: Operations = Operations {
        create: "createApplicationPortProfile",
        update: "updateApplicationPortProfile",
        delete: "deleteApplicationPortProfile",
    };

    fn all_mut(world: &mut World) -> &mut Vec<AppPortProfile> {
        &mut world.port_profiles
    }

    fn name(profile: &AppPortProfile) -> &str {
        &profile.name
    }

    /// A PROVIDER profile's tasks are recorded for the caller's org.
    fn placement(_world: &World, principal: &Principal, profile: &AppPortProfile) -> Placement {
        let org = profile.org_ref.as_ref().unwrap_or(&principal.org);
        Placement {
            gateway_id: None,
            org_id: org.id.clone(),
        }
    }

    /// SYSTEM profiles are read-only.
    fn writable<'a>(
        world: &'a World,
        principal: &Principal,
        id: &str,
    ) -> ApiResult<&'a AppPortProfile> {
        let profile = Self::find_visible(world, principal, id)?;
        if profile.scope == "SYSTEM" {
            return Err(ApiError::bad_request(
                "SYSTEM application port profiles are read-only.",
            ));
        }
        Ok(profile)
    }

    /// A profile a NAT rule uses cannot be deleted.
    fn check_removable(world: &World, profile: &AppPortProfile) -> ApiResult<()> {
        let user = world.nat_rules.iter().find(|r| {
            r.body
                .application_port_profile
                .as_ref()
                .is_some_and(|p| same_id(profile.key(), &p.id))
        });
        match user {
            Some(rule) => Err(ApiError::bad_request(format!(
                "The application port profile is used by NAT rule {}.",
                rule.body.name
            ))),
            None => Ok(()),
        }
    }
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
    let placement = PortProfiles::placement(&state.world(), &principal, &profile);
    let (checked, check_principal) = (profile.clone(), principal.clone());
    let check = move |w: &World| validate(w, &check_principal, &checked, None);
    create::<PortProfiles>(&state, &principal, profile, placement, check).await
}

async fn update_profile(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut profile: AppPortProfile = parse_body(&body)?;
    let placement = {
        let world = state.world();
        let existing = PortProfiles::writable(&world, &principal, &id)?;
        // orgRef is immutable.
        profile.id = Some(existing.key().to_string());
        profile.org_ref = existing.org_ref.clone();
        PortProfiles::placement(&world, &principal, &profile)
    };
    let (checked, check_principal) = (profile.clone(), principal.clone());
    let check = move |w: &World| validate(w, &check_principal, &checked, Some(checked.key()));
    replace::<PortProfiles>(&state, &principal, profile, placement, check).await
}

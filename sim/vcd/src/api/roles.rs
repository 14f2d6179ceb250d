//! `GET /cloudapi/1.0.0/roles/{id}/rights`: the rights of a role, as a page
//! of references. A user reads its own org's roles (a sysadmin narrowed to
//! a tenant still its own); another org's role is a 403, as a missing one
//! is.

use std::hash::{DefaultHasher, Hash, Hasher};

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::json;

use super::{Params, list};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::urn;
use crate::paging::{STANDARD, Sort};
use crate::state::AppState;
use crate::world::{Ref, find};

pub fn routes() -> Router<AppState> {
    Router::new().route("/cloudapi/1.0.0/roles/{id}/rights", get(role_rights))
}

/// A right's URN: the same for one name in every org, as VCD's rights are
/// global objects.
fn right_id(name: &str) -> String {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    let hash = hasher.finish();
    urn(
        "right",
        &uuid::Uuid::from_u64_pair(hash, hash.rotate_left(17)).to_string(),
    )
}

async fn role_rights(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let rights = {
        let world = state.world();
        let role = find(&world.roles, &id)
            .filter(|r| principal.sees(&r.org_id) || r.org_id == principal.org.id)
            .ok_or_else(|| ApiError::forbidden(&id))?;
        role.rights
            .iter()
            .map(|name| json!(Ref::new(name, &right_id(name))))
            .collect()
    };
    list(
        &state,
        &format!("/roles/{id}/rights"),
        &params,
        STANDARD,
        rights,
        Some(Sort::ascending("name")),
        "EntityReferences",
    )
}

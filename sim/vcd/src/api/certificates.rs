//! `/cloudapi/1.0.0/ssl/certificateLibrary`: org-scoped, synchronous
//! writes, unique aliases per org, in-use certificates cannot be deleted.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::{Params, list, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::paging::{STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::library::{Certificate, CertificateItem};
use crate::world::{World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/ssl/certificateLibrary",
            get(list_certificates).post(create_certificate),
        )
        .route(
            "/cloudapi/1.0.0/ssl/certificateLibrary/{id}",
            get(get_certificate)
                .put(update_certificate)
                .delete(delete_certificate),
        )
}

fn visible_certificate<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a Certificate> {
    find(&world.certificates, id)
        .filter(|c| principal.sees(&c.org_id))
        .ok_or_else(|| ApiError::forbidden(id))
}

fn check_alias(world: &World, org_id: &str, alias: &str, own_id: Option<&str>) -> ApiResult<()> {
    if alias.trim().is_empty() {
        return Err(ApiError::bad_request("alias must not be empty."));
    }
    let taken = world
        .certificates
        .iter()
        .any(|c| c.org_id == org_id && c.item.alias == alias && c.item.id.as_deref() != own_id);
    if taken {
        return Err(ApiError::duplicate_name(
            "certificate",
            alias,
            "the certificate library of this organization",
        ));
    }
    Ok(())
}

async fn list_certificates(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = state
        .world()
        .certificates
        .iter()
        .filter(|c| principal.sees(&c.org_id))
        .map(|c| json!(c.item))
        .collect();
    list(
        &state,
        "/ssl/certificateLibrary",
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("alias")),
        "CertificateLibraryItems",
    )
}

async fn get_certificate(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(
        &visible_certificate(&world, &principal, &id)?.item,
    ))
}

async fn create_certificate(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut item: CertificateItem = parse_body(&body)?;
    let org_id = principal.view.clone().ok_or_else(|| {
        ApiError::bad_request("A certificate belongs to an org: send a tenant context.")
    })?;
    let mut world = state.world();
    check_alias(&world, &org_id, &item.alias, None)?;
    item.id = Some(new_urn("certificateLibraryItem"));
    world.certificates.push(Certificate {
        org_id,
        item: item.clone(),
    });
    Ok(respond::json(StatusCode::CREATED, &item))
}

async fn update_certificate(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut item: CertificateItem = parse_body(&body)?;
    let mut world = state.world();
    let existing = visible_certificate(&world, &principal, &id)?;
    let (org_id, cert_id) = (existing.org_id.clone(), existing.item.id.clone());
    check_alias(&world, &org_id, &item.alias, cert_id.as_deref())?;
    item.id = cert_id;
    let stored = find_mut(&mut world.certificates, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    stored.item = item.clone();
    Ok(respond::ok(&item))
}

async fn delete_certificate(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let mut world = state.world();
    let cert_id = visible_certificate(&world, &principal, &id)?
        .item
        .id
        .clone()
        .unwrap_or_default();
    if let Some(vs) = world.virtual_services.iter().find(|vs| {
        vs.certificate_ref
            .as_ref()
            .is_some_and(|c| same_id(&cert_id, &c.id))
    }) {
        return Err(ApiError::bad_request(format!(
            "The certificate is used by virtual service {}.",
            vs.name
        )));
    }
    remove(&mut world.certificates, &cert_id);
    Ok(StatusCode::NO_CONTENT.into_response())
}

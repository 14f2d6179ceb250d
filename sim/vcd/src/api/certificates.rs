//! `/cloudapi/1.0.0/ssl/certificateLibrary`: org-scoped, synchronous
//! writes, unique aliases per org, in-use certificates cannot be deleted.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, get_item, list_items};
use super::parse_body;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::paging::Sort;
use crate::respond;
use crate::state::AppState;
use crate::world::library::{Certificate, CertificateItem};
use crate::world::{World, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/ssl/certificateLibrary",
            get(list_items::<Certificates>).post(create_certificate),
        )
        .route(
            "/cloudapi/1.0.0/ssl/certificateLibrary/{id}",
            get(get_item::<Certificates>)
                .put(update_certificate)
                .delete(delete_certificate),
        )
}

pub(super) struct Certificates;

impl Collection for Certificates {
    type Item = Certificate;

    fn all(world: &World) -> &[Certificate] {
        &world.certificates
    }

    fn visible(_world: &World, principal: &Principal, certificate: &Certificate) -> bool {
        principal.sees(&certificate.org_id)
    }

    fn view(_world: &World, certificate: &Certificate) -> Value {
        json!(certificate.item)
    }
}

impl Listed for Certificates {
    const LIST_PATH: &'static str = "/ssl/certificateLibrary";
    const MODEL: &'static str = "CertificateLibraryItems";

    fn default_sort() -> Option<Sort> {
        Some(Sort::ascending("alias"))
    }
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
    let existing = Certificates::find_visible(&world, &principal, &id)?;
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
    let cert_id = Certificates::find_visible(&world, &principal, &id)?
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

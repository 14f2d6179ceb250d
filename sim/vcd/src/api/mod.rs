//! The HTTP surface, one module per resource family. The families share
//! `collection` (list and get) and `task_writes` (writes as tasks).

mod admin;
mod alb_health_monitors;
mod alb_http_policies;
mod alb_monitor_assignments;
mod alb_pool_monitors;
mod alb_pool_persistence;
mod alb_pool_views;
mod alb_pools;
mod alb_virtual_service_checks;
mod alb_virtual_service_versions;
mod alb_virtual_service_vips;
mod alb_virtual_services;
mod certificates;
mod collection;
mod entities;
mod firewall;
mod firewall_checks;
mod firewall_groups;
mod gateways;
mod ip_allocations;
mod ip_spaces;
mod legacy;
mod login;
mod nat;
mod networks;
mod orgs;
mod port_profiles;
mod roles;
mod segs;
#[cfg(test)]
mod strict_bodies;
mod task_writes;
mod vdc_groups;

use std::collections::HashMap;

use axum::Router;
use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::collection::{Sublist, list_within};
use self::gateways::Gateways;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{self, ListParams, PageLimits, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::World;
use crate::world::network::EdgeGateway;

/// Every simulated endpoint; the admin API under `/_sim/` included.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(login::routes())
        .merge(orgs::routes())
        .merge(vdc_groups::routes())
        .merge(networks::routes())
        .merge(gateways::routes())
        .merge(ip_spaces::routes())
        .merge(ip_allocations::routes())
        .merge(nat::routes())
        .merge(firewall::routes())
        .merge(firewall_groups::routes())
        .merge(port_profiles::routes())
        .merge(roles::routes())
        .merge(segs::routes())
        .merge(certificates::routes())
        .merge(alb_pools::routes())
        .merge(alb_virtual_services::routes())
        .merge(alb_http_policies::routes())
        .merge(alb_health_monitors::routes())
        .merge(alb_monitor_assignments::routes())
        .merge(entities::routes())
        .merge(legacy::routes())
}

/// Admin routes: kept apart so faults and the request log skip them.
pub fn admin_router() -> Router<AppState> {
    admin::routes()
}

/// Query parameters; a malformed query is a CloudAPI `BAD_REQUEST`.
pub struct Params(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(params)| Params(params))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// A JSON request body; a malformed one is a CloudAPI `BAD_REQUEST`.
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "Invalid request body: {}",
            crate::strict::body_error(&e)
        ))
    })
}

/// Answers one page of `items` (already visible to the caller).
pub fn list(
    state: &AppState,
    path: &str,
    params: &Params,
    limits: PageLimits,
    items: Vec<Value>,
    default_sort: Option<Sort>,
    model: &str,
) -> ApiResult<Response> {
    let params = ListParams::parse(&params.0, limits)?;
    Ok(list_parsed(
        state,
        path,
        &params,
        items,
        default_sort,
        model,
    ))
}

/// A gateway's `…/loadBalancer/{kind}Summaries` (`kind` as in the path,
/// e.g. `pool`), by name: what `items` gives of a gateway the principal
/// sees.
pub fn gateway_summaries(
    state: &AppState,
    principal: &Principal,
    gateway_id: &str,
    params: &Params,
    (kind, model): (&str, &'static str),
    items: impl FnOnce(&World, &EdgeGateway) -> Vec<Value>,
) -> ApiResult<Response> {
    let sublist = Sublist {
        path: format!("/edgeGateways/{gateway_id}/loadBalancer/{kind}Summaries"),
        model,
        default_sort: Some(Sort::ascending("name")),
    };
    list_within::<Gateways>(state, principal, gateway_id, params, sublist, items)
}

/// The list parameters with the `_context==<urn>` pseudo-field taken out of
/// the filter, and its value.
pub fn context_params(
    params: &Params,
    limits: PageLimits,
) -> ApiResult<(ListParams, Option<String>)> {
    let mut list_params = ListParams::parse(&params.0, limits)?;
    let (context, rest) = match list_params.filter.take() {
        Some(filter) => filter.take_equality("_context"),
        None => (None, None),
    };
    list_params.filter = rest;
    Ok((list_params, context))
}

/// Like [`list`], for endpoints that first take pseudo-fields out of the filter.
pub fn list_parsed(
    state: &AppState,
    path: &str,
    params: &ListParams,
    items: Vec<Value>,
    default_sort: Option<Sort>,
    model: &str,
) -> Response {
    let selected = params.select(items, default_sort);
    respond::page(paging::page(
        selected,
        params,
        &state.cloudapi_url(path),
        model,
    ))
}

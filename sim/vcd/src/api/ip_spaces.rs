//! IP Spaces: summaries, one space and floating-IP suggestions.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::gateways::visible_gateway;
use super::{Params, list, list_parsed};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{ListParams, STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::ip_space::{IpAllocation, IpSpace};
use crate::world::{Ref, World, find};

pub fn routes() -> Router<AppState> {
    let base = "/cloudapi/1.0.0/ipSpaces";
    Router::new()
        .route(&format!("{base}/summaries"), get(summaries))
        .route(&format!("{base}/floatingIpSuggestions"), get(suggestions))
        .route(&format!("{base}/{{id}}"), get(get_space))
}

/// The org a tenant-scoped write acts for: the tenant's own, or the org a
/// sysadmin names in the tenant-context header.
pub(super) fn acting_org(principal: &Principal) -> ApiResult<String> {
    principal.view.clone().ok_or_else(|| {
        ApiError::bad_request(
            "This operation needs a tenant context (X-VMWARE-VCLOUD-TENANT-CONTEXT).",
        )
    })
}

/// PUBLIC spaces are visible to orgs whose gateways reach them or that
/// have a quota in them; PRIVATE ones to their owner.
fn space_visible(world: &World, principal: &Principal, space: &IpSpace) -> bool {
    let Some(org) = principal.view.as_deref() else {
        return true;
    };
    match space.org_id.as_deref() {
        Some(owner) => owner == org,
        None => {
            space.org_quotas.contains_key(org)
                || world
                    .gateways
                    .iter()
                    .any(|g| g.org_id == org && g.ip_space_ids.contains(&space.id))
        }
    }
}

pub(super) fn visible_space<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a IpSpace> {
    find(&world.ip_spaces, id)
        .filter(|s| space_visible(world, principal, s))
        .ok_or_else(|| ApiError::forbidden(id))
}

fn percentage(part: usize, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

fn summary_view(world: &World, space: &IpSpace) -> Value {
    let allocations: Vec<&IpAllocation> = world
        .ip_allocations
        .iter()
        .filter(|a| a.space_id == space.id)
        .collect();
    let used = allocations
        .iter()
        .filter(|a| world.allocation_use(a).state != "UNUSED")
        .count();
    let total = space.total_ips();
    json!({
        "status": "REALIZED",
        "id": space.id,
        "name": space.name,
        "description": space.description,
        "type": space.space_type,
        "orgRef": space.org_id.as_ref().map(|o| world.org_ref(o)),
        "utilization": {"floatingIPs": {
            "totalCount": total.to_string(),
            "allocatedCount": allocations.len().to_string(),
            "usedCount": used.to_string(),
            "unusedCount": (allocations.len() - used).to_string(),
            "allocatedPercentage": percentage(allocations.len(), total),
            "usedPercentage": percentage(used, total),
        }},
    })
}

fn space_view(world: &World, space: &IpSpace) -> Value {
    let mut view = summary_view(world, space);
    let ranges: Vec<Value> = space
        .ranges
        .iter()
        .map(|r| {
            let allocated = world
                .ip_allocations
                .iter()
                .filter(|a| a.space_id == space.id && r.range.contains(a.value))
                .count();
            json!({
                "id": r.id,
                "startIpAddress": r.range.start_address.to_string(),
                "endIpAddress": r.range.end_address.to_string(),
                "totalIpCount": r.range.size().to_string(),
                "allocatedIpCount": allocated.to_string(),
                "allocatedIpPercentage": percentage(allocated, r.range.size()),
            })
        })
        .collect();
    view["ipSpaceRanges"] =
        json!({"ipRanges": ranges, "defaultFloatingIpQuota": space.default_floating_ip_quota});
    view["ipSpacePrefixes"] = json!([]);
    view["ipSpaceInternalScope"] = json!(space.internal_scope);
    view["ipSpaceExternalScope"] = json!(space.external_scope);
    view["routeAdvertisementEnabled"] = json!(false);
    view
}

async fn summaries(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .ip_spaces
            .iter()
            .filter(|s| space_visible(&world, &principal, s))
            .map(|s| summary_view(&world, s))
            .collect()
    };
    list(
        &state,
        "/ipSpaces/summaries",
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "IpSpaceSummaries",
    )
}

async fn get_space(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let space = visible_space(&world, &principal, &id)?;
    Ok(respond::ok(&space_view(&world, space)))
}

/// Per space reachable from the gateway, the org's allocated unused IPs
/// (one entry per space even when it has none). `gatewayId==` is required;
/// `ipType==IPV4|IPV6` keeps the spaces of that family and their unused
/// IPs of that family (any other value matches nothing).
async fn suggestions(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let mut list_params = ListParams::parse(&params.0, STANDARD)?;
    let (gateway_id, rest) = match list_params.filter.take() {
        Some(filter) => filter.take_equality("gatewayId"),
        None => (None, None),
    };
    let (ip_type, rest) = match rest {
        Some(filter) => filter.take_equality("ipType"),
        None => (None, None),
    };
    list_params.filter = rest;
    let gateway_id =
        gateway_id.ok_or_else(|| ApiError::bad_request("The filter must name gatewayId."))?;
    // Whether the family (true for IPv6) is asked for; an unknown type
    // matches none.
    let wanted = |ipv6: bool| match ip_type.as_deref() {
        None => true,
        Some("IPV4") => !ipv6,
        Some("IPV6") => ipv6,
        Some(_) => false,
    };
    let items: Vec<Value> = {
        let world = state.world();
        let gateway = visible_gateway(&world, &principal, &gateway_id)?;
        if !gateway.uplink.using_ip_space {
            return Err(ApiError::forbidden(&gateway_id));
        }
        gateway
            .ip_space_ids
            .iter()
            .filter_map(|id| find(&world.ip_spaces, id))
            .filter(|space| {
                ip_type.is_none()
                    || [false, true]
                        .into_iter()
                        .any(|ipv6| wanted(ipv6) && space.has_family(ipv6))
            })
            .map(|space| {
                let unused: Vec<String> = world
                    .org_allocations(&space.id, &gateway.org_id)
                    .filter(|a| wanted(a.value.is_ipv6()))
                    .filter(|a| world.allocation_use(a).state == "UNUSED")
                    .map(|a| a.value.to_string())
                    .collect();
                json!({"ipSpaceRef": Ref::new(&space.name, &space.id), "unusedValues": unused})
            })
            .collect()
    };
    Ok(list_parsed(
        &state,
        "/ipSpaces/floatingIpSuggestions",
        &list_params,
        items,
        Some(Sort::ascending("ipSpaceRef.name")),
        "IpSpaceFloatingIpSuggestions",
    ))
}

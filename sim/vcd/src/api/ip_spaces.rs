//! IP Spaces: summaries, one space and floating-IP suggestions.

use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, get_item, list_items};
use super::gateways::Gateways;
use super::{Params, list_parsed};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{ListParams, STANDARD, Sort};
use crate::state::AppState;
use crate::world::ip_space::{IpAllocation, IpSpace};
use crate::world::{Ref, World, find};

pub fn routes() -> Router<AppState> {
    let base = "/cloudapi/1.0.0/ipSpaces";
    Router::new()
        .route(&format!("{base}/summaries"), get(list_items::<IpSpaces>))
        .route(&format!("{base}/floatingIpSuggestions"), get(suggestions))
        .route(&format!("{base}/{{id}}"), get(get_item::<IpSpaces>))
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

/// The list is of summaries; `GET …/{id}` shows ranges and scopes too.
pub(super) struct IpSpaces;

impl Collection for IpSpaces {
    type Item = IpSpace;

    fn all(world: &World) -> &[IpSpace] {
        &world.ip_spaces
    }

    /// PUBLIC spaces are visible to orgs whose gateways reach them or that
    /// have a quota in them; PRIVATE ones to their owner.
    fn visible(world: &World, principal: &Principal, space: &IpSpace) -> bool {
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

    fn view(world: &World, space: &IpSpace) -> Value {
        space_view(world, space)
    }
}

impl Listed for IpSpaces {
    const LIST_PATH: &'static str = "/ipSpaces/summaries";
    const MODEL: &'static str = "IpSpaceSummaries";

    fn list_view(world: &World, space: &IpSpace) -> Value {
        summary_view(world, space)
    }
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
        let gateway = Gateways::find_visible(&world, &principal, &gateway_id)?;
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

//! `/cloudapi/1.0.0/orgVdcNetworks` (page size at most 32).

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, context_params, list_parsed};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{NETWORKS, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::network::OrgVdcNetwork;
use crate::world::{World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/orgVdcNetworks", get(list_networks))
        .route("/cloudapi/1.0.0/orgVdcNetworks/{id}", get(get_network))
}

fn network_view(world: &World, network: &OrgVdcNetwork) -> Value {
    // The spec: "If the network contains any IpV6 subnets, the total ip
    // count will be null."
    let total = (!network.subnet.gateway.is_ipv6())
        .then(|| network.subnet.ranges.iter().map(|r| r.size()).sum::<u128>() as u64);
    let used = world
        .vms
        .iter()
        .flat_map(|vm| vm.nics.iter())
        .filter(|nic| nic.network == network.name)
        .count();
    let connection = network.gateway_id.as_ref().map(|gateway_id| {
        json!({
            "routerRef": world.gateway_ref(gateway_id),
            "connectionType": "INTERNAL",
            "connectionTypeValue": "INTERNAL",
            "connected": true,
        })
    });
    let ranges: Vec<Value> = network.subnet.ranges.iter().map(|r| json!(r)).collect();
    json!({
        "id": network.id,
        "name": network.name,
        "description": network.description,
        "subnets": {"values": [{
            "gateway": network.subnet.gateway.to_string(),
            "prefixLength": network.subnet.prefix_length,
            "dnsSuffix": "",
            "dnsServer1": "",
            "dnsServer2": "",
            "ipRanges": {"values": ranges},
            "enabled": true,
            "totalIpCount": total,
            "usedIpCount": used,
        }]},
        "backingNetworkId": null,
        "backingNetworkType": network.backing_type,
        "parentNetworkId": null,
        "networkType": network.network_type,
        "orgVdc": world.owner_vdc_ref(&network.owner_id),
        "ownerRef": world.owner_ref(&network.owner_id),
        "orgVdcIsNsxTBacked": true,
        "orgRef": world.org_ref(&network.org_id),
        "connection": connection,
        "isDefaultNetwork": false,
        "shared": false,
        "enableDualSubnetNetwork": false,
        "status": "REALIZED",
        "guestVlanTaggingAllowed": false,
        "retainNicResources": false,
        "totalIpCount": total,
        "usedIpCount": used,
        "routeAdvertised": false,
    })
}

/// `_context==<VDC or group URN>` keeps the networks usable there: a VDC's
/// own and those of the groups it belongs to. A plain `orgVdc.id==` filter
/// never matches a group's network (its `orgVdc` is null).
async fn list_networks(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let (list_params, context) = context_params(&params, NETWORKS)?;
    let items = {
        let world = state.world();
        world
            .networks
            .iter()
            .filter(|n| principal.sees(&n.org_id))
            .filter(|n| {
                context
                    .as_deref()
                    .is_none_or(|c| world.usable_in(&n.owner_id, c))
            })
            .map(|n| network_view(&world, n))
            .collect()
    };
    Ok(list_parsed(
        &state,
        "/orgVdcNetworks",
        &list_params,
        items,
        Some(Sort::ascending("name")),
        "VdcNetworks",
    ))
}

async fn get_network(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let network = find(&world.networks, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    principal.check(Some(&network.org_id), &id)?;
    Ok(respond::ok(&network_view(&world, network)))
}

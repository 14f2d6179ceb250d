//! `/cloudapi/1.0.0/orgVdcNetworks` (page size at most 32).

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, list};
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
        "orgVdc": world.vdc_ref(&network.vdc_id),
        "ownerRef": world.vdc_ref(&network.vdc_id),
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

async fn list_networks(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        world
            .networks
            .iter()
            .filter(|n| principal.sees(&n.org_id))
            .map(|n| network_view(&world, n))
            .collect()
    };
    list(
        &state,
        "/orgVdcNetworks",
        &params,
        NETWORKS,
        items,
        Some(Sort::ascending("name")),
        "VdcNetworks",
    )
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

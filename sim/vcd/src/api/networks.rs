//! `/cloudapi/1.0.0/orgVdcNetworks` (page size at most 32).

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

use super::collection::{Collection, InContext, Listed, get_item, list_items_in_context};
use crate::auth::Principal;
use crate::paging::{NETWORKS, PageLimits};
use crate::state::AppState;
use crate::world::World;
use crate::world::network::OrgVdcNetwork;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/orgVdcNetworks",
            get(list_items_in_context::<Networks>),
        )
        .route(
            "/cloudapi/1.0.0/orgVdcNetworks/{id}",
            get(get_item::<Networks>),
        )
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

pub(super) struct Networks;

impl Collection for Networks {
    type Item = OrgVdcNetwork;

    fn all(world: &World) -> &[OrgVdcNetwork] {
        &world.networks
    }

    fn visible(_world: &World, principal: &Principal, network: &OrgVdcNetwork) -> bool {
        principal.sees(&network.org_id)
    }

    fn view(world: &World, network: &OrgVdcNetwork) -> Value {
        network_view(world, network)
    }
}

impl Listed for Networks {
    const LIST_PATH: &'static str = "/orgVdcNetworks";
    const MODEL: &'static str = "VdcNetworks";
    const LIMITS: PageLimits = NETWORKS;
}

/// `_context==<VDC or group URN>` keeps the networks usable there: a VDC's
/// own and those of the groups it belongs to. A plain `orgVdc.id==` filter
/// never matches a group's network (its `orgVdc` is null).
impl InContext for Networks {
    fn in_context(world: &World, context: &str, network: &OrgVdcNetwork) -> bool {
        world.usable_in(&network.owner_id, context)
    }
}

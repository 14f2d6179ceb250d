//! `/cloudapi/1.0.0/edgeGateways`, `usedIpAddresses` and the gateway's
//! load balancer configuration.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use super::collection::{Collection, Listed, Sublist, get_item, list_items, list_within};
use super::task_writes::{submit_checked, task_owner};
use super::{Params, parse_body};
use crate::auth::Principal;
use crate::context;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::state::AppState;
use crate::strict::{ReadOnly, definition};
use crate::tasks::TaskRequest;
use crate::world::ip::parse_ipv6_cidr;
use crate::world::network::{DeploymentMode, EdgeGateway};
use crate::world::{Ref, World, find_mut};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/cloudapi/1.0.0/edgeGateways", get(list_items::<Gateways>))
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}",
            get(get_item::<Gateways>),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/usedIpAddresses",
            get(used_ip_addresses),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/loadBalancer",
            get(get_load_balancer).put(put_load_balancer),
        )
}

pub(super) struct Gateways;

impl Collection for Gateways {
    type Item = EdgeGateway;

    fn all(world: &World) -> &[EdgeGateway] {
        &world.gateways
    }

    fn visible(_world: &World, principal: &Principal, gateway: &EdgeGateway) -> bool {
        principal.sees(&gateway.org_id)
    }

    fn view(world: &World, gateway: &EdgeGateway) -> Value {
        gateway_view(world, gateway)
    }
}

impl Listed for Gateways {
    const LIST_PATH: &'static str = "/edgeGateways";
    const MODEL: &'static str = "EdgeGateways";
}

/// A gateway the principal may see that has a service router; a
/// distributed-only gateway has no `service` (NAT, gateway firewall): 400.
pub fn service_router_gateway<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
    service: &str,
) -> ApiResult<&'a EdgeGateway> {
    let gateway = Gateways::find_visible(world, principal, id)?;
    if gateway.deployment_mode == DeploymentMode::DistributedOnly {
        return Err(ApiError::bad_request(format!(
            "{service} is not supported on Edge Gateway {}: its deployment mode is DISTRIBUTED_ONLY, \
             which has no service router, so it has no NAT and no gateway firewall.",
            gateway.name
        )));
    }
    Ok(gateway)
}

fn gateway_view(world: &World, gateway: &EdgeGateway) -> Value {
    let used = world.used_ips(&gateway.id);
    let subnets: Vec<Value> = gateway
        .uplink
        .subnets
        .iter()
        .map(|subnet| {
            let total: u128 = subnet.ranges.iter().map(|r| r.size()).sum();
            let in_subnet = used
                .iter()
                .filter(|u| subnet.ranges.iter().any(|r| r.contains(u.ip)))
                .map(|u| u.ip)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            json!({
                "gateway": subnet.gateway.to_string(),
                "prefixLength": subnet.prefix_length,
                "dnsSuffix": null,
                "dnsServer1": "",
                "dnsServer2": "",
                "ipRanges": {"values": subnet.ranges},
                "enabled": true,
                // An integer in the spec; null where an IPv6 subnet's
                // count does not fit one.
                "totalIpCount": u64::try_from(total).ok(),
                "usedIpCount": in_subnet,
                "primaryIp": subnet.primary_ip.map(|ip| ip.to_string()),
                "autoAllocateIpRanges": false,
            })
        })
        .collect();
    let network_count = world
        .networks
        .iter()
        .filter(|n| n.gateway_id.as_deref() == Some(gateway.id.as_str()))
        .count();
    let mut view = json!({
        "status": gateway.status(),
        "id": gateway.id,
        "name": gateway.name,
        "description": gateway.description,
        "edgeGatewayUplinks": [{
            "uplinkId": gateway.uplink.id,
            "uplinkName": gateway.uplink.name,
            "subnets": {"values": subnets},
            "connected": true,
            "quickAddAllocatedIpCount": null,
            "dedicated": false,
            "usingIpSpace": gateway.uplink.using_ip_space,
            "vrfLiteBacked": false,
            "backingType": "NSXT_TIER0",
        }],
        "distributedRoutingEnabled": true,
        "nonDistributedRoutingEnabled": false,
        "orgVdcNetworkCount": network_count,
        "gatewayBacking": {
            "backingId": format!("nsxt-tier1-{}", gateway.name),
            "gatewayType": "NSXT_BACKED",
            "networkProvider": {"name": "nsxt-manager", "id": "urn:vcloud:nsxtmanager:00000000-0000-0000-0000-000000000001"},
        },
        "orgVdc": world.owner_vdc_ref(&gateway.owner_id),
        "ownerRef": world.owner_ref(&gateway.owner_id),
        "orgRef": world.org_ref(&gateway.org_id),
        "serviceNetworkDefinition": "192.168.255.225/27",
        "distributedRouterUplinkNetworkDefinition": null,
        "edgeClusterConfig": null,
    });
    // The field exists from API 39.0 (VCD 10.6).
    if context::api_at_least(39, 0) {
        view["deploymentMode"] = json!(gateway.deployment_mode.as_str());
    }
    view
}

async fn used_ip_addresses(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let sublist = Sublist {
        path: format!("/edgeGateways/{id}/usedIpAddresses"),
        model: "GatewayUsedIpAddresses",
        default_sort: None,
    };
    list_within::<Gateways>(
        &state,
        &principal,
        &id,
        &params,
        sublist,
        |world, gateway| {
            let uplink = json!({"name": gateway.uplink.name, "id": gateway.uplink.id});
            world
            .used_ips(&gateway.id)
            .into_iter()
            .map(|u| json!({"networkRef": uplink, "ipAddress": u.ip.to_string(), "category": u.category}))
            .collect()
        },
    )
}

fn load_balancer_view(gateway: &EdgeGateway) -> Value {
    let lb = &gateway.load_balancer;
    let mut view = json!({
        "enabled": lb.enabled,
        "serviceNetworkDefinition": lb.service_network_definition,
        "ipv6ServiceNetworkDefinition": lb.ipv6_service_network_definition,
        "loadBalancerCloudRef": {"name": "nsx-alb-cloud", "id": "urn:vcloud:loadBalancerCloud:00000000-0000-0000-0000-000000000001"},
        "licenseType": if lb.supported_feature_set == "PREMIUM" { "ENTERPRISE" } else { "BASIC" },
        "supportedFeatureSet": lb.supported_feature_set,
        "transparentModeEnabled": lb.transparent_mode_enabled,
    });
    // The setting exists from API 37.1 (VCD 10.4.1).
    if !context::api_at_least(37, 1)
        && let Some(object) = view.as_object_mut()
    {
        object.remove("transparentModeEnabled");
    }
    view
}

async fn get_load_balancer(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let gateway = Gateways::find_visible(&world, &principal, &id)?;
    Ok(respond::ok(&load_balancer_view(gateway)))
}

/// `EdgeGatewayLoadBalancerConfig` as PUT; the cloud and licence are
/// read-only.
#[derive(Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct LoadBalancerUpdate {
    enabled: bool,
    service_network_definition: Option<String>,
    supported_feature_set: Option<String>,
    transparent_mode_enabled: Option<bool>,
    #[serde(rename = "ipv6ServiceNetworkDefinition")]
    ipv6_service_network_definition: Option<String>,
    #[serde(default, rename = "loadBalancerCloudRef")]
    _load_balancer_cloud_ref: ReadOnly<Ref>,
    #[serde(default, rename = "licenseType")]
    _license_type: ReadOnly<String>,
}
definition!(LoadBalancerUpdate, "EdgeGatewayLoadBalancerConfig");

/// The spec: the IPv6 service network, "once set, this field cannot be
/// updated"; absent, a PUT leaves it alone.
fn check_ipv6_service_network(gateway: &EdgeGateway, update: &LoadBalancerUpdate) -> ApiResult<()> {
    let stored = gateway
        .load_balancer
        .ipv6_service_network_definition
        .as_deref();
    match (stored, update.ipv6_service_network_definition.as_deref()) {
        (Some(stored), Some(new)) if stored != new => Err(ApiError::bad_request(format!(
            "ipv6ServiceNetworkDefinition of edge gateway {} is {stored} and cannot be updated.",
            gateway.name
        ))),
        _ => Ok(()),
    }
}

async fn put_load_balancer(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    principal.require_provider()?;
    let update: LoadBalancerUpdate = parse_body(&body)?;
    if update.transparent_mode_enabled.is_some() && !context::api_at_least(37, 1) {
        return Err(ApiError::bad_request(format!(
            "transparentModeEnabled needs API version 37.1 or later, not {}.",
            context::current().api_version
        )));
    }
    if let Some(text) = &update.ipv6_service_network_definition {
        parse_ipv6_cidr(text).map_err(|e| ApiError::bad_request(e.to_string()))?;
    }
    let (gateway_id, owner, org_id) = {
        let world = state.world();
        let gateway = Gateways::find_visible(&world, &principal, &id)?;
        check_ipv6_service_network(gateway, &update)?;
        let href = format!("/edgeGateways/{}", gateway.id);
        let owner = task_owner(href, &gateway.id, &gateway.name);
        (gateway.id.clone(), owner, gateway.org_id.clone())
    };
    let request = TaskRequest {
        operation_name: "updateEdgeGatewayLoadBalancer",
        operation: format!("Updated load balancer of edge gateway {}", owner.name),
        gateway_id: Some(gateway_id.clone()),
        owner,
        org_id,
    };
    let apply = move |world: &mut World| {
        let gateway = find_mut(&mut world.gateways, &gateway_id)
            .ok_or_else(|| ApiError::forbidden(&gateway_id))?;
        // Another PUT may have set it while this one waited.
        check_ipv6_service_network(gateway, &update)?;
        let lb = &mut gateway.load_balancer;
        lb.enabled = update.enabled;
        if let Some(definition) = update.service_network_definition {
            lb.service_network_definition = definition;
        }
        if let Some(feature_set) = update.supported_feature_set {
            lb.supported_feature_set = feature_set;
        }
        if let Some(transparent) = update.transparent_mode_enabled {
            lb.transparent_mode_enabled = transparent;
        }
        if update.ipv6_service_network_definition.is_some() {
            lb.ipv6_service_network_definition = update.ipv6_service_network_definition;
        }
        Ok(())
    };
    submit_checked(&state, &principal, request, |_| Ok(()), apply).await
}

//! Edge gateways from their scenario form: uplink subnets (IPv4 and IPv6),
//! IP Spaces, SEG assignments, firewall and load-balancer settings.

use super::{dangling, group_id, parse_ranges, vdc_id};
use crate::ids::new_urn;
use crate::scenario::{GatewaySpec, GatewaySubnetSpec, ScenarioError};
use crate::world::World;
use crate::world::alb::SegAssignment;
use crate::world::firewall::GatewayFirewall;
use crate::world::ip::{Cidr, parse_ip, parse_ipv6_cidr};
use crate::world::network::{EdgeGateway, GatewaySubnet, LoadBalancerConfig, Uplink};

pub(super) fn add_gateway(
    world: &mut World,
    org_id: &str,
    spec: &GatewaySpec,
) -> Result<(), ScenarioError> {
    let owner_id = match (&spec.vdc, &spec.vdc_group) {
        (Some(vdc), None) => vdc_id(world, org_id, vdc)?,
        (None, Some(group)) => group_id(world, org_id, group)?,
        _ => return Err(ScenarioError::GatewayOwner(spec.name.clone())),
    };
    let subnets = spec
        .subnets
        .iter()
        .map(gateway_subnet)
        .collect::<Result<Vec<_>, _>>()?;
    let mut ip_space_ids = Vec::new();
    for name in &spec.ip_spaces {
        let space = world
            .ip_spaces
            .iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| dangling("IP Space", name, &spec.name))?;
        ip_space_ids.push(space.id.clone());
    }
    let gateway_id = new_urn("gateway");
    for assignment in &spec.service_engine_groups {
        let seg = world
            .service_engine_groups
            .iter()
            .find(|s| s.name == assignment.name)
            .ok_or_else(|| dangling("service engine group", &assignment.name, &spec.name))?;
        let seg_id = seg.id.clone();
        world.seg_assignments.push(SegAssignment {
            id: new_urn("serviceEngineGroupAssignment"),
            seg_id,
            gateway_id: gateway_id.clone(),
            max_virtual_services: assignment.max_virtual_services,
            min_virtual_services: assignment.min_virtual_services,
        });
    }
    world
        .gateway_firewalls
        .push(GatewayFirewall::new(&gateway_id));
    world.gateways.push(EdgeGateway {
        id: gateway_id.clone(),
        org_id: org_id.to_string(),
        owner_id,
        name: spec.name.clone(),
        description: String::new(),
        uplink: Uplink {
            id: new_urn("network"),
            name: spec.uplink.clone(),
            using_ip_space: !spec.ip_spaces.is_empty(),
            subnets,
        },
        ip_space_ids,
        load_balancer: LoadBalancerConfig {
            enabled: spec.load_balancer.enabled,
            service_network_definition: spec.load_balancer.service_network_definition.clone(),
            supported_feature_set: spec.load_balancer.supported_feature_set.clone(),
            transparent_mode_enabled: spec.load_balancer.transparent_mode_enabled,
            ipv6_service_network_definition: ipv6_service_network(spec)?,
        },
        busy: None,
        deployment_mode: spec.deployment_mode,
    });
    // VCD's default rules where an IP Space of the uplink asks for them.
    crate::world::default_services::apply(world, &gateway_id).ok();
    Ok(())
}

/// The load balancer's IPv6 service network, an IPv6 CIDR when given.
fn ipv6_service_network(spec: &GatewaySpec) -> Result<Option<String>, ScenarioError> {
    let definition = spec.load_balancer.ipv6_service_network_definition.clone();
    if let Some(text) = &definition {
        parse_ipv6_cidr(text)?;
    }
    Ok(definition)
}

/// One uplink subnet, IPv4 or IPv6; its primary IP and ranges must be of
/// the subnet's family.
fn gateway_subnet(subnet: &GatewaySubnetSpec) -> Result<GatewaySubnet, ScenarioError> {
    let cidr = Cidr::parse(&subnet.cidr)?;
    let primary_ip = subnet.primary_ip.as_deref().map(parse_ip).transpose()?;
    let ranges = parse_ranges(&subnet.ranges)?;
    let foreign = primary_ip
        .iter()
        .chain(ranges.iter().map(|r| &r.start_address))
        .find(|ip| ip.is_ipv6() != cidr.network.is_ipv6());
    if let Some(ip) = foreign {
        return Err(ScenarioError::Family {
            address: ip.to_string(),
            subnet: subnet.cidr.clone(),
        });
    }
    Ok(GatewaySubnet {
        gateway: cidr.network,
        prefix_length: cidr.prefix_length,
        primary_ip,
        ranges,
    })
}

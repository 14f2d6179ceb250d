//! The invariants of an ALB virtual service against the world: references
//! (pool on the same gateway, SEG assigned with room, certificate of the
//! org), names unique per gateway, TLS profiles, transparent mode (the
//! gateway's setting), and VIPs (`alb_virtual_service_vips`). Fields by
//! API version are in `alb_virtual_service_versions`.

use super::alb_virtual_service_vips::check_vips;
use crate::error::{ApiError, ApiResult};
use crate::ids::same_id;
use crate::world::alb::VirtualService;
use crate::world::{World, find};

const PROFILE_TYPES: [&str; 4] = ["HTTP", "HTTPS", "L4", "L4_TLS"];

fn bad(message: String) -> ApiError {
    ApiError::bad_request(message)
}

/// Every invariant of a virtual service against the world; `strict` also
/// requires an IP-Space VIP to be allocated to the gateway's org.
pub(super) fn validate(world: &World, vs: &VirtualService, strict: bool) -> ApiResult<()> {
    let gateway = find(&world.gateways, &vs.gateway_ref.id).ok_or_else(|| {
        bad(format!(
            "Edge gateway {} does not exist.",
            vs.gateway_ref.id
        ))
    })?;
    if !gateway.load_balancer.enabled {
        return Err(bad(format!(
            "The load balancer is not enabled on edge gateway {}.",
            gateway.name
        )));
    }
    if vs.transparent_mode_enabled == Some(true) && !gateway.load_balancer.transparent_mode_enabled
    {
        return Err(bad(format!(
            "Transparent mode is not enabled on the load balancer of edge gateway {}.",
            gateway.name
        )));
    }
    let scope = format!("edge gateway {}", gateway.name);
    let others: Vec<&VirtualService> = world
        .virtual_services
        .iter()
        .filter(|o| same_id(&gateway.id, &o.gateway_ref.id) && o.id != vs.id)
        .collect();
    if others.iter().any(|o| o.name == vs.name) {
        return Err(ApiError::duplicate_name(
            "virtual service",
            &vs.name,
            &scope,
        ));
    }
    let profile = vs.application_profile.profile_type.as_str();
    if !PROFILE_TYPES.contains(&profile) {
        return Err(bad(format!("Invalid application profile type {profile}.")));
    }
    let pool = find(&world.pools, &vs.load_balancer_pool_ref.id).ok_or_else(|| {
        bad(format!(
            "Load balancer pool {} does not exist.",
            vs.load_balancer_pool_ref.id
        ))
    })?;
    if !same_id(&gateway.id, &pool.gateway_ref.id) {
        return Err(bad(format!("Pool {} is not on {scope}.", pool.name)));
    }
    // Preserve Client IP works with pools whose members are a group.
    if vs.transparent_mode_enabled == Some(true) && pool.member_group_ref.is_none() {
        return Err(bad(format!(
            "Transparent mode needs pool {} to take its members from a firewall group (memberGroupRef), not a member list.",
            pool.name
        )));
    }
    let assignment = world
        .seg_assignments
        .iter()
        .find(|a| same_id(&a.seg_id, &vs.service_engine_group_ref.id) && a.gateway_id == gateway.id)
        .ok_or_else(|| {
            bad(format!(
                "Service engine group {} is not assigned to {scope}.",
                vs.service_engine_group_ref.id
            ))
        })?;
    let is_new_here = !world
        .virtual_services
        .iter()
        .any(|o| o.id == vs.id && same_id(&o.service_engine_group_ref.id, &assignment.seg_id));
    if let Some(max) = assignment.max_virtual_services {
        let deployed = world.deployed_virtual_services(&assignment.seg_id, &gateway.id);
        if is_new_here && deployed >= max as usize {
            return Err(bad(format!(
                "Service engine group assignment is full ({deployed}/{max} virtual services)."
            )));
        }
    }
    let tls = matches!(profile, "HTTPS" | "L4_TLS");
    match (&vs.certificate_ref, tls) {
        (None, true) => {
            return Err(bad(format!(
                "A {profile} virtual service needs a certificateRef."
            )));
        }
        (Some(cert), _) => {
            let ok =
                find(&world.certificates, &cert.id).is_some_and(|c| c.org_id == gateway.org_id);
            if !ok {
                return Err(bad(format!(
                    "Certificate {} does not exist in the organization.",
                    cert.id
                )));
            }
        }
        (None, false) => {}
    }
    if vs.service_ports.is_empty() {
        return Err(bad("servicePorts must not be empty.".to_string()));
    }
    if !tls && vs.service_ports.iter().any(|p| p.ssl_enabled == Some(true)) {
        return Err(bad(format!(
            "SSL ports need an HTTPS or L4_TLS profile, not {profile}."
        )));
    }
    check_vips(world, gateway, &others, vs, strict)
}

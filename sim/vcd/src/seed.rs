//! Turns a scenario into a world: ids are generated, names resolved.

use std::collections::BTreeMap;

mod gateway;
mod service_accounts;

use crate::ids::{new_urn, new_uuid};
use crate::scenario::{
    IpSpaceSpec, NetworkSpec, OrgSpec, RoleSpec, Scenario, ScenarioError, UserSpec, VdcGroupSpec,
};
use crate::world::World;
use crate::world::alb::ServiceEngineGroup;
use crate::world::compute::{VApp, Vdc, VdcGroup};
use crate::world::hooks::vm_from_spec;
use crate::world::identity::{ApiToken, Org, Role, SYSTEM_ORG, User};
use crate::world::ip::{Cidr, IpRange};
use crate::world::ip_space::{IpSpace, IpSpaceRange};
use crate::world::library::{Certificate, CertificateItem, DefinedEntity, Entity};
use crate::world::nat::AppPortProfile;
use crate::world::network::{OrgVdcNetwork, Subnet};
use crate::world::rights;

/// Login material for one user, as the binary prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub org: String,
    pub user: String,
    pub password: String,
    pub api_token: Option<String>,
}

fn dangling(kind: &'static str, name: &str, by: &str) -> ScenarioError {
    ScenarioError::Dangling {
        kind,
        name: name.to_string(),
        by: by.to_string(),
    }
}

pub fn build_world(scenario: &Scenario) -> Result<World, ScenarioError> {
    let mut world = World::empty(&scenario.site.name, scenario.api_versions.clone());
    let system_id = add_org(&mut world, SYSTEM_ORG, "System Organization")?;
    for user in &scenario.system_users {
        add_user(&mut world, &system_id, user);
    }
    add_roles(&mut world, &system_id, &[], &scenario.system_users)?;
    seed_system_profiles(&mut world);
    for seg in &scenario.service_engine_groups {
        world.service_engine_groups.push(ServiceEngineGroup {
            id: new_urn("serviceEngineGroup"),
            name: seg.name.clone(),
            reservation_type: seg.reservation_type.clone(),
            ha_mode: seg.ha_mode.clone(),
            supported_feature_set: seg.supported_feature_set.clone(),
        });
    }
    for org in &scenario.orgs {
        let full_name = org.full_name.clone().unwrap_or_else(|| org.name.clone());
        let org_id = add_org(&mut world, &org.name, &full_name)?;
        for user in &org.users {
            add_user(&mut world, &org_id, user);
        }
        add_roles(&mut world, &org_id, &org.roles, &org.users)?;
    }
    for space in &scenario.ip_spaces {
        add_ip_space(&mut world, space)?;
    }
    for org in &scenario.orgs {
        seed_org(&mut world, org)?;
    }
    service_accounts::add_service_accounts(&mut world, &scenario.service_accounts)?;
    Ok(world)
}

fn add_org(world: &mut World, name: &str, full_name: &str) -> Result<String, ScenarioError> {
    if world.org_by_name(name).is_some() {
        return Err(ScenarioError::Duplicate {
            kind: "org",
            name: name.to_string(),
        });
    }
    let id = new_urn("org");
    world.orgs.push(Org {
        id: id.clone(),
        name: name.to_string(),
        full_name: full_name.to_string(),
        enabled: true,
    });
    Ok(id)
}

fn add_user(world: &mut World, org_id: &str, spec: &UserSpec) {
    let id = new_urn("user");
    world.users.push(User {
        id: id.clone(),
        org_id: org_id.to_string(),
        name: spec.name.clone(),
        password: spec.password.clone(),
        roles: spec.roles.clone(),
    });
    for token in &spec.api_tokens {
        world.api_tokens.push(ApiToken {
            value: token.clone(),
            user_id: id.clone(),
            revoked: false,
        });
    }
}

/// The org's roles: those the scenario lists, then each other role a user
/// names, with a predefined role's rights or none.
fn add_roles(
    world: &mut World,
    org_id: &str,
    listed: &[RoleSpec],
    users: &[UserSpec],
) -> Result<(), ScenarioError> {
    let mut roles: Vec<(String, Vec<String>)> = Vec::new();
    for role in listed {
        if roles.iter().any(|(name, _)| name == &role.name) {
            return Err(ScenarioError::Duplicate {
                kind: "role",
                name: role.name.clone(),
            });
        }
        roles.push((role.name.clone(), role.rights.clone()));
    }
    for name in users.iter().flat_map(|u| &u.roles) {
        if !roles.iter().any(|(known, _)| known == name) {
            roles.push((name.clone(), rights::of_unlisted_role(name)));
        }
    }
    for (name, rights) in roles {
        world.roles.push(Role {
            id: new_urn("role"),
            org_id: org_id.to_string(),
            name,
            rights,
        });
    }
    Ok(())
}

/// The built-in NSX profiles every tenant sees.
fn seed_system_profiles(world: &mut World) {
    for (name, port) in [("HTTP", "80"), ("HTTPS", "443"), ("SSH", "22")] {
        world
            .port_profiles
            .push(AppPortProfile::system(name, "TCP", port));
    }
}

fn parse_ranges(ranges: &[String]) -> Result<Vec<IpRange>, ScenarioError> {
    Ok(ranges
        .iter()
        .map(|r| IpRange::parse(r))
        .collect::<Result<_, _>>()?)
}

fn add_ip_space(world: &mut World, spec: &IpSpaceSpec) -> Result<(), ScenarioError> {
    let org_id = match &spec.org {
        Some(name) => Some(
            world
                .org_by_name(name)
                .ok_or_else(|| dangling("org", name, &spec.name))?
                .id
                .clone(),
        ),
        None => None,
    };
    let mut org_quotas = BTreeMap::new();
    for (name, quota) in &spec.org_quotas {
        let org = world
            .org_by_name(name)
            .ok_or_else(|| dangling("org", name, &spec.name))?;
        org_quotas.insert(org.id.clone(), *quota);
    }
    let ranges = parse_ranges(&spec.ranges)?
        .into_iter()
        .map(|range| IpSpaceRange {
            id: new_urn("ipSpaceRange"),
            range,
        })
        .collect();
    world.ip_spaces.push(IpSpace {
        id: new_urn("ipSpace"),
        name: spec.name.clone(),
        description: String::new(),
        space_type: spec.space_type.clone(),
        org_id,
        ranges,
        internal_scope: spec.internal_scope.clone(),
        external_scope: spec.external_scope.clone(),
        default_floating_ip_quota: spec.default_floating_ip_quota,
        org_quotas,
        default_gateway_services: spec.default_gateway_services,
    });
    Ok(())
}

fn seed_org(world: &mut World, spec: &OrgSpec) -> Result<(), ScenarioError> {
    let org_id = world
        .org_by_name(&spec.name)
        .map(|o| o.id.clone())
        .ok_or(ScenarioError::Missing("org"))?;
    for vdc in &spec.vdcs {
        world.vdcs.push(Vdc {
            id: new_urn("vdc"),
            org_id: org_id.clone(),
            name: vdc.name.clone(),
            allocation_type: vdc.allocation_type.clone(),
        });
    }
    for group in &spec.vdc_groups {
        add_group(world, &org_id, group)?;
    }
    for gateway in &spec.edge_gateways {
        gateway::add_gateway(world, &org_id, gateway)?;
    }
    for group in &spec.vdc_groups {
        let group_id = group_id(world, &org_id, &group.name)?;
        for network in &group.networks {
            add_network(world, &org_id, &group_id, network)?;
        }
    }
    for vdc in &spec.vdcs {
        let vdc_id = vdc_id(world, &org_id, &vdc.name)?;
        for network in &vdc.networks {
            add_network(world, &org_id, &vdc_id, network)?;
        }
        for vapp in &vdc.vapps {
            let vapp_id = new_urn("vapp");
            world.vapps.push(VApp {
                id: vapp_id.clone(),
                vdc_id: vdc_id.clone(),
                name: vapp.name.clone(),
            });
            for vm in &vapp.vms {
                world.vms.push(vm_from_spec(vm, &vapp_id));
            }
        }
    }
    for cert in &spec.certificates {
        world.certificates.push(Certificate {
            org_id: org_id.clone(),
            item: CertificateItem {
                id: Some(new_urn("certificateLibraryItem")),
                alias: cert.alias.clone(),
                description: Some(cert.description.clone()),
                certificate: cert.certificate.clone(),
                private_key: None,
                private_key_passphrase: None,
            },
        });
    }
    let org_ref = world.org_ref(&org_id);
    for entity in &spec.entities {
        world.entities.push(Entity {
            org_id: org_id.clone(),
            revision: 1,
            body: DefinedEntity {
                id: Some(entity_urn(&entity.entity_type)),
                entity_type: Some(entity.entity_type.clone()),
                name: entity.name.clone(),
                external_id: entity.external_id.clone(),
                entity: entity.entity.clone(),
                state: Some("RESOLVED".to_string()),
                entity_state: None,
                owner: None,
                org: Some(org_ref.clone()),
            },
        });
    }
    Ok(())
}

/// A group of 1–16 of the org's VDCs; its name is unique among the org's
/// groups.
fn add_group(world: &mut World, org_id: &str, spec: &VdcGroupSpec) -> Result<(), ScenarioError> {
    if !(1..=16).contains(&spec.vdcs.len()) {
        return Err(ScenarioError::GroupSize {
            name: spec.name.clone(),
            count: spec.vdcs.len(),
        });
    }
    if group_id(world, org_id, &spec.name).is_ok() {
        return Err(ScenarioError::Duplicate {
            kind: "data-center group",
            name: spec.name.clone(),
        });
    }
    let vdc_ids = spec
        .vdcs
        .iter()
        .map(|name| vdc_id(world, org_id, name))
        .collect::<Result<Vec<_>, _>>()?;
    world.vdc_groups.push(VdcGroup {
        id: new_urn("vdcGroup"),
        org_id: org_id.to_string(),
        name: spec.name.clone(),
        vdc_ids,
    });
    Ok(())
}

/// A network owned by `owner_id` (a VDC or a data-center group).
fn add_network(
    world: &mut World,
    org_id: &str,
    owner_id: &str,
    spec: &NetworkSpec,
) -> Result<(), ScenarioError> {
    let gateway_id = match &spec.gateway {
        Some(name) => Some(
            world
                .gateways
                .iter()
                .find(|g| g.org_id == org_id && &g.name == name)
                .ok_or_else(|| dangling("edge gateway", name, &spec.name))?
                .id
                .clone(),
        ),
        None => None,
    };
    let cidr = Cidr::parse(&spec.cidr)?;
    world.networks.push(OrgVdcNetwork {
        id: new_urn("network"),
        org_id: org_id.to_string(),
        owner_id: owner_id.to_string(),
        name: spec.name.clone(),
        description: String::new(),
        backing_type: spec.backing_type.clone(),
        network_type: if gateway_id.is_some() {
            "NAT_ROUTED"
        } else {
            "ISOLATED"
        }
        .to_string(),
        gateway_id,
        subnet: Subnet {
            gateway: cidr.network,
            prefix_length: cidr.prefix_length,
            ranges: parse_ranges(&spec.ranges)?,
        },
    });
    Ok(())
}

/// `urn:vcloud:entity:<vendor>:<nss>:<uuid>` for a type
/// `urn:vcloud:type:<vendor>:<nss>:<version>`.
pub fn entity_urn(entity_type: &str) -> String {
    let parts: Vec<&str> = entity_type.split(':').collect();
    match parts.as_slice() {
        [_, _, _, vendor, nss, _] => format!("urn:vcloud:entity:{vendor}:{nss}:{}", new_uuid()),
        _ => new_urn("entity"),
    }
}

fn vdc_id(world: &World, org_id: &str, name: &str) -> Result<String, ScenarioError> {
    world
        .vdcs
        .iter()
        .find(|v| v.org_id == org_id && v.name == name)
        .map(|v| v.id.clone())
        .ok_or_else(|| dangling("vdc", name, "a gateway, network or group"))
}

fn group_id(world: &World, org_id: &str, name: &str) -> Result<String, ScenarioError> {
    world
        .vdc_groups
        .iter()
        .find(|g| g.org_id == org_id && g.name == name)
        .map(|g| g.id.clone())
        .ok_or_else(|| dangling("data-center group", name, "a gateway"))
}

/// The first user (and API token) of the first tenant org, and of System.
pub fn credentials(scenario: &Scenario) -> (Option<Credentials>, Option<Credentials>) {
    let of = |org: &str, user: &UserSpec| Credentials {
        org: org.to_string(),
        user: user.name.clone(),
        password: user.password.clone(),
        api_token: user.api_tokens.first().cloned(),
    };
    let tenant = scenario
        .orgs
        .iter()
        .find_map(|org| org.users.first().map(|u| of(&org.name, u)));
    let system = scenario.system_users.first().map(|u| of(SYSTEM_ORG, u));
    (tenant, system)
}

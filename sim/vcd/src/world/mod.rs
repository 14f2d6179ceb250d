//! The simulated VCD: one in-memory world behind a lock. Objects live in
//! insertion-ordered vectors so lists are deterministic.

pub mod alb;
pub mod compute;
pub mod default_services;
pub mod firewall;
pub mod health_monitor;
mod health_monitor_checks;
pub mod hooks;
pub mod http_policy;
pub mod http_rules;
pub mod identity;
pub mod ip;
pub mod ip_space;
pub mod library;
pub mod member_health;
pub mod nat;
pub mod network;
pub mod rights;
pub mod service_account;
pub mod task;
mod usage;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::strict::definition;

pub use usage::{AllocationUse, UsedIp};

use alb::{Pool, SegAssignment, ServiceEngineGroup, VirtualService};
use compute::{VApp, Vdc, VdcGroup, Vm};
use firewall::{FirewallGroup, FirewallRule, GatewayFirewall};
use health_monitor::{Monitor, MonitorAssignment};
use http_rules::HttpPolicies;
use identity::{AccessToken, ApiToken, Org, Role, User};
use ip_space::{IpAllocation, IpSpace};
use library::{Certificate, Entity};
use nat::{AppPortProfile, NatRule};
use network::{EdgeGateway, OrgVdcNetwork};
use task::Task;

/// `EntityReference` on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct Ref {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub id: String,
}
definition!(Ref, "EntityReference", serialize);

impl Ref {
    pub fn new(name: &str, id: &str) -> Self {
        Self {
            name: name.to_string(),
            id: id.to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Site {
    pub id: String,
    pub name: String,
    pub versions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct World {
    pub site: Site,
    pub orgs: Vec<Org>,
    pub users: Vec<User>,
    pub roles: Vec<Role>,
    pub api_tokens: Vec<ApiToken>,
    /// Service accounts and their one-time refresh tokens.
    #[serde(default)]
    pub service_accounts: Vec<service_account::ServiceAccount>,
    /// Sessions do not survive a restore: clients log in again.
    #[serde(skip_deserializing)]
    pub access_tokens: BTreeMap<String, AccessToken>,
    pub vdcs: Vec<Vdc>,
    #[serde(default)]
    pub vdc_groups: Vec<VdcGroup>,
    pub networks: Vec<OrgVdcNetwork>,
    pub gateways: Vec<EdgeGateway>,
    pub ip_spaces: Vec<IpSpace>,
    pub ip_allocations: Vec<IpAllocation>,
    pub service_engine_groups: Vec<ServiceEngineGroup>,
    pub seg_assignments: Vec<SegAssignment>,
    pub port_profiles: Vec<AppPortProfile>,
    pub certificates: Vec<Certificate>,
    pub pools: Vec<Pool>,
    pub virtual_services: Vec<VirtualService>,
    /// SYSTEM and TENANT health monitors (API 39.0+).
    #[serde(default = "health_monitor::system_monitors")]
    pub health_monitors: Vec<Monitor>,
    /// TENANT health monitors assigned to pools.
    #[serde(default)]
    pub monitor_assignments: Vec<MonitorAssignment>,
    /// Whether a node answers health probes, by (address, port), as tests
    /// set it (`set_probe`); a node not listed answers.
    #[serde(skip)]
    pub probes: BTreeMap<(String, u16), bool>,
    /// HTTP policies (API 38.0+) of virtual services that have any.
    #[serde(default)]
    pub http_policies: Vec<HttpPolicies>,
    pub nat_rules: Vec<NatRule>,
    /// User-defined gateway firewall rules, in each gateway's order.
    pub firewall_rules: Vec<FirewallRule>,
    /// Each gateway's system and default firewall rules.
    pub gateway_firewalls: Vec<GatewayFirewall>,
    pub firewall_groups: Vec<FirewallGroup>,
    /// The ids of the NAT and firewall rules VCD's default gateway services
    /// own (`default_services`); every other rule is a client's.
    #[serde(default)]
    pub vcd_rules: Vec<String>,
    pub entities: Vec<Entity>,
    pub vapps: Vec<VApp>,
    pub vms: Vec<Vm>,
    pub tasks: Vec<Task>,
}

/// Anything addressed by an id (URN or bare UUID).
pub trait Keyed {
    fn key(&self) -> &str;
}

macro_rules! keyed {
    ($($ty:ty => |$it:ident| $key:expr;)*) => {
        $(impl Keyed for $ty {
            fn key(&self) -> &str {
                let $it = self;
                $key
            }
        })*
    };
}

keyed! {
    Org => |o| &o.id;
    User => |u| &u.id;
    Role => |r| &r.id;
    Vdc => |v| &v.id;
    VdcGroup => |g| &g.id;
    OrgVdcNetwork => |n| &n.id;
    EdgeGateway => |g| &g.id;
    IpSpace => |s| &s.id;
    IpAllocation => |a| &a.id;
    ServiceEngineGroup => |s| &s.id;
    SegAssignment => |s| &s.id;
    AppPortProfile => |p| p.id.as_deref().unwrap_or_default();
    Certificate => |c| c.item.id.as_deref().unwrap_or_default();
    Pool => |p| p.id.as_deref().unwrap_or_default();
    VirtualService => |v| v.id.as_deref().unwrap_or_default();
    Monitor => |m| m.id();
    MonitorAssignment => |a| &a.id;
    HttpPolicies => |p| &p.virtual_service_id;
    NatRule => |r| r.body.id.as_deref().unwrap_or_default();
    FirewallRule => |r| r.body.id.as_deref().unwrap_or_default();
    FirewallGroup => |g| g.body.id.as_deref().unwrap_or_default();
    GatewayFirewall => |f| &f.gateway_id;
    Entity => |e| e.body.id.as_deref().unwrap_or_default();
    VApp => |a| &a.id;
    Vm => |v| &v.id;
    Task => |t| &t.id;
}

/// Finds by URN, or by the bare UUID of one.
pub fn find<'a, T: Keyed>(items: &'a [T], id: &str) -> Option<&'a T> {
    items
        .iter()
        .find(|item| crate::ids::same_id(item.key(), id))
}

pub fn find_mut<'a, T: Keyed>(items: &'a mut [T], id: &str) -> Option<&'a mut T> {
    items
        .iter_mut()
        .find(|item| crate::ids::same_id(item.key(), id))
}

/// Removes by id; true when something was removed.
pub fn remove<T: Keyed>(items: &mut Vec<T>, id: &str) -> bool {
    let before = items.len();
    items.retain(|item| !crate::ids::same_id(item.key(), id));
    items.len() != before
}

impl World {
    pub fn empty(site_name: &str, versions: Vec<String>) -> Self {
        Self {
            site: Site {
                id: crate::ids::new_urn("site"),
                name: site_name.to_string(),
                versions,
            },
            orgs: Vec::new(),
            users: Vec::new(),
            roles: Vec::new(),
            api_tokens: Vec::new(),
            service_accounts: Vec::new(),
            access_tokens: BTreeMap::new(),
            vdcs: Vec::new(),
            vdc_groups: Vec::new(),
            networks: Vec::new(),
            gateways: Vec::new(),
            ip_spaces: Vec::new(),
            ip_allocations: Vec::new(),
            service_engine_groups: Vec::new(),
            seg_assignments: Vec::new(),
            port_profiles: Vec::new(),
            certificates: Vec::new(),
            pools: Vec::new(),
            virtual_services: Vec::new(),
            health_monitors: health_monitor::system_monitors(),
            monitor_assignments: Vec::new(),
            probes: BTreeMap::new(),
            http_policies: Vec::new(),
            nat_rules: Vec::new(),
            firewall_rules: Vec::new(),
            gateway_firewalls: Vec::new(),
            firewall_groups: Vec::new(),
            vcd_rules: Vec::new(),
            entities: Vec::new(),
            vapps: Vec::new(),
            vms: Vec::new(),
            tasks: Vec::new(),
        }
    }

    pub fn org_by_name(&self, name: &str) -> Option<&Org> {
        self.orgs.iter().find(|o| o.name.eq_ignore_ascii_case(name))
    }

    pub fn org_ref(&self, org_id: &str) -> Ref {
        find(&self.orgs, org_id).map_or_else(Ref::default, |o| Ref::new(&o.name, &o.id))
    }

    pub fn vdc_ref(&self, vdc_id: &str) -> Ref {
        find(&self.vdcs, vdc_id).map_or_else(Ref::default, |v| Ref::new(&v.name, &v.id))
    }

    /// The owner of a network or gateway: a VDC or a data-center group.
    pub fn owner_ref(&self, owner_id: &str) -> Ref {
        find(&self.vdc_groups, owner_id)
            .map_or_else(|| self.vdc_ref(owner_id), |g| Ref::new(&g.name, &g.id))
    }

    /// `orgVdc` of a network or gateway: its VDC, or null when a
    /// data-center group owns it.
    pub fn owner_vdc_ref(&self, owner_id: &str) -> Option<Ref> {
        find(&self.vdcs, owner_id).map(|v| Ref::new(&v.name, &v.id))
    }

    /// Whether an object owned by `owner_id` is usable in `context` (a VDC
    /// or a group URN): owned by it, or, for a VDC, owned by a group the
    /// VDC belongs to. This is `_context==<urn>` on network objects.
    pub fn usable_in(&self, owner_id: &str, context: &str) -> bool {
        crate::ids::same_id(owner_id, context)
            || find(&self.vdc_groups, owner_id)
                .is_some_and(|g| g.vdc_ids.iter().any(|v| crate::ids::same_id(v, context)))
    }

    /// The org of a VDC or a data-center group.
    pub fn context_org(&self, context: &str) -> Option<&str> {
        find(&self.vdcs, context)
            .map(|v| v.org_id.as_str())
            .or_else(|| find(&self.vdc_groups, context).map(|g| g.org_id.as_str()))
    }

    /// Whether a NAT or firewall rule of the gateway may use the profile:
    /// one of the gateway's org (or SYSTEM/PROVIDER), and a TENANT
    /// profile created in the gateway owner's context (VDC or group). The
    /// API reference does not say whether another member's context works;
    /// the strict reading refuses it.
    pub fn profile_usable_on(&self, profile_id: &str, gateway_id: &str) -> bool {
        let Some(gateway) = find(&self.gateways, gateway_id) else {
            return false;
        };
        find(&self.port_profiles, profile_id).is_some_and(|p| {
            p.org_ref.as_ref().is_none_or(|o| o.id == gateway.org_id)
                && p.context_entity_id
                    .as_deref()
                    .is_none_or(|c| crate::ids::same_id(c, &gateway.owner_id))
        })
    }

    pub fn gateway_ref(&self, gateway_id: &str) -> Ref {
        find(&self.gateways, gateway_id).map_or_else(Ref::default, |g| Ref::new(&g.name, &g.id))
    }

    /// The org owning a gateway-scoped object.
    pub fn gateway_org(&self, gateway_id: &str) -> Option<&str> {
        find(&self.gateways, gateway_id).map(|g| g.org_id.as_str())
    }

    /// The org of a VM through vApp → VDC.
    pub fn vm_org(&self, vm: &Vm) -> Option<&str> {
        let vapp = find(&self.vapps, &vm.vapp_id)?;
        find(&self.vdcs, &vapp.vdc_id).map(|vdc| vdc.org_id.as_str())
    }

    pub fn vapp_org(&self, vapp: &VApp) -> Option<&str> {
        find(&self.vdcs, &vapp.vdc_id).map(|vdc| vdc.org_id.as_str())
    }
}

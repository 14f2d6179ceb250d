//! Typed VCD resources. Models carry only the fields the CCM uses; models
//! that are read, changed and PUT back keep every other field in `extra`
//! so a PUT never drops what VCD (or another tool) set.

pub mod certificate;
pub mod firewall;
pub mod gateway;
pub mod health_monitor;
pub mod http_policy;
pub mod ip_set;
pub mod ipspace;
pub mod nat;
pub mod network;
pub mod pool;
pub mod profiles;
pub mod rde;
pub mod seg;
pub mod session;
pub mod virtual_service;
pub mod vm;

use serde::{Deserialize, Serialize};

use super::VcdClient;
use super::errors::{CallSite, VcdError};

impl VcdClient {
    /// The org's certificate library.
    pub fn certificates(&self) -> certificate::Certificates<'_> {
        certificate::Certificates { client: self }
    }

    /// Edge gateway firewall rules.
    pub fn firewall(&self) -> firewall::Firewall<'_> {
        firewall::Firewall { client: self }
    }

    /// Edge gateways and their load-balancer settings.
    pub fn gateways(&self) -> gateway::Gateways<'_> {
        gateway::Gateways { client: self }
    }

    /// Tenant health monitors and their pool assignments (API 39.0+).
    pub fn health_monitors(&self) -> health_monitor::HealthMonitors<'_> {
        health_monitor::HealthMonitors { client: self }
    }

    /// A virtual service's HTTP request, response and security rules.
    pub fn http_policies(&self) -> http_policy::HttpPolicies<'_> {
        http_policy::HttpPolicies { client: self }
    }

    /// Gateway IP sets (firewall groups of type IP_SET).
    pub fn ip_sets(&self) -> ip_set::IpSets<'_> {
        ip_set::IpSets { client: self }
    }

    /// IP Spaces and the org's floating-IP allocations.
    pub fn ip_spaces(&self) -> ipspace::IpSpaces<'_> {
        ipspace::IpSpaces { client: self }
    }

    /// Edge gateway NAT rules.
    pub fn nat_rules(&self) -> nat::NatRules<'_> {
        nat::NatRules { client: self }
    }

    /// Orgs, VDCs, data-center groups and org VDC networks: where the cluster lives.
    pub fn tenancy(&self) -> network::Tenancy<'_> {
        network::Tenancy { client: self }
    }

    /// Load-balancer pools.
    pub fn pools(&self) -> pool::Pools<'_> {
        pool::Pools { client: self }
    }

    /// Application port profiles.
    pub fn port_profiles(&self) -> profiles::PortProfiles<'_> {
        profiles::PortProfiles { client: self }
    }

    /// Runtime defined entities (the cluster's RDE).
    pub fn entities(&self) -> rde::Entities<'_> {
        rde::Entities { client: self }
    }

    /// Service engine groups assigned to gateways.
    pub fn service_engine_groups(&self) -> seg::ServiceEngineGroups<'_> {
        seg::ServiceEngineGroups { client: self }
    }

    /// The API session and its role's rights.
    pub fn sessions(&self) -> session::Sessions<'_> {
        session::Sessions { client: self }
    }

    /// Load-balancer virtual services.
    pub fn virtual_services(&self) -> virtual_service::VirtualServices<'_> {
        virtual_service::VirtualServices { client: self }
    }

    /// VMs and their vApps.
    pub fn vms(&self) -> vm::Vms<'_> {
        vm::Vms { client: self }
    }
}

/// VCD's `{"values": [...]}` wrapper inside objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Values<T> {
    /// The items; absent counts as none.
    #[serde(default = "Vec::new")]
    pub values: Vec<T>,
}

/// `object` as the JSON text of a request body, written straight from the
/// model: a `serde_json::Value` of a pool with 5,000 members holds a map per
/// member (megabytes, and a create keeps its body across retries) where the
/// text is ~300 KB.
pub(crate) fn encode(
    call: &CallSite,
    what: &str,
    name: &str,
    object: &impl Serialize,
) -> Result<String, VcdError> {
    serde_json::to_string(object).map_err(|error| VcdError::Unexpected {
        call: call.clone(),
        detail: format!("cannot encode {what} {name}: {error}"),
    })
}

/// At most one item named `name` (filters may match more: `*` is a wildcard).
pub(crate) fn only_one<T>(
    items: Vec<T>,
    name_of: impl Fn(&T) -> &str,
    what: &'static str,
    name: &str,
    scope: &str,
) -> Result<Option<T>, VcdError> {
    let mut matching: Vec<T> = items.into_iter().filter(|i| name_of(i) == name).collect();
    match matching.len() {
        0 | 1 => Ok(matching.pop()),
        count => Err(VcdError::Ambiguous {
            what,
            name: name.to_string(),
            scope: scope.to_string(),
            count,
        }),
    }
}

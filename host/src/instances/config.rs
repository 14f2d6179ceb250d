//! What the node side needs to know: which vApps hold the cluster's VMs,
//! the VDC → zone map, the region, the address policy and cache timings.

use std::collections::BTreeMap;
use std::time::Duration;

use super::errors::InstancesError;
use super::zones::ZoneMap;

/// Which vApps hold the cluster's VMs (upstream's `vAppName` and
/// `vcd.isZoneEnabledCluster`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterVApps {
    /// Single zone: the one vApp with exactly this name.
    Named(String),
    /// Multi-zone: every vApp named `<this>_<uuid of its VDC>…`, as CAPVCD
    /// names the vApps of a cluster spread over VDCs.
    ZonePrefix(String),
}

impl ClusterVApps {
    fn name(&self) -> &str {
        match self {
            Self::Named(name) | Self::ZonePrefix(name) => name,
        }
    }

    /// For messages: which vApps were searched.
    pub fn describe(&self) -> String {
        match self {
            Self::Named(name) => format!("vApp '{name}'"),
            Self::ZonePrefix(name) => format!("the vApps named '{name}_<VDC uuid>…'"),
        }
    }
}

/// What a NIC other than the primary one contributes to the node's addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NicRole {
    /// No address.
    #[default]
    Ignore,
    /// Its IP as an `InternalIP`.
    InternalIp,
    /// Its IP as an `ExternalIP`.
    ExternalIp,
}

/// Where the node's `Hostname` address comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostnameSource {
    /// The VM name, as upstream.
    #[default]
    VmName,
    /// The guest OS computer name, else the VM name.
    ComputerName,
    /// No `Hostname` address (the kubelet's is kept).
    None,
}

/// Which addresses a node gets. The primary NIC is always `InternalIP`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Non-primary NICs whose network `by_network` does not name.
    pub other_nics: NicRole,
    /// Non-primary NICs by the name of their network.
    pub by_network: BTreeMap<String, NicRole>,
    /// The source of the `Hostname` address, if any.
    pub hostname: HostnameSource,
}

impl AddressPolicy {
    pub(crate) fn role_of(&self, network: Option<&str>) -> NicRole {
        network
            .and_then(|n| self.by_network.get(n).copied())
            .unwrap_or(self.other_nics)
    }
}

/// The node side's settings (see [`Instances`](super::Instances)).
#[derive(Debug, Clone)]
pub struct InstancesConfig {
    /// Which vApps hold the cluster's VMs; only their VMs can be nodes.
    pub vapps: ClusterVApps,
    /// Zones by VDC name; empty means no zone labels.
    pub zones: ZoneMap,
    /// The region label of every node (upstream never sets one).
    pub region: Option<String>,
    /// Which addresses nodes get from their VMs' NICs.
    pub addresses: AddressPolicy,
    /// How long one inventory load serves lookups.
    pub cache_period: Duration,
    /// How old a VM's power state may be for `instance_exists` and
    /// `instance_shutdown`; older ones are read again.
    pub power_state_max_age: Duration,
}

impl InstancesConfig {
    /// Upstream's defaults: one vApp, no zones, no region, one-minute cache.
    pub fn new(vapps: ClusterVApps) -> Self {
        Self {
            vapps,
            zones: ZoneMap::default(),
            region: None,
            addresses: AddressPolicy::default(),
            cache_period: Duration::from_secs(60),
            power_state_max_age: Duration::from_secs(5),
        }
    }

    pub(super) fn validate(&self) -> Result<(), InstancesError> {
        if self.vapps.name().trim().is_empty() {
            return Err(InstancesError::Config(
                "the cluster's vApp name (vAppName) is empty".to_string(),
            ));
        }
        if self.region.as_deref().is_some_and(|r| r.trim().is_empty()) {
            return Err(InstancesError::Config(
                "the region is set but empty; leave it unset for no region label".to_string(),
            ));
        }
        if self.cache_period.is_zero() {
            return Err(InstancesError::Config(
                "the inventory cache period is zero; every lookup would reload every VM"
                    .to_string(),
            ));
        }
        Ok(())
    }
}

//! The node side: the equivalent of k8s.io/cloud-provider's `InstancesV2`
//! (`InstanceExists`, `InstanceShutdown`, `InstanceMetadata`) as a plain
//! async API over the VCD client, with no Kubernetes types. A node is named
//! by its name and, once set, its providerID; the providerID wins.
//!
//! Not-found semantics follow the cloud-provider contract: a VM that is gone
//! makes `instance_exists` false (the lifecycle controller may then delete a
//! NotReady node) and `instance_shutdown` false, while `instance_metadata`
//! fails (the node stays uninitialised and is retried). Any other failure is
//! an error, which the controllers log and retry.

pub mod addresses;
pub mod config;
pub mod errors;
pub mod instance_type;
mod inventory;
pub mod provider_id;
pub mod zones;

pub use addresses::{AddressType, NodeAddress};
pub use config::{AddressPolicy, ClusterVApps, HostnameSource, InstancesConfig, NicRole};
pub use errors::InstancesError;
pub use zones::{ZoneMap, ZonesError};

use crate::vcd::VcdClient;
use crate::vcd::resources::vm::PowerState;
use inventory::{CachedVm, Inventory, VmKey};

/// How the node controllers name a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRef<'a> {
    /// `metadata.name`: the VM name to look for while there is no providerID.
    pub name: &'a str,
    /// `spec.providerID`; empty counts as unset.
    pub provider_id: Option<&'a str>,
}

impl<'a> NodeRef<'a> {
    /// A node without a providerID.
    pub fn named(name: &'a str) -> Self {
        Self {
            name,
            provider_id: None,
        }
    }

    /// The same node with its `spec.providerID`, which then names the VM.
    pub fn with_provider_id(self, provider_id: &'a str) -> Self {
        Self {
            provider_id: Some(provider_id),
            ..self
        }
    }

    fn key(&self) -> Result<VmKey, InstancesError> {
        match self.provider_id.filter(|id| !id.trim().is_empty()) {
            Some(id) => provider_id::vm_urn(id).map(VmKey::Urn),
            None => Ok(VmKey::Name(self.name.to_string())),
        }
    }

    fn describe(&self) -> String {
        match self.provider_id.filter(|id| !id.trim().is_empty()) {
            Some(id) => format!("with providerID '{id}' (node '{}')", self.name),
            None => format!("named '{}'", self.name),
        }
    }
}

/// What the cloud node controller writes on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceMetadata {
    /// `vmware-cloud-director://urn:vcloud:vm:<uuid>`.
    pub provider_id: String,
    /// The `node.kubernetes.io/instance-type` label.
    pub instance_type: Option<String>,
    /// `status.addresses`: the primary NIC's, other NICs' by NIC index, then
    /// the hostname.
    pub addresses: Vec<NodeAddress>,
    /// The `topology.kubernetes.io/zone` label.
    pub zone: Option<String>,
    /// The `topology.kubernetes.io/region` label.
    pub region: Option<String>,
}

/// The node side over VCD: whether a node's VM exists or is shut down, and
/// its metadata, answered from a cached inventory of the cluster's VMs.
pub struct Instances {
    config: InstancesConfig,
    inventory: Inventory,
}

impl Instances {
    /// Checks the config; VCD is first read at the first lookup.
    pub fn new(client: VcdClient, config: InstancesConfig) -> Result<Self, InstancesError> {
        config.validate()?;
        let inventory = Inventory::new(client, config.vapps.clone(), config.cache_period);
        Ok(Self { config, inventory })
    }

    /// Whether the node's VM still exists, as of at most
    /// `power_state_max_age` ago.
    #[tracing::instrument(skip_all, fields(node = node.name))]
    pub async fn instance_exists(&self, node: &NodeRef<'_>) -> Result<bool, InstancesError> {
        let found = self
            .inventory
            .lookup_fresh(&node.key()?, self.config.power_state_max_age)
            .await?;
        Ok(found.is_some())
    }

    /// Whether the node's VM is shut down (anything but powered on, as
    /// upstream). A VM that is gone is not shut down.
    #[tracing::instrument(skip_all, fields(node = node.name))]
    pub async fn instance_shutdown(&self, node: &NodeRef<'_>) -> Result<bool, InstancesError> {
        let found = self
            .inventory
            .lookup_fresh(&node.key()?, self.config.power_state_max_age)
            .await?;
        Ok(found.is_some_and(|cached| cached.vm.power != PowerState::PoweredOn))
    }

    /// How many VMs the cluster's vApps hold, as of at most the cache
    /// period ago. VCD answers the VM query with what the role may see, so
    /// 0 after a rights change or a vApp rename says nothing about the VMs:
    /// the lifecycle controller then holds deletions.
    pub async fn vm_count(&self) -> Result<usize, InstancesError> {
        self.inventory.vm_count().await
    }

    /// For messages: which vApps hold the cluster's VMs.
    pub fn scope(&self) -> String {
        self.inventory.vapps().describe()
    }

    /// The node's providerID, addresses, instance type, zone and region.
    #[tracing::instrument(skip_all, fields(node = node.name))]
    pub async fn instance_metadata(
        &self,
        node: &NodeRef<'_>,
    ) -> Result<InstanceMetadata, InstancesError> {
        let cached =
            self.inventory
                .lookup(&node.key()?)
                .await?
                .ok_or_else(|| InstancesError::NotFound {
                    node: node.describe(),
                    scope: self.inventory.vapps().describe(),
                })?;
        Ok(self.metadata_of(&cached))
    }

    fn metadata_of(&self, cached: &CachedVm) -> InstanceMetadata {
        let vdc = &cached.vdc;
        let zone = self
            .config
            .zones
            .zone_of_vdc(vdc.name.as_deref(), vdc.urn.as_deref());
        if zone.is_none()
            && !self.config.zones.is_empty()
            && (vdc.name.is_some() || vdc.urn.is_some())
        {
            tracing::warn!(
                vdc = vdc.name.as_deref().or(vdc.urn.as_deref()),
                vm = %cached.vm.name,
                "the zones file lists neither the name nor the URN of the VM's VDC; no zone label"
            );
        }
        let zone = zone.map(str::to_string);
        InstanceMetadata {
            provider_id: provider_id::provider_id(&cached.urn),
            instance_type: instance_type::instance_type(&cached.vm),
            addresses: addresses::node_addresses(&cached.vm, &self.config.addresses),
            zone,
            region: self.config.region.clone(),
        }
    }
}

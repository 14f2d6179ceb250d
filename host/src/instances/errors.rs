//! What can go wrong when the node side looks up a node's VM. Each message
//! names the node, the providerID or the vApps searched, so an operator can
//! tell which VM or which configuration to look at.

use std::sync::Arc;

use crate::vcd::VcdError;

/// Why a node's VM could not be found or read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InstancesError {
    /// The node's providerID does not name a VCD VM.
    #[error(
        "providerID '{provider_id}' is not a VCD VM: {reason} (expected 'vmware-cloud-director://urn:vcloud:vm:<uuid>')"
    )]
    InvalidProviderId {
        /// The providerID as the Node carries it.
        provider_id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No VM of the searched vApps matches the node.
    #[error("no VM {node} among the VMs of {scope}")]
    NotFound {
        /// The node's name or VM id.
        node: String,
        /// The vApps or VDC searched.
        scope: String,
    },
    /// Several VMs carry the node's name.
    #[error(
        "{count} VMs named '{name}' among the VMs of {scope}; set the node's providerID to pick one"
    )]
    Ambiguous {
        /// The name searched for.
        name: String,
        /// How many VMs carry it.
        count: usize,
        /// The vApps or VDC searched.
        scope: String,
    },
    /// The VM inventory could not be loaded from VCD.
    #[error("loading the VM inventory of {scope}: {source}")]
    Inventory {
        /// The vApps or VDC being listed.
        scope: String,
        /// VCD's error, shared by every caller of the failed load.
        #[source]
        source: Arc<VcdError>,
    },
    /// The VM's power state could not be read.
    #[error("reading the power state of VM {vm}: {source}")]
    PowerState {
        /// The VM's id.
        vm: String,
        /// VCD's error.
        #[source]
        source: Arc<VcdError>,
    },
    /// The node settings of the cloud config are unusable.
    #[error("instances configuration: {0}")]
    Config(String),
}

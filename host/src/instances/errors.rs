//! What can go wrong when the node side looks up a node's VM. Each message
//! names the node, the providerID or the vApps searched, so an operator can
//! tell which VM or which configuration to look at.

use std::sync::Arc;

use crate::vcd::VcdError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum InstancesError {
    #[error(
        "providerID '{provider_id}' is not a VCD VM: {reason} (expected 'vmware-cloud-director://urn:vcloud:vm:<uuid>')"
    )]
    InvalidProviderId { provider_id: String, reason: String },
    #[error("no VM {node} among the VMs of {scope}")]
    NotFound { node: String, scope: String },
    #[error(
        "{count} VMs named '{name}' among the VMs of {scope}; set the node's providerID to pick one"
    )]
    Ambiguous {
        name: String,
        count: usize,
        scope: String,
    },
    #[error("loading the VM inventory of {scope}: {source}")]
    Inventory {
        scope: String,
        #[source]
        source: Arc<VcdError>,
    },
    #[error("reading the power state of VM {vm}: {source}")]
    PowerState {
        vm: String,
        #[source]
        source: Arc<VcdError>,
    },
    #[error("instances configuration: {0}")]
    Config(String),
}

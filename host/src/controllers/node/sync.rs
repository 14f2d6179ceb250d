//! One node's sync: initialise an uninitialised node from its VM, or keep
//! an initialised node's GA labels in step with its beta labels.

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::{Context, address_refresh};
use crate::controllers::EventType;
use crate::controllers::node_helpers::initialize::initialize;
use crate::controllers::node_helpers::node_ip::{self, NodeIpError};
use crate::controllers::node_helpers::retry::{is_conflict, jittered};
use crate::controllers::node_helpers::{addresses, labels, node_ref, taints};
use crate::instances::InstancesError;

/// Attempts of the initialising PUT when it meets conflicts
/// (upstream `UpdateNodeSpecBackoff`: 20 steps of 50 ms, jitter 1.0).
const UPDATE_ATTEMPTS: u32 = 20;
const UPDATE_RETRY_DELAY: Duration = Duration::from_millis(50);

/// Why a Node could not be synced; the messages are upstream's.
#[derive(Debug, thiserror::Error)]
pub enum NodeSyncError {
    /// The VM behind the Node could not be read.
    #[error("failed to get instance metadata for node {node}: {source}")]
    InstanceMetadata {
        /// The Node's name.
        node: String,
        /// The cause.
        #[source]
        source: InstancesError,
    },
    /// The kubelet's `--node-ip` annotation names no address the VM has.
    #[error(
        "failed to get node modifiers from cloud provider: provided node ip for node \"{node}\" is not valid: {source}"
    )]
    ProvidedNodeIp {
        /// The Node's name.
        node: String,
        /// The cause.
        #[source]
        source: NodeIpError,
    },
    /// Writing the Node failed.
    #[error("failed to update node {node}: {source}")]
    Update {
        /// The Node's name.
        node: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// Re-reading the Node after a conflict failed.
    #[error("failed to re-read node {node} after a conflict: {source}")]
    Reread {
        /// The Node's name.
        node: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// Writing the Node's labels failed.
    #[error("failed to update labels for node {node}: {source}")]
    Labels {
        /// The Node's name.
        node: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// The sync panicked: a bug; it is retried with backoff like any failure.
    #[error("the sync of node {node} panicked (a bug: see the log); retried with backoff")]
    Panicked {
        /// The Node's name.
        node: String,
    },
}

pub(super) async fn sync_node(node: &Node, context: &Context) -> Result<(), NodeSyncError> {
    if taints::is_uninitialized(node) {
        initialize_node(node, context).await?;
    } else {
        reconcile_labels(node, context).await?;
    }
    context.backoff.forget(&node.name_any());
    Ok(())
}

/// Looks the VM up, checks the provided node IP against it, then one PUT
/// sets providerID and labels and drops the taint; then the addresses are
/// patched and a `Synced` Event recorded.
async fn initialize_node(node: &Node, context: &Context) -> Result<(), NodeSyncError> {
    let name = node.name_any();
    tracing::info!(node = %name, "initializing node with cloud provider");
    let metadata = context
        .instances
        .instance_metadata(&node_ref(node))
        .await
        .map_err(|source| NodeSyncError::InstanceMetadata {
            node: name.clone(),
            source,
        })?;
    let cloud_addresses = addresses::from_cloud(&metadata.addresses);
    // Checked before the taint goes, so a wrong --node-ip keeps the node out.
    if let Some(provided) = addresses::provided_node_ip(node) {
        node_ip::addresses_for_node_ip(provided, &cloud_addresses).map_err(|source| {
            NodeSyncError::ProvidedNodeIp {
                node: name.clone(),
                source,
            }
        })?;
    }
    let initialized =
        replace_on_conflict(&context.nodes, node, |n| initialize(n, &metadata)).await?;
    if let Some(age) = seconds_since_creation(&initialized) {
        context.metrics.taint_removal_delay.observe(age);
    }
    address_refresh::update_addresses(&context.nodes, &initialized, &cloud_addresses).await;
    if let Some(age) = seconds_since_creation(node) {
        context.metrics.initial_sync_delay.observe(age);
    }
    tracing::info!(node = %name, provider_id = %metadata.provider_id, "initialized node with cloud provider");
    context
        .recorder
        .publish(
            &node.object_ref(&()),
            EventType::Normal,
            "Synced",
            "Node synced successfully",
        )
        .await;
    Ok(())
}

/// PUTs `modify(node)`; on a conflict re-reads the node and tries again.
/// Returns the node as stored.
async fn replace_on_conflict(
    nodes: &Api<Node>,
    cached: &Node,
    modify: impl Fn(&mut Node),
) -> Result<Node, NodeSyncError> {
    let name = cached.name_any();
    let mut current = cached.clone();
    let mut attempt = 1;
    loop {
        let mut desired = current;
        modify(&mut desired);
        match nodes.replace(&name, &PostParams::default(), &desired).await {
            Ok(stored) => return Ok(stored),
            Err(error) if is_conflict(&error) && attempt < UPDATE_ATTEMPTS => {
                attempt += 1;
                tokio::time::sleep(jittered(UPDATE_RETRY_DELAY)).await;
                // The API server, not the cache: the cache may not have the
                // write that caused the conflict yet.
                current = nodes
                    .get(&name)
                    .await
                    .map_err(|source| NodeSyncError::Reread {
                        node: name.clone(),
                        source,
                    })?;
            }
            Err(source) => return Err(NodeSyncError::Update { node: name, source }),
        }
    }
}

async fn reconcile_labels(node: &Node, context: &Context) -> Result<(), NodeSyncError> {
    let wanted = labels::labels_to_reconcile(node.metadata.labels.as_ref());
    if wanted.is_empty() {
        return Ok(());
    }
    let name = node.name_any();
    let patch = json!({"metadata": {"labels": wanted}});
    context
        .nodes
        .patch(&name, &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .map_err(|source| NodeSyncError::Labels { node: name, source })?;
    Ok(())
}

fn seconds_since_creation(node: &Node) -> Option<f64> {
    let created = node.metadata.creation_timestamp.as_ref()?.0;
    let age = jiff::Timestamp::now().duration_since(created).as_secs_f64();
    Some(age.max(0.0))
}

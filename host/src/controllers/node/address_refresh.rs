//! Node addresses: the status patch after initialisation and the periodic
//! refresh of every initialised node (upstream `UpdateNodeStatus`). The
//! refresh changes addresses only, never labels, providerID or taints.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, NodeAddress};
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::Store;
use kube::{Api, ResourceExt};
use serde_json::json;

use super::Context;
use crate::controllers::node_helpers::{addresses, node_ref, taints};

/// Writes the addresses the merge rules want, if they differ from the
/// node's. `status.addresses` is replaced whole: a strategic merge would
/// merge the list by type. Failures are logged; the next refresh retries.
pub(super) async fn update_addresses(nodes: &Api<Node>, node: &Node, cloud: &[NodeAddress]) {
    let name = node.name_any();
    let desired = match addresses::desired_addresses(node, cloud) {
        Ok(Some(desired)) => desired,
        Ok(None) => return,
        Err(error) => {
            tracing::warn!(node = %name, %error, "failed to update node addresses");
            return;
        }
    };
    let patch = json!({"status": {"addresses": desired}});
    match nodes
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
        .await
    {
        Ok(_) => tracing::info!(node = %name, addresses = ?desired, "updated node addresses"),
        Err(error) => {
            tracing::warn!(node = %name, %error, "error patching node with cloud addresses")
        }
    }
}

/// Refreshes now, then again `period` after each pass ends.
pub(super) async fn run(context: &Context, store: &Store<Node>, period: Duration, workers: usize) {
    loop {
        refresh_all(context, store, workers).await;
        tokio::time::sleep(period).await;
    }
}

async fn refresh_all(context: &Context, store: &Store<Node>, workers: usize) {
    let nodes = store.state();
    let names: HashSet<String> = nodes.iter().map(|node| node.name_any()).collect();
    context.backoff.retain(|name| names.contains(name));
    futures::stream::iter(nodes)
        .for_each_concurrent(workers, |node| refresh_node(context, node))
        .await;
}

async fn refresh_node(context: &Context, node: Arc<Node>) {
    // Still uninitialised: the sync owns it.
    if taints::is_uninitialized(&node) {
        return;
    }
    let _permit = context.gate.enter().await;
    match context.instances.instance_metadata(&node_ref(&node)).await {
        Ok(metadata) => {
            let cloud = addresses::from_cloud(&metadata.addresses);
            update_addresses(&context.nodes, &node, &cloud).await;
        }
        Err(error) => tracing::warn!(
            node = %node.name_any(),
            %error,
            "error getting instance metadata for node addresses"
        ),
    }
}

//! The cloud node lifecycle controller (k8s.io/cloud-provider
//! "cloud-node-lifecycle-controller").
//!
//! Every `period` (sliding: the pause starts when a pass ends) it walks the
//! cached Nodes. A Ready node only loses the shutdown taint, if it has it; it
//! is never deleted, even when its VM is gone. A NotReady node (or one
//! without a Ready condition) whose VM is gone is deleted; one whose VM is
//! shut down gets the `node.cloudprovider.kubernetes.io/shutdown:NoSchedule`
//! taint. Cloud errors skip the node until the next pass.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, ObjectReference, Taint};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::informer::Listed;
use super::node_helpers::retry::{is_conflict, jittered};
use super::node_helpers::{is_ready, node_ref, taints};
use super::{EventRecorder, EventType, Informer, SyncedFlag};
use crate::instances::Instances;

/// `source.component` of this controller's Events: give it to the
/// `EventRecorder` passed to [`LifecycleController::new`].
pub const COMPONENT: &str = "cloud-node-lifecycle-controller";

/// Upstream `--node-monitor-period`.
pub const DEFAULT_MONITOR_PERIOD: Duration = Duration::from_secs(5);

/// Attempts of a taint patch that meets conflicts (upstream
/// `UpdateTaintBackoff`: 5 steps of 100 ms, jitter 1.0).
const TAINT_ATTEMPTS: u32 = 5;
const TAINT_RETRY_DELAY: Duration = Duration::from_millis(100);

/// Upstream's cloud-node-lifecycle-controller: every monitor period, each
/// NotReady Node whose VM is gone is deleted, and one whose VM is powered off
/// gets the shutdown taint (removed again when it runs).
pub struct LifecycleController {
    nodes: Api<Node>,
    cache: Store<Node>,
    listed: Listed,
    instances: Arc<Instances>,
    recorder: EventRecorder,
    period: Duration,
}

impl LifecycleController {
    /// `recorder` should publish as [`COMPONENT`]; Nodes are read from
    /// `nodes`, which the caller runs.
    pub fn new(
        client: Client,
        nodes: &Informer<Node>,
        instances: Arc<Instances>,
        recorder: EventRecorder,
        period: Duration,
    ) -> Self {
        Self {
            nodes: Api::all(client),
            cache: nodes.store(),
            listed: nodes.listed(),
            instances,
            recorder,
            period,
        }
    }

    /// Runs until the future is dropped. `synced` is set once the node
    /// cache holds its initial list.
    pub async fn run(self, synced: SyncedFlag) {
        if !self.listed.clone().wait().await {
            return;
        }
        synced.set();
        loop {
            self.monitor_nodes().await;
            tokio::time::sleep(self.period).await;
        }
    }

    /// One pass over the cached nodes, one at a time as upstream.
    async fn monitor_nodes(&self) {
        for node in self.cache.state() {
            self.monitor_node(&node).await;
        }
    }

    async fn monitor_node(&self, node: &Node) {
        let name = node.name_any();
        let shutdown = taints::shutdown_taint();
        if is_ready(node) {
            if taints::has_matching(taints::node_taints(node), &shutdown) {
                let removed = self
                    .edit_taints(&name, |current| taints::without_taint(current, &shutdown))
                    .await;
                if let Err(error) = removed {
                    tracing::warn!(node = %name, %error, "error removing the shutdown taint");
                }
            }
            return;
        }
        let instance = node_ref(node);
        let exists = match self.instances.instance_exists(&instance).await {
            Ok(exists) => exists,
            Err(error) => {
                tracing::warn!(node = %name, %error, "error checking if node exists");
                return;
            }
        };
        if !exists {
            self.delete_node(node).await;
            return;
        }
        match self.instances.instance_shutdown(&instance).await {
            Ok(false) => {}
            Ok(true) => {
                let added = self
                    .edit_taints(&name, |current| taints::with_taint(current, &shutdown))
                    .await;
                if let Err(error) = added {
                    tracing::warn!(node = %name, %error, "failed to apply the shutdown taint; the node may have been deleted");
                }
            }
            Err(error) => {
                tracing::warn!(node = %name, %error, "error checking if node is shut down");
            }
        }
    }

    /// `DeletingNode`, then the DELETE; a failure is reported and the next
    /// pass tries again.
    async fn delete_node(&self, node: &Node) {
        let name = node.name_any();
        tracing::info!(node = %name, "deleting node since it is no longer present in cloud provider");
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(name.clone()),
            uid: node.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        let message =
            format!("Deleting node {name} because it does not exist in the cloud provider");
        self.recorder
            .publish(&reference, EventType::Normal, "DeletingNode", &message)
            .await;
        if let Err(error) = self.nodes.delete(&name, &DeleteParams::default()).await {
            tracing::warn!(node = %name, %error, "unable to delete node");
            let message = format!("Failed deleting node {name}: {error}");
            self.recorder
                .publish(
                    &reference,
                    EventType::Warning,
                    "DeletingNodeFailed",
                    &message,
                )
                .await;
        }
    }

    /// Reads the node from the API server, applies `edit` to its taints and
    /// patches the result with the resourceVersion read, so a concurrent
    /// change is a conflict rather than lost; conflicts are retried.
    /// `edit` returning `None` means there is nothing to change.
    async fn edit_taints(
        &self,
        name: &str,
        edit: impl Fn(&[Taint]) -> Option<Vec<Taint>>,
    ) -> Result<(), kube::Error> {
        let mut attempt = 1;
        loop {
            let node = self.nodes.get(name).await?;
            let Some(updated) = edit(taints::node_taints(&node)) else {
                return Ok(());
            };
            let patch = json!({
                "metadata": {"resourceVersion": node.resource_version()},
                "spec": {"taints": (!updated.is_empty()).then_some(updated)},
            });
            match self
                .nodes
                .patch(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(error) if is_conflict(&error) && attempt < TAINT_ATTEMPTS => {
                    attempt += 1;
                    tokio::time::sleep(jittered(TAINT_RETRY_DELAY)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }
}

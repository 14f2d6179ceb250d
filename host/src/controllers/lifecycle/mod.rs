//! The cloud node lifecycle controller (k8s.io/cloud-provider
//! "cloud-node-lifecycle-controller").
//!
//! Every `monitor_period` (sliding: the pause starts when a pass ends) it
//! walks the cached Nodes. A Ready node only loses the shutdown taint, if it
//! has it; it is never deleted, even when its VM is gone. A NotReady node (or
//! one without a Ready condition) whose VM is gone is deleted; one whose VM
//! is shut down gets the `node.cloudprovider.kubernetes.io/shutdown:NoSchedule`
//! taint. Cloud errors skip the node until the next pass.
//!
//! Deletions wait for the end of the pass and go through the mass-deletion
//! guard (`guard.rs`), which upstream lacks: when the VM inventory is empty,
//! or when more than one Node and more than `--max-node-deletion-fraction`
//! (default 0.5) of the Nodes would go, the pass deletes none of them and
//! puts a Warning `NodeDeletionHeld` on each, since VCD hiding the VMs (the
//! role's rights, a renamed vApp) looks exactly like every VM being gone.
//! Otherwise each Node is deleted if its VM is still not found then.

mod guard;
mod metrics;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, ObjectReference, Taint};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};
use prometheus_client::registry::Registry;
use serde_json::json;

pub use guard::{DeletionFraction, FractionError};

use super::informer::Listed;
use super::node_helpers::retry::{is_conflict, jittered};
use super::node_helpers::{is_ready, node_ref, taints};
use super::{EventRecorder, EventType, Informer, SyncGate, SyncedFlag};
use crate::instances::Instances;
use guard::Hold;
use metrics::LifecycleMetrics;

/// `source.component` of this controller's Events: give it to the
/// `EventRecorder` passed to [`LifecycleController::new`].
pub const COMPONENT: &str = "cloud-node-lifecycle-controller";

/// Upstream `--node-monitor-period`.
pub const DEFAULT_MONITOR_PERIOD: Duration = Duration::from_secs(5);

/// Attempts of a taint patch that meets conflicts (upstream
/// `UpdateTaintBackoff`: 5 steps of 100 ms, jitter 1.0).
const TAINT_ATTEMPTS: u32 = 5;
const TAINT_RETRY_DELAY: Duration = Duration::from_millis(100);

/// `reason` of the Warning Event on each Node whose deletion is held.
pub const HELD_REASON: &str = "NodeDeletionHeld";

/// While a hold lasts, each held Node's Event is written again (folded into
/// a count) at most this often, unless its message changes: one write per
/// Node per pass would spend the client's request rate on a cluster-wide
/// incident.
const HELD_EVENT_INTERVAL: Duration = Duration::from_secs(60);

/// How the lifecycle controller works.
#[derive(Debug, Clone)]
pub struct LifecycleConfig {
    /// Pause between two passes (`--node-monitor-period`).
    pub monitor_period: Duration,
    /// The mass-deletion guard's limit (`--max-node-deletion-fraction`).
    pub max_deletion_fraction: DeletionFraction,
    /// Closed on SIGTERM: each pass holds it while it taints and deletes.
    pub gate: SyncGate,
}

impl Default for LifecycleConfig {
    /// Upstream's period; half the Nodes.
    fn default() -> Self {
        Self {
            monitor_period: DEFAULT_MONITOR_PERIOD,
            max_deletion_fraction: DeletionFraction::default(),
            gate: SyncGate::default(),
        }
    }
}

/// Upstream's cloud-node-lifecycle-controller: every monitor period, each
/// NotReady Node whose VM is gone is deleted (unless the mass-deletion guard
/// holds the pass), and one whose VM is powered off gets the shutdown taint
/// (removed again when it runs).
pub struct LifecycleController {
    nodes: Api<Node>,
    cache: Store<Node>,
    listed: Listed,
    instances: Arc<Instances>,
    recorder: EventRecorder,
    config: LifecycleConfig,
    metrics: LifecycleMetrics,
    /// Each Node of the current hold → its last Event's message and time.
    announced: HashMap<String, (String, Instant)>,
}

impl LifecycleController {
    /// `recorder` should publish as [`COMPONENT`]; Nodes are read from
    /// `nodes`, which the caller runs; the guard's metrics are registered
    /// in `metrics` at once.
    pub fn new(
        client: Client,
        nodes: &Informer<Node>,
        instances: Arc<Instances>,
        recorder: EventRecorder,
        config: LifecycleConfig,
        metrics: &mut Registry,
    ) -> Self {
        Self {
            nodes: Api::all(client),
            cache: nodes.store(),
            listed: nodes.listed(),
            instances,
            recorder,
            config,
            metrics: LifecycleMetrics::register(metrics),
            announced: HashMap::new(),
        }
    }

    /// Runs until the future is dropped. `synced` is set once the node
    /// cache holds its initial list.
    pub async fn run(mut self, synced: SyncedFlag) {
        if !self.listed.clone().wait().await {
            return;
        }
        synced.set();
        loop {
            let permit = self.config.gate.enter().await;
            self.monitor_nodes().await;
            self.metrics.passes.inc();
            drop(permit);
            tokio::time::sleep(self.config.monitor_period).await;
        }
    }

    /// One pass over the cached nodes, one at a time as upstream; the
    /// deletions come last, through the guard.
    async fn monitor_nodes(&mut self) {
        let nodes = self.cache.state();
        let mut gone = Vec::new();
        for node in &nodes {
            if self.monitor_node(node).await {
                gone.push(node.clone());
            }
        }
        self.delete_or_hold(&gone, nodes.len()).await;
    }

    /// Deletes the `gone` Nodes of the `nodes` cached, unless the guard
    /// holds them all.
    async fn delete_or_hold(&mut self, gone: &[Arc<Node>], nodes: usize) {
        if gone.is_empty() {
            self.release();
            return;
        }
        let hold = match self.instances.vm_count().await {
            Ok(vms) => Hold::check(
                gone.len(),
                nodes,
                vms,
                &self.instances.scope(),
                self.config.max_deletion_fraction,
            ),
            Err(error) => {
                // Not knowing whether the inventory is empty is no ground
                // to delete: the next pass decides.
                tracing::warn!(%error, "error counting the VMs; no node is deleted this pass");
                return;
            }
        };
        match hold {
            Some(hold) => self.hold(gone, nodes, &hold).await,
            None => {
                self.release();
                for node in gone {
                    self.delete_if_still_gone(node).await;
                }
            }
        }
    }

    /// Ends a hold, if one was on.
    fn release(&mut self) {
        if !self.announced.is_empty() {
            tracing::info!("node deletions resume: the VM inventory looks sane again");
            self.announced.clear();
        }
        self.metrics.held_nodes.set(0);
    }

    /// Deletes nothing; says so in the log, the metrics and an Event on
    /// each held Node (again only every [`HELD_EVENT_INTERVAL`]).
    async fn hold(&mut self, gone: &[Arc<Node>], nodes: usize, hold: &Hold) {
        tracing::warn!(
            held = gone.len(),
            nodes,
            reason = hold.reason(),
            "node deletions held: {hold}; check the VCD role's rights to see the cluster's VMs and the vApp name (vAppName)"
        );
        self.metrics.held_nodes.set(gone.len() as i64);
        self.metrics.held_passes.inc();
        let mut announced = HashMap::with_capacity(gone.len());
        for node in gone {
            let name = node.name_any();
            let message = hold.message(&name);
            let last = self
                .announced
                .remove(&name)
                .filter(|(said, at)| *said == message && at.elapsed() < HELD_EVENT_INTERVAL);
            let last = match last {
                Some(last) => last,
                None => {
                    self.recorder
                        .publish(&reference(node), EventType::Warning, HELD_REASON, &message)
                        .await;
                    (message, Instant::now())
                }
            };
            announced.insert(name, last);
        }
        // Nodes no longer held are forgotten: a new hold announces them again.
        self.announced = announced;
    }

    /// Whether the node is NotReady and its VM gone (to delete at the end of
    /// the pass); taint changes are made here.
    async fn monitor_node(&self, node: &Node) -> bool {
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
            return false;
        }
        let instance = node_ref(node);
        let exists = match self.instances.instance_exists(&instance).await {
            Ok(exists) => exists,
            Err(error) => {
                tracing::warn!(node = %name, %error, "error checking if node exists");
                return false;
            }
        };
        if !exists {
            return true;
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
        false
    }

    /// The walk looks the VMs up one by one, so a VM VCD showed again
    /// meanwhile (rights restored mid-pass) would otherwise cost its Node.
    async fn delete_if_still_gone(&self, node: &Node) {
        match self.instances.instance_exists(&node_ref(node)).await {
            Ok(false) => self.delete_node(node).await,
            Ok(true) => {}
            Err(error) => {
                tracing::warn!(node = %node.name_any(), %error, "error checking if node exists");
            }
        }
    }

    /// `DeletingNode`, then the DELETE; a failure is reported and the next
    /// pass tries again.
    async fn delete_node(&self, node: &Node) {
        let name = node.name_any();
        tracing::info!(node = %name, "deleting node since it is no longer present in cloud provider");
        let reference = reference(node);
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

/// The Node as its Events' `involvedObject` (which puts them in `default`).
fn reference(node: &Node) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Node".into()),
        name: Some(node.name_any()),
        uid: node.metadata.uid.clone(),
        ..ObjectReference::default()
    }
}

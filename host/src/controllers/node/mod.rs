//! The cloud node controller (k8s.io/cloud-provider "cloud-node-controller").
//!
//! Every Node add or update is synced by one of `concurrent_node_syncs`
//! workers, never two at once for the same node. A node with the
//! `node.cloudprovider.kubernetes.io/uninitialized` taint is initialised from
//! its VM (`sync`); an initialised node only gets its GA topology labels
//! copied from the beta ones. A failed sync keeps the taint and is retried
//! with a per-node backoff. Separately, every `node_status_update_frequency`
//! the addresses of initialised nodes are refreshed (`address_refresh`).

mod address_refresh;
mod metrics;
mod sync;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;

use k8s_openapi::api::core::v1::Node;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};
use prometheus_client::registry::Registry;

pub use super::node_helpers::labels::{INSTANCE_TYPE, ZONE};
pub use super::node_helpers::taints::{
    SHUTDOWN_TAINT_KEY, UNINITIALIZED_TAINT_KEY, is_uninitialized,
};
pub use super::node_helpers::trim_cached;
pub use sync::NodeSyncError;

use super::informer::{Change, Informer, Listed};
use super::workqueue::{Backoff, WorkQueue};
use super::{EventRecorder, SyncGate, SyncedFlag};
use crate::instances::Instances;
use metrics::NodeMetrics;

/// `source.component` of this controller's Events: give it to the
/// `EventRecorder` passed to [`CloudNodeController::new`].
pub const COMPONENT: &str = "cloud-node-controller";

/// How the cloud node controller works.
#[derive(Debug, Clone)]
pub struct NodeControllerConfig {
    /// Workers syncing nodes (`--concurrent-node-syncs`); also the
    /// parallelism of the address refresh. 0 counts as 1.
    pub concurrent_node_syncs: usize,
    /// Pause between two address refreshes (`--node-status-update-frequency`).
    pub node_status_update_frequency: Duration,
    /// Closed on SIGTERM: each Node's sync and refresh holds it.
    pub gate: SyncGate,
}

impl Default for NodeControllerConfig {
    /// Upstream's defaults: one worker, five minutes.
    fn default() -> Self {
        Self {
            concurrent_node_syncs: 1,
            node_status_update_frequency: Duration::from_secs(5 * 60),
            gate: SyncGate::default(),
        }
    }
}

/// What the sync workers and the address refresh share.
struct Context {
    nodes: Api<Node>,
    instances: Arc<Instances>,
    recorder: EventRecorder,
    metrics: NodeMetrics,
    /// client-go's default per-item limiter: 5 ms doubling to 1000 s.
    backoff: Backoff<String>,
    gate: SyncGate,
}

/// Upstream's cloud-node-controller: initialises Nodes that carry the
/// `uninitialized` taint from their VMs and refreshes their addresses.
pub struct CloudNodeController {
    context: Arc<Context>,
    config: NodeControllerConfig,
    cache: Store<Node>,
    listed: Listed,
    /// Names of nodes to sync.
    queue: Arc<WorkQueue<String>>,
}

impl CloudNodeController {
    /// `recorder` should publish as [`COMPONENT`]; the metrics are
    /// registered in `metrics` at once. Every Node added or updated in
    /// `nodes` (which the caller runs) is synced, as upstream.
    pub fn new(
        client: Client,
        nodes: &mut Informer<Node>,
        instances: Arc<Instances>,
        recorder: EventRecorder,
        config: NodeControllerConfig,
        metrics: &mut Registry,
    ) -> Self {
        let queue = WorkQueue::new();
        {
            let queue = queue.clone();
            nodes.on_change(move |change| {
                if let Change::Added(node) | Change::Updated { new: node, .. } = change {
                    queue.add(node.name_any());
                }
            });
        }
        let context = Context {
            nodes: Api::all(client),
            instances,
            recorder,
            metrics: NodeMetrics::register(metrics),
            backoff: Backoff::new(Duration::from_millis(5), Duration::from_secs(1000)),
            gate: config.gate.clone(),
        };
        Self {
            context: Arc::new(context),
            config,
            cache: nodes.store(),
            listed: nodes.listed(),
            queue,
        }
    }

    /// Runs until the future is dropped. `synced` is set once the node
    /// cache holds its initial list.
    pub async fn run(self, synced: SyncedFlag) {
        if !self.listed.clone().wait().await {
            return;
        }
        synced.set();
        let workers = self.config.concurrent_node_syncs.max(1);
        let syncs = futures::future::join_all((0..workers).map(|_| self.worker()));
        let refresh = address_refresh::run(
            &self.context,
            &self.cache,
            self.config.node_status_update_frequency,
            workers,
        );
        futures::join!(syncs, refresh);
    }

    /// Syncs queued nodes; a failure comes back after the node's backoff.
    async fn worker(&self) {
        loop {
            let name = self.queue.next().await;
            let permit = self.context.gate.enter().await;
            match self.cache.get(&ObjectRef::new(&name)) {
                Some(node) => {
                    // A panic in one Node's sync fails that sync, not the
                    // worker: the Node would otherwise stay taken for good.
                    let result = AssertUnwindSafe(sync::sync_node(&node, &self.context))
                        .catch_unwind()
                        .await
                        .unwrap_or_else(|_| {
                            Err(sync::NodeSyncError::Panicked { node: name.clone() })
                        });
                    if let Err(error) = result {
                        let delay = self.context.backoff.next_delay(name.clone());
                        self.context.metrics.sync_failures.inc();
                        tracing::warn!(node = %name, %error, retry_in = ?delay, "node sync failed; requeuing");
                        self.queue.add_after(name.clone(), delay);
                    }
                }
                None => {
                    tracing::debug!(node = %name, "node gone before its sync");
                    self.context.backoff.forget(&name);
                }
            }
            drop(permit);
            self.queue.done(&name);
        }
    }
}

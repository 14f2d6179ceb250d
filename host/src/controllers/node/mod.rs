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

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use prometheus_client::registry::Registry;

pub use sync::NodeSyncError;

use super::workqueue::Backoff;
use super::{EventRecorder, SyncedFlag};
use crate::instances::Instances;
use metrics::NodeMetrics;

/// `source.component` of this controller's Events: give it to the
/// `EventRecorder` passed to [`CloudNodeController::new`].
pub const COMPONENT: &str = "cloud-node-controller";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeControllerConfig {
    /// Workers syncing nodes (`--concurrent-node-syncs`); also the
    /// parallelism of the address refresh. 0 counts as 1.
    pub concurrent_node_syncs: usize,
    /// Pause between two address refreshes (`--node-status-update-frequency`).
    pub node_status_update_frequency: Duration,
}

impl Default for NodeControllerConfig {
    /// Upstream's defaults: one worker, five minutes.
    fn default() -> Self {
        Self {
            concurrent_node_syncs: 1,
            node_status_update_frequency: Duration::from_secs(5 * 60),
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
}

pub struct CloudNodeController {
    context: Arc<Context>,
    config: NodeControllerConfig,
}

impl CloudNodeController {
    /// `recorder` should publish as [`COMPONENT`]; the metrics are
    /// registered in `metrics` at once.
    pub fn new(
        client: Client,
        instances: Arc<Instances>,
        recorder: EventRecorder,
        config: NodeControllerConfig,
        metrics: &mut Registry,
    ) -> Self {
        let context = Context {
            nodes: Api::all(client),
            instances,
            recorder,
            metrics: NodeMetrics::register(metrics),
            backoff: Backoff::new(Duration::from_millis(5), Duration::from_secs(1000)),
        };
        Self {
            context: Arc::new(context),
            config,
        }
    }

    /// Watches Nodes and runs until the future is dropped. `synced` is set
    /// once the node cache holds its initial list.
    pub async fn run(self, synced: SyncedFlag) {
        let workers = self.config.concurrent_node_syncs.max(1);
        let concurrency = u16::try_from(workers).unwrap_or(u16::MAX);
        let controller = Controller::new(self.context.nodes.clone(), watcher::Config::default())
            .with_config(controller::Config::default().concurrency(concurrency));
        let store = controller.store();
        let syncs = controller
            .run(sync::sync_node, error_policy, self.context.clone())
            .for_each(|outcome| async move { log_failure(outcome) });
        let frequency = self.config.node_status_update_frequency;
        let context = self.context;
        let refresh = async move {
            if store.wait_until_ready().await.is_err() {
                return;
            }
            synced.set();
            address_refresh::run(&context, &store, frequency, workers).await;
        };
        futures::join!(syncs, refresh);
    }
}

fn error_policy(node: Arc<Node>, error: &NodeSyncError, context: Arc<Context>) -> Action {
    let name = node.name_any();
    let delay = context.backoff.next_delay(name.clone());
    tracing::warn!(node = %name, %error, retry_in = ?delay, "node sync failed; requeuing");
    Action::requeue(delay)
}

type Outcome = Result<
    (kube::runtime::reflector::ObjectRef<Node>, Action),
    controller::Error<NodeSyncError, watcher::Error>,
>;

/// Failed syncs are logged by `error_policy`; this logs the rest.
fn log_failure(outcome: Outcome) {
    match outcome {
        Ok(_) | Err(controller::Error::ReconcilerFailed(..)) => {}
        // A node deleted before its queued sync ran.
        Err(controller::Error::ObjectNotFound(node)) => {
            tracing::debug!(%node, "node gone before its sync");
        }
        Err(error) => tracing::warn!(%error, "cloud node controller: watching nodes"),
    }
}

//! The service controller: LoadBalancer Services → the cloud side's load
//! balancers, with k8s.io/cloud-provider's semantics (see `README.md` in
//! the parent folder): which Services and changes count, the cleanup
//! finalizer, the node set, Events, backoff, and node changes → `update`.

mod condition;
mod config;
mod drift;
mod endpoints;
mod health;
mod inputs;
mod journal;
mod locks;
mod loops;
mod marks;
mod metrics;
mod nodesync;
mod pending;
mod policies;
mod predicates;
mod rotation;
mod spec;
mod sweep;
mod sync;
mod tls_secrets;
mod writes;

pub use condition::{HEALTHY_CONDITION, READY_CONDITION, condition_of};
pub use config::{DEFAULT_DRIFT_PERIOD, ServiceControllerConfig, lease_reference};
pub use inputs::Caches;
pub use journal::AnnotationJournal;
pub use predicates::{CLEANUP_FINALIZER, ClassFilter, has_finalizer, internal_ip};
pub use rotation::{CERTIFICATE_UPDATED, DEFAULT_TLS_SECRET_PERIOD};
pub use tls_secrets::KubeTlsSecrets;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Node, ObjectReference, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::Store;
use kube::{Api, Client};
use prometheus_client::registry::Registry;
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

use super::drain::{SyncGate, SyncPermit};
use super::informer::{Change, Informer, Listed};
use super::supervise::TaskHealth;
use super::workqueue::{Backoff, WorkQueue};
use super::{EventRecorder, EventType, SyncedFlag};
use crate::lb::LoadBalancers;
use crate::policy::Registry as PolicyRegistry;
use endpoints::{EndpointChanges, endpoint_sync_loop, is_local};
use loops::{cleanup_resync_loop, node_sync_loop, worker};
use marks::Marks;
use metrics::ServiceMetrics;
use pending::PendingReporter;
use predicates::{needs_cleanup, should_sync_updated_node};
use spec::service_key;
use spec::{NodeKey, NodeSetDigest};
use writes::ServiceWrites;

/// The controller's name in task supervision.
const NAME: &str = "service";

pub(crate) struct Shared {
    lb: Arc<LoadBalancers>,
    writes: ServiceWrites,
    recorder: EventRecorder,
    /// Where process-wide Warnings go (see [`ServiceControllerConfig::events_on`]).
    events_on: ObjectReference,
    class: ClassFilter,
    workers: usize,
    services: Store<Service>,
    /// Nodes, EndpointSlices and Namespaces: a Service's inputs.
    caches: Caches,
    /// Services synced since start (upstream's serviceCache).
    synced: Mutex<HashMap<String, Arc<Service>>>,
    /// The members each Service's load balancer was last given.
    last_nodes: Mutex<HashMap<String, NodeSetDigest>>,
    /// A Service's sync and its node update never run at the same time:
    /// both write the same VCD objects; nor do the syncs of one sharing group.
    locks: locks::WriteLocks,
    gate: SyncGate,
    /// Services queued by the drift check and not synced since.
    drift_marks: Marks,
    drift_period: Option<Duration>,
    health_period: Option<Duration>,
    /// Services queued by the TLS Secret check and not synced since.
    rotation_marks: Marks,
    tls_secret_period: Option<Duration>,
    queue: Arc<WorkQueue<String>>,
    backoff: Backoff<String>,
    metrics: ServiceMetrics,
}

/// One Service's write access: its own lock (after its sharing group's),
/// inside the process's gate.
struct Exclusive {
    _locks: locks::Held,
    _permit: SyncPermit,
}

type Watch = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// The load-balancer side as the process brings it up: it may fail (ALB not
/// enabled on the gateway, a misnamed network, missing rights) while the
/// node side works, and is retried.
#[derive(Clone)]
pub enum LbSide {
    /// Not working yet, and why.
    Pending(String),
    /// Ready to serve.
    Ready(Arc<LoadBalancers>),
}

type MakeShared = Box<dyn FnOnce(Arc<LoadBalancers>) -> Shared + Send>;

/// Upstream's service controller: a load balancer (and its status, finalizer
/// and Events) for every Service of type LoadBalancer this CCM serves.
pub struct ServiceController {
    /// Builds the workers' state once the load-balancer side is ready.
    make_shared: MakeShared,
    lb: watch::Receiver<LbSide>,
    policies: Arc<PolicyRegistry>,
    pending: PendingReporter,
    watches: Vec<Watch>,
    /// The Service, Node, Namespace and EndpointSlice caches.
    listed: [Listed; 4],
    nodes_changed: Arc<Notify>,
    endpoints_changed: EndpointChanges,
    tasks: TaskHealth,
}

impl ServiceController {
    /// Watches Services and Namespaces itself; Nodes come from `nodes`,
    /// which the caller runs. Until `lb` is ready, every LoadBalancer
    /// Service gets a Warning Event saying why.
    pub fn new(
        client: Client,
        nodes: &mut Informer<Node>,
        policies: Arc<PolicyRegistry>,
        lb: watch::Receiver<LbSide>,
        recorder: EventRecorder,
        config: ServiceControllerConfig,
        registry: &mut Registry,
    ) -> Self {
        let class = config.classes.clone();
        let queue = WorkQueue::new();
        let metrics = ServiceMetrics::register(registry, queue.adds());
        let nodes_changed = Arc::new(Notify::new());

        let mut services = Informer::new(Api::<Service>::all(client.clone()));
        {
            let (queue, class) = (queue.clone(), class.clone());
            services.on_change(move |change| {
                let enqueue = match change {
                    Change::Added(new) => class.wants_load_balancer(new) || needs_cleanup(new),
                    Change::Updated { old, new } => {
                        class.needs_update(old, new) || needs_cleanup(new)
                    }
                    // Deletion arrives as an update setting deletionTimestamp.
                    Change::Deleted(_) => false,
                };
                if let (true, Change::Added(s) | Change::Updated { new: s, .. }) = (enqueue, change)
                {
                    queue.add(service_key(s));
                }
            });
        }
        {
            let changed = nodes_changed.clone();
            nodes.on_change(move |change| {
                if match change {
                    Change::Added(_) | Change::Deleted(_) => true,
                    Change::Updated { old, new } => should_sync_updated_node(old, new),
                } {
                    changed.notify_one();
                }
            });
        }
        let mut namespaces = Informer::new(Api::<Namespace>::all(client.clone()));
        namespaces.on_change(policies::on_namespace_change(
            services.store(),
            queue.clone(),
            class.clone(),
            policies.clone(),
        ));
        let endpoints_changed = EndpointChanges::default();
        let mut slices = Informer::new(Api::<EndpointSlice>::all(client.clone()));
        slices.on_change(endpoints_changed.handler());
        let pending = PendingReporter {
            recorder: recorder.clone(),
            writes: ServiceWrites::new(client.clone()),
            services: services.store(),
            class: class.clone(),
        };
        let (service_store, node_store, namespace_store, slice_store) = (
            services.store(),
            nodes.store(),
            namespaces.store(),
            slices.store(),
        );
        let make_shared: MakeShared = Box::new(move |lb| Shared {
            lb,
            writes: ServiceWrites::new(client),
            recorder,
            events_on: config.events_on.clone(),
            class,
            workers: config.workers.max(1),
            services: service_store,
            caches: Caches {
                nodes: node_store,
                endpoint_slices: slice_store,
                namespaces: namespace_store,
            },
            synced: Mutex::default(),
            last_nodes: Mutex::default(),
            locks: locks::WriteLocks::default(),
            gate: config.gate.clone(),
            drift_marks: Marks::default(),
            drift_period: config.drift_period,
            health_period: config.health_period,
            rotation_marks: Marks::default(),
            tls_secret_period: config.tls_secret_period,
            queue,
            backoff: Backoff::new(config.base_backoff, config.max_backoff),
            metrics,
        });
        Self {
            make_shared,
            lb,
            policies,
            pending,
            listed: [
                services.listed(),
                nodes.listed(),
                namespaces.listed(),
                slices.listed(),
            ],
            watches: vec![
                Box::pin(services.run()),
                Box::pin(namespaces.run()),
                Box::pin(slices.run()),
            ],
            nodes_changed,
            endpoints_changed,
            tasks: config.tasks.clone(),
        }
    }

    /// Runs until dropped: waits for the caches and the load-balancer side,
    /// sweeps objects of Services that no longer exist, then serves the
    /// queues.
    pub async fn run(self, synced: SyncedFlag) {
        let mut tasks = JoinSet::new();
        for watch in self.watches {
            tasks.spawn(watch);
        }
        for listed in self.listed {
            if !listed.wait().await {
                return;
            }
        }
        let Some(lb) = self.pending.until_ready(self.lb).await else {
            return;
        };
        let shared = Arc::new((self.make_shared)(lb));
        sweep::sweep(&shared).await;
        synced.set();
        let health = &self.tasks;
        for _ in 0..shared.workers {
            let s = shared.clone();
            tasks.spawn(
                health
                    .clone()
                    .supervise(NAME, "worker", move || worker(s.clone())),
            );
        }
        let (s, changed) = (shared.clone(), self.nodes_changed);
        tasks.spawn(health.clone().supervise(NAME, "node-sync", move || {
            node_sync_loop(s.clone(), changed.clone())
        }));
        let (s, changes) = (shared.clone(), self.endpoints_changed);
        tasks.spawn(health.clone().supervise(NAME, "endpoint-sync", move || {
            endpoint_sync_loop(s.clone(), changes.clone())
        }));
        let s = shared.clone();
        tasks.spawn(health.clone().supervise(NAME, "cleanup-resync", move || {
            cleanup_resync_loop(s.clone())
        }));
        if let Some(period) = shared.drift_period {
            let s = shared.clone();
            tasks.spawn(health.clone().supervise(NAME, "drift-repair", move || {
                drift::drift_loop(s.clone(), period)
            }));
        }
        if let Some(period) = shared.health_period {
            let s = shared.clone();
            tasks.spawn(health.clone().supervise(NAME, "health", move || {
                health::health_loop(s.clone(), period)
            }));
        }
        if let Some(period) = shared.tls_secret_period {
            let s = shared.clone();
            tasks.spawn(health.clone().supervise(NAME, "tls-secrets", move || {
                rotation::rotation_loop(s.clone(), period)
            }));
        }
        let (s, policies) = (shared.clone(), self.policies.clone());
        tasks.spawn(health.clone().supervise(NAME, "policy-reloads", move || {
            policies::follow_policy_reloads(s.clone(), policies.clone())
        }));
        let (s, policies) = (shared.clone(), self.policies);
        tasks.spawn(health.clone().supervise(NAME, "shadow-reports", move || {
            policies::report_shadow_differences(s.clone(), policies.clone())
        }));
        while let Some(result) = tasks.join_next().await {
            if let Err(error) = result {
                tracing::error!(%error, "a service controller task ended");
            }
        }
    }
}

impl Shared {
    /// Why a Service's load balancer has no members, as an Event's reason
    /// and message; `None` when it has some.
    fn no_members(
        &self,
        service: &Service,
        members: &[NodeKey],
    ) -> Option<(&'static str, &'static str)> {
        if !members.is_empty() {
            None
        } else if self.caches.node_set().is_empty() || !is_local(service) {
            Some((
                "UnAvailableLoadBalancer",
                "There are no available nodes for LoadBalancer",
            ))
        } else {
            Some((
                "NoReadyEndpoints",
                "externalTrafficPolicy is Local and no node of the load balancer runs a ready endpoint of the Service: the load balancer has no members, and its traffic is dropped as kube-proxy would drop it",
            ))
        }
    }

    fn cache(&self) -> MutexGuard<'_, HashMap<String, Arc<Service>>> {
        self.synced.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cached(&self, key: &str) -> Option<Arc<Service>> {
        self.cache().get(key).cloned()
    }

    fn remember(&self, key: &str, service: &Arc<Service>) {
        self.cache().insert(key.to_string(), service.clone());
    }

    fn forget(&self, key: &str) {
        self.cache().remove(key);
        self.last_synced().remove(key);
    }

    /// Held while the Service's load balancer is being written, and while
    /// it chooses an address if it has a sharing key; waits for ever once
    /// the process is stopping.
    async fn exclusive(&self, key: &str, sharing_key: Option<&str>) -> Exclusive {
        let permit = self.gate.enter().await;
        Exclusive {
            _locks: self.locks.hold(key, sharing_key).await,
            _permit: permit,
        }
    }

    /// Drops the lock of a Service no longer synced, once nobody holds it.
    fn drop_lock_if_unused(&self, key: &str) {
        if !self.cache().contains_key(key) {
            self.locks.forget_unused(key);
        }
    }

    fn last_synced(&self) -> MutexGuard<'_, HashMap<String, NodeSetDigest>> {
        self.last_nodes.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn event(&self, object: &ObjectReference, kind: EventType, reason: &str, message: &str) {
        self.recorder.publish(object, kind, reason, message).await;
    }
}

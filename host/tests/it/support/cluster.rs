//! The end-to-end harness of the service controller: vcdsim and kubesim in
//! process, the real load balancer and controller between them, and the
//! waits and reads the tests share.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Namespace, Node, Service};
use kube::api::{Api, DeleteParams, PostParams};
use kubesim::KubeSim;
use prometheus_client::registry::Registry;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
pub use vcd_ccm::controllers::service::ServiceControllerConfig;
use vcd_ccm::controllers::service::{AnnotationJournal, KubeTlsSecrets, LbSide, ServiceController};
use vcd_ccm::controllers::{CacheSync, EventRecorder, Informer};
use vcd_ccm::lb::LbConfig;
use vcd_ccm::policy::directory::{self, DirectoryWatcher};
use vcdsim::Sim;

use crate::support::objects::ServiceEdits;
use crate::support::poll::holds_across;
pub use crate::support::poll::wait_for;
use crate::support::{lb, objects, vcd, wire};

pub use crate::support::CLUSTER;

pub struct Cluster {
    pub vcd: Sim,
    pub kube: KubeSim,
    pub client: kube::Client,
    pub registry: Registry,
    /// Provider policies, watched, when set before the controller starts.
    pub policy_dir: Option<PathBuf>,
    /// The load balancer's settings, when changed before the controller starts.
    pub lb_config: LbConfig,
    /// The policies the running controller decides with.
    pub policies: Option<Arc<vcd_ccm::policy::Registry>>,
    watcher: Option<DirectoryWatcher>,
    controller: Option<JoinHandle<()>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(task) = self.controller.take() {
            task.abort();
        }
        // Every end-to-end test holds what it sent VCD to the spec.
        if !std::thread::panicking() {
            wire::assert_requests_follow_the_spec(&self.vcd);
        }
    }
}

/// Quick retries so failure paths finish within a test's patience.
pub fn fast_config() -> ServiceControllerConfig {
    ServiceControllerConfig {
        workers: 2,
        base_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(2),
        ..ServiceControllerConfig::default()
    }
}

impl Cluster {
    pub async fn start() -> Self {
        Self::start_with(fast_config(), |_| {}).await
    }

    /// Seeds the clusters before the controller starts (`seed` sees both).
    pub async fn start_with(config: ServiceControllerConfig, seed: impl FnOnce(&mut Self)) -> Self {
        Self::start_on(lb::blocks_scenario(), config, seed).await
    }

    /// As [`Cluster::start_with`], on a gateway of `scenario`.
    pub async fn start_on(
        scenario: vcdsim::Scenario,
        config: ServiceControllerConfig,
        seed: impl FnOnce(&mut Self),
    ) -> Self {
        let vcd = vcd::sim_from(scenario).await;
        let kube = KubeSim::start().await.expect("kubesim starts");
        let client = kube.client().expect("a kube client");
        let mut cluster = Self {
            vcd,
            kube,
            client,
            registry: Registry::default(),
            policy_dir: None,
            lb_config: LbConfig::new(CLUSTER, "vdc1", "net1"),
            policies: None,
            watcher: None,
            controller: None,
        };
        seed(&mut cluster);
        cluster.start_controller(config).await;
        cluster
    }

    /// (Re)starts the controller, as a restarted process would.
    pub async fn start_controller(&mut self, config: ServiceControllerConfig) {
        if let Some(task) = self.controller.take() {
            task.abort();
        }
        let lb_config = self.lb_config.clone();
        let mut registry = lb::default_registry(&lb_config).await;
        if let Some(dir) = &self.policy_dir {
            let engine = lb::policy_engine();
            let default = registry.current().default.clone();
            let (set, report) = directory::load(&engine, dir, default, None)
                .await
                .expect("the policy directory loads");
            assert!(report.failed.is_empty(), "{:?}", report.failed);
            registry = Arc::new(vcd_ccm::policy::Registry::new(set));
            self.watcher =
                Some(directory::watch(engine, dir.clone(), registry.clone()).expect("a watch"));
        }
        let kube_system = Api::<Namespace>::all(self.client.clone())
            .get("kube-system")
            .await
            .expect("kubesim has kube-system");
        let identity = lb::identity(&kube_system.metadata.uid.expect("a uid"));
        let journal = Arc::new(AnnotationJournal::new(self.client.clone()));
        self.policies = Some(registry.clone());
        let secrets = Arc::new(KubeTlsSecrets::new(self.client.clone()));
        let lb = lb::secrets_engine(
            &self.vcd,
            lb_config,
            registry.clone(),
            identity,
            journal,
            secrets,
        )
        .await;
        let ready = tokio::sync::watch::channel(LbSide::Ready(Arc::new(lb))).1;
        let recorder = EventRecorder::new(self.client.clone(), "service-controller", "test");
        let mut metrics = Registry::default();
        vcd_ccm::policy::metrics::register_policy_set(&mut metrics, registry.clone());
        let mut nodes = Informer::new(Api::<Node>::all(self.client.clone()));
        let controller = ServiceController::new(
            self.client.clone(),
            &mut nodes,
            registry,
            ready,
            recorder,
            config,
            &mut metrics,
        );
        self.registry = metrics;
        let sync = CacheSync::default();
        let flag = sync.register("service");
        self.controller = Some(tokio::spawn(async move {
            futures::join!(controller.run(flag), nodes.run());
        }));
        wait_for("the service controller's caches", || async {
            sync.pending().is_empty().then_some(())
        })
        .await;
    }

    /// Stops the controller, as a crashed process would.
    pub fn controller_stop(&mut self) {
        if let Some(task) = self.controller.take() {
            task.abort();
        }
    }

    /// The controller's metrics in the text format `/metrics` serves.
    pub fn metrics_text(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("metrics encode");
        text
    }

    /// Service syncs completed so far (the work queue's), for holding a
    /// claim across syncs that ran.
    pub fn syncs(&self) -> u64 {
        vcd::metric_sum(
            &self.registry,
            "workqueue_work_duration_seconds_count",
            &["name=\"service\""],
        ) as u64
    }

    /// Holds across the next Service sync that the gateway has no pool and
    /// no virtual service: a refused Service wrote nothing, tried again too.
    pub async fn holds_no_load_balancer(&self) {
        let empty = || {
            self.vcd
                .with_world(|w| w.virtual_services.is_empty() && w.pools.is_empty())
        };
        holds_across("nothing written", 1, || self.syncs(), empty).await;
    }

    pub fn services(&self, namespace: &str) -> Api<Service> {
        Api::namespaced(self.client.clone(), namespace)
    }

    pub fn nodes(&self) -> Api<Node> {
        Api::all(self.client.clone())
    }

    /// Creates the Service; returns its uid.
    pub async fn create_service(&self, namespace: &str, body: Value) -> String {
        let service: Service = serde_json::from_value(body).expect("a Service");
        let created = self
            .services(namespace)
            .create(&PostParams::default(), &service)
            .await
            .expect("the Service is created");
        created.metadata.uid.expect("a uid")
    }

    pub async fn add_node(&self, name: &str, ip: &str) {
        self.nodes()
            .create(&PostParams::default(), &node(name, ip))
            .await
            .expect("the Node is created");
    }

    pub async fn delete_node(&self, name: &str) {
        self.nodes()
            .delete(name, &DeleteParams::default())
            .await
            .expect("the Node is deleted");
    }

    pub async fn service(&self, namespace: &str, name: &str) -> Option<Service> {
        self.services(namespace)
            .get_opt(name)
            .await
            .expect("a read")
    }

    /// The Service's `status.loadBalancer.ingress[0].ip`, once set.
    pub async fn wait_for_ip(&self, namespace: &str, name: &str) -> String {
        wait_for("the Service's external IP", || async {
            let service = self.service(namespace, name).await?;
            let ingress = service.status?.load_balancer?.ingress?;
            ingress.first()?.ip.clone()
        })
        .await
    }

    /// Waits until the Service no longer exists (its finalizer is gone).
    pub async fn wait_for_gone(&self, namespace: &str, name: &str) {
        wait_for(&format!("Service {namespace}/{name} gone"), || async {
            self.service(namespace, name).await.is_none().then_some(())
        })
        .await
    }

    /// (reason, message) of the Events about one object, oldest first.
    pub async fn events(&self, namespace: &str, name: &str) -> Vec<(String, String)> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), namespace);
        let mut events: Vec<Event> = api.list(&Default::default()).await.expect("events").items;
        events.sort_by_key(|e| e.metadata.creation_timestamp.clone().map(|t| t.0));
        events
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
            .collect()
    }

    /// (reason, count) of the Events about one object (repeats fold into `count`).
    pub async fn events_with_counts(&self, namespace: &str, name: &str) -> Vec<(String, i32)> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), namespace);
        let events = api.list(&Default::default()).await.expect("events").items;
        events
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .map(|e| (e.reason.unwrap_or_default(), e.count.unwrap_or(1)))
            .collect()
    }

    pub async fn wait_for_event(&self, namespace: &str, name: &str, reason: &str) -> String {
        wait_for(
            &format!("a {reason} Event on {namespace}/{name}"),
            || async {
                self.events(namespace, name)
                    .await
                    .into_iter()
                    .find(|(r, _)| r == reason)
                    .map(|(_, message)| message)
            },
        )
        .await
    }

    /// Pool member IPs of the Service's pools, sorted, per pool.
    pub fn pool_members(&self, uid: &str) -> Vec<Vec<String>> {
        self.pools_of(uid, |w, p| {
            let mut ips = w.pool_member_ips(p);
            ips.sort();
            ips
        })
    }

    /// The algorithm of each of the Service's pools.
    pub fn pool_algorithms(&self, uid: &str) -> Vec<Option<String>> {
        self.pools_of(uid, |_, p| p.algorithm.clone())
    }

    fn pools_of<T>(
        &self,
        uid: &str,
        read: impl Fn(&vcdsim::world::World, &vcdsim::world::alb::Pool) -> T,
    ) -> Vec<T> {
        let needle = format!(" uid={uid}");
        self.vcd.with_world(|w| {
            w.pools
                .iter()
                .filter(|p| {
                    p.description
                        .as_deref()
                        .unwrap_or_default()
                        .contains(&needle)
                })
                .map(|p| read(w, p))
                .collect()
        })
    }
}

pub fn node(name: &str, ip: &str) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True"}]
        }
    }))
    .expect("a Node")
}

/// A LoadBalancer Service with plain TCP ports (port, nodePort).
pub fn lb_service(name: &str, ports: &[(i32, i32)]) -> Value {
    let listed: Vec<i32> = ports.iter().map(|(port, _)| *port).collect();
    let mut service = objects::lb_service(name, &listed);
    for (entry, (_, node_port)) in service["spec"]["ports"]
        .as_array_mut()
        .expect("ports")
        .iter_mut()
        .zip(ports)
    {
        entry["nodePort"] = json!(node_port);
    }
    service
}

impl ServiceEdits for Cluster {
    fn client(&self) -> &kube::Client {
        &self.client
    }
}

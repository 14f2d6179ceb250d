//! The node controllers against kubesim and vcdsim in-process: a harness
//! that starts both simulators and the real controllers, Node fixtures, VM
//! changes, and polling with deadlines.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Node, NodeAddress};
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kubesim::KubeSim;
use prometheus_client::encoding::text::encode;
use prometheus_client::registry::Registry;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use vcd_ccm::controllers::lifecycle::{
    self, DeletionFraction, LifecycleConfig, LifecycleController,
};
use vcd_ccm::controllers::node::{self, CloudNodeController, NodeControllerConfig};
use vcd_ccm::controllers::{CacheSync, EventRecorder, Informer};
use vcd_ccm::instances::{
    ClusterVApps, HostnameSource, Instances, InstancesConfig, NicRole, ZoneMap,
};
use vcdsim::Sim;
use vcdsim::world::compute::PowerState;

pub use crate::support::poll::{eventually, holds_across};
use crate::support::vcd;

pub use vcd_ccm::controllers::node::{
    SHUTDOWN_TAINT_KEY as SHUTDOWN, UNINITIALIZED_TAINT_KEY as UNINITIALIZED,
};
pub const ZONE: &str = "zone-a";
pub const REGION: &str = "region-1";

/// Short periods so each behaviour shows within a second or two.
pub const MONITOR_PERIOD: Duration = Duration::from_millis(200);
pub const REFRESH_PERIOD: Duration = Duration::from_secs(1);

pub struct Harness {
    pub kube: KubeSim,
    pub vcd: Sim,
    pub nodes: Api<Node>,
    pub registry: Registry,
    pub caches: CacheSync,
    controllers: Vec<JoinHandle<()>>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        for controller in &self.controllers {
            controller.abort();
        }
    }
}

/// Which `Hostname` the cloud reports: none keeps the kubelet's.
pub fn instances_config(hostname: HostnameSource) -> InstancesConfig {
    let mut config = InstancesConfig::new(ClusterVApps::Named("cluster1".into()));
    config.zones = ZoneMap::parse(
        &format!("zones:\n  - name: {ZONE}\n    ovdcName: vdc1\n"),
        "test zones",
    )
    .expect("a valid zones file");
    config.region = Some(REGION.into());
    config.addresses.hostname = hostname;
    config.addresses.other_nics = NicRole::InternalIp;
    // VM changes must show quickly.
    config.cache_period = Duration::from_millis(300);
    config.power_state_max_age = Duration::ZERO;
    config
}

impl Harness {
    /// vcdsim's default world (vApp `cluster1`: control-plane-0, worker-0,
    /// worker-1), an empty kubesim, and both controllers running.
    pub async fn start(instances: InstancesConfig) -> Self {
        Self::start_with(instances, DeletionFraction::default(), |_, _| {}).await
    }

    /// As [`Harness::start`], with this `--max-node-deletion-fraction`, and
    /// `seed` run on both simulators before the controllers start, so their
    /// first pass sees all it made at once.
    pub async fn start_with(
        instances: InstancesConfig,
        max_deletion_fraction: DeletionFraction,
        seed: impl FnOnce(&Sim, &KubeSim),
    ) -> Self {
        let vcd = vcd::sim().await;
        let kube = KubeSim::start().await.expect("kubesim starts");
        seed(&vcd, &kube);
        let client = kube.client().expect("a kube client");
        let instances = Arc::new(
            Instances::new(vcd::tenant_client(&vcd).await, instances)
                .expect("a valid instances config"),
        );
        let mut registry = Registry::default();
        let caches = CacheSync::default();
        let config = NodeControllerConfig {
            concurrent_node_syncs: 2,
            node_status_update_frequency: REFRESH_PERIOD,
            ..NodeControllerConfig::default()
        };
        let mut nodes = Informer::new(Api::<Node>::all(client.clone())).trimmed(node::trim_cached);
        let node_controller = CloudNodeController::new(
            client.clone(),
            &mut nodes,
            instances.clone(),
            EventRecorder::new(client.clone(), node::COMPONENT, "test-host"),
            config,
            &mut registry,
        );
        let lifecycle_controller = LifecycleController::new(
            client.clone(),
            &nodes,
            instances,
            EventRecorder::new(client.clone(), lifecycle::COMPONENT, "test-host"),
            LifecycleConfig {
                monitor_period: MONITOR_PERIOD,
                max_deletion_fraction,
                ..LifecycleConfig::default()
            },
            &mut registry,
        );
        let controllers = vec![
            tokio::spawn(node_controller.run(caches.register("cloud-node"))),
            tokio::spawn(lifecycle_controller.run(caches.register("cloud-node-lifecycle"))),
            tokio::spawn(nodes.run()),
        ];
        let harness = Self {
            kube,
            vcd,
            nodes: Api::all(client),
            registry,
            caches,
            controllers,
        };
        let caches = harness.caches.clone();
        eventually("both node caches synced", || {
            caches.pending().is_empty().then_some(())
        })
        .await;
        harness
    }

    pub fn create(&self, node: Value) -> Node {
        let created = self.kube.seed(node).expect("the node is created");
        serde_json::from_value(created).expect("a Node")
    }

    pub fn node(&self, name: &str) -> Option<Node> {
        self.kube.get_typed(None, name).expect("kubesim reads")
    }

    /// Sets the node's Ready condition, as the kubelet (or its absence) would.
    pub async fn set_ready(&self, name: &str, ready: bool) {
        let status = if ready { "True" } else { "False" };
        let patch = json!({"status": {"conditions": [{"type": "Ready", "status": status}]}});
        self.nodes
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .expect("the node's status is patched");
    }

    pub async fn annotate(&self, name: &str, key: &str, value: &str) {
        let patch = json!({"metadata": {"annotations": {key: value}}});
        self.nodes
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .expect("the node is annotated");
    }

    /// Events whose reason is `reason`, in any namespace.
    pub fn events(&self, reason: &str) -> Vec<Event> {
        self.kube
            .list_typed::<Event>(None)
            .expect("kubesim lists")
            .into_iter()
            .filter(|event| event.reason.as_deref() == Some(reason))
            .collect()
    }

    /// Requests with this method whose path is exactly `path`.
    pub fn requests(&self, method: &str, path: &str) -> usize {
        self.kube
            .requests()
            .iter()
            .filter(|r| r.method == method && r.path == path)
            .count()
    }

    /// The `_count` of a histogram in the controller's registry.
    pub fn histogram_count(&self, name: &str) -> f64 {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("metrics encode");
        let prefix = format!("{name}_count ");
        text.lines()
            .find_map(|line| line.strip_prefix(&prefix)?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    }

    /// Completed passes of the lifecycle monitor over every Node.
    pub fn lifecycle_passes(&self) -> u64 {
        vcd::metric_sum(&self.registry, "vcd_ccm_node_lifecycle_passes_total", &[]) as u64
    }

    /// Returns once a lifecycle pass has completed after the call. A pass
    /// publishes its Events before it ends, so a test that saw an Event may
    /// be running inside that pass: its metrics are settled only after it.
    pub async fn next_pass(&self) {
        let start = self.lifecycle_passes();
        eventually("a lifecycle pass completes", || {
            (self.lifecycle_passes() > start).then_some(())
        })
        .await;
    }

    /// Failed syncs of the cloud node controller so far.
    pub fn sync_failures(&self) -> u64 {
        vcd::metric_sum(&self.registry, "vcd_ccm_node_sync_failures_total", &[]) as u64
    }

    /// VM inventory loads from vcdsim so far (one VM query each).
    pub fn inventory_loads(&self) -> u64 {
        self.vcd.count("GET /api/query")
    }

    pub fn vm_urn(&self, name: &str) -> String {
        self.vcd.with_world(|w| {
            w.vms
                .iter()
                .find(|vm| vm.name == name)
                .map(|vm| vm.id.clone())
                .unwrap_or_else(|| panic!("no VM {name}"))
        })
    }

    pub fn provider_id(&self, vm: &str) -> String {
        format!("vmware-cloud-director://{}", self.vm_urn(vm))
    }

    pub fn remove_vm(&self, name: &str) {
        let urn = self.vm_urn(name);
        self.vcd
            .with_world(|w| w.remove_vm(&urn))
            .expect("the VM is removed");
    }

    pub fn set_power(&self, name: &str, power: PowerState) {
        let urn = self.vm_urn(name);
        self.vcd
            .with_world(|w| w.set_vm_power(&urn, power))
            .expect("the VM's power changes");
    }

    /// Adds a VM to vApp `cluster1`; `nics` in the scenario's JSON form.
    pub fn add_vm(&self, name: &str, nics: Value) {
        self.vcd.with_world(|w| {
            let vapp = w
                .vapps
                .iter()
                .find(|vapp| vapp.name == "cluster1")
                .map(|vapp| vapp.id.clone())
                .expect("vApp cluster1");
            let spec =
                serde_json::from_value(json!({"name": name, "nics": nics})).expect("a VM spec");
            w.add_vm(&vapp, &spec).expect("the VM is added");
        });
    }

    pub fn set_primary_ip(&self, name: &str, ip: &str) {
        self.vcd.with_world(|w| {
            let vm = w
                .vms
                .iter_mut()
                .find(|vm| vm.name == name)
                .unwrap_or_else(|| panic!("no VM {name}"));
            let primary = vm.primary_nic;
            vm.nics[primary].ip = ip.to_string();
        });
    }
}

/// A Node as a kubelet registers it: `Hostname` address only, a Ready
/// condition, and the uninitialized taint when `uninitialized`.
pub fn kubelet_node(name: &str, uninitialized: bool, ready: bool) -> Value {
    let mut taints = vec![json!({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})];
    if uninitialized {
        taints.push(json!({"key": UNINITIALIZED, "value": "true", "effect": "NoSchedule"}));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {"taints": taints},
        "status": {
            "addresses": [{"type": "Hostname", "address": format!("{name}.kubelet.example")}],
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
        },
    })
}

/// An already initialised node: providerID set, no uninitialized taint.
pub fn initialized_node(name: &str, provider_id: &str, ready: bool) -> Value {
    let mut node = kubelet_node(name, false, ready);
    node["spec"]["providerID"] = json!(provider_id);
    node
}

pub fn taint_keys(node: &Node) -> Vec<String> {
    node.spec
        .as_ref()
        .and_then(|spec| spec.taints.as_ref())
        .map(|taints| taints.iter().map(|t| t.key.clone()).collect())
        .unwrap_or_default()
}

pub fn has_taint(node: &Node, key: &str) -> bool {
    taint_keys(node).iter().any(|k| k == key)
}

pub fn addresses(node: &Node) -> Vec<(String, String)> {
    node.status
        .as_ref()
        .and_then(|status| status.addresses.as_ref())
        .map(|list| {
            list.iter()
                .map(|NodeAddress { type_, address }| (type_.clone(), address.clone()))
                .collect()
        })
        .unwrap_or_default()
}

pub fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.labels().get(key).map(String::as_str)
}

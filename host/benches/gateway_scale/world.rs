//! One benchmark world: vcdsim and kubesim in this process, the files
//! `vcd-ccm run` reads, and what the tables read back from them (VCD calls
//! and tasks, Services' addresses, initialised Nodes, pool members).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Service};
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use kubesim::KubeSim;
use serde_json::json;
use tempfile::TempDir;
use vcd_ccm::controllers::node::UNINITIALIZED_TAINT_KEY;
use vcdsim::scenario::VmSpec;
use vcdsim::world::compute::VApp;
use vcdsim::{Scenario, Sim, ids};

/// `NO_RDE_`: the cluster has no CAPVCD entity to update, as in the tests.
const CLUSTER: &str = "NO_RDE_gateway-scale";
/// How long VCD must see no call before a phase counts as finished.
const QUIET: Duration = Duration::from_secs(3);
/// Longest any wait of the benchmark may take before the run is abandoned.
const PATIENCE: Duration = Duration::from_secs(1200);

/// The cluster's VMs per vApp. vcd-ccm reads a vApp with all its VMs in
/// one answer of at most 4 MB, which a vApp of 5,000 VMs exceeds; so the
/// cluster is zone-enabled and its VMs are spread over vApps named as
/// CAPVCD names them (`cluster1_<VDC uuid>_<n>`).
const VMS_PER_VAPP: usize = 100;

/// One gateway with IP blocks for 4,000 external addresses, room for 5,000
/// virtual services and a /16 for the Nodes.
const SCENARIO: &str = r#"
systemUsers:
  - {name: admin, password: admin-password, apiTokens: [system-api-token-0123456789abcdef]}
serviceEngineGroups:
  - {name: seg1, reservationType: SHARED}
orgs:
  - name: org1
    users:
      - {name: k8s-cpi, password: k8s-cpi-password, roles: [Organization Administrator]}
    vdcs:
      - name: vdc1
        networks: [{name: net1, gateway: edge1, cidr: 10.0.0.1/16, ranges: ["10.0.1.1-10.0.254.254"]}]
    edgeGateways:
      - name: edge1
        vdc: vdc1
        subnets: [{cidr: 198.18.0.1/16, primaryIp: 198.18.0.1, ranges: ["198.18.0.10-198.18.15.250"]}]
        serviceEngineGroups: [{name: seg1, maxVirtualServices: 5000}]
"#;

/// VCD calls since the last reset, task polls excluded.
pub struct Calls {
    pub reads: u64,
    pub writes: u64,
    by_endpoint: BTreeMap<String, u64>,
}

impl Calls {
    pub fn total(&self) -> u64 {
        self.reads + self.writes
    }

    /// Per endpoint, most called first, one per line, for stderr.
    pub fn breakdown(&self) -> String {
        let mut lines: Vec<(&String, &u64)> = self.by_endpoint.iter().collect();
        lines.sort_by(|a, b| b.1.cmp(a.1));
        lines
            .iter()
            .map(|(endpoint, count)| format!("    {count:>7}  {endpoint}\n"))
            .collect()
    }
}

pub struct World {
    pub vcd: Sim,
    kube: KubeSim,
    client: kube::Client,
    dir: TempDir,
}

impl World {
    /// The simulators and the files a `vcd-ccm run` reads.
    pub async fn start() -> World {
        let scenario = Scenario::from_yaml(SCENARIO).expect("the scenario parses");
        let vcd = Sim::start(scenario).await.expect("vcdsim starts");
        let kube = KubeSim::start().await.expect("kubesim starts");
        let client = kube.client().expect("a kube client");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let world = World {
            vcd,
            kube,
            client,
            dir,
        };
        world.write_files();
        world
    }

    /// The cloud config, the credential Secret's files and a kubeconfig,
    /// as the integration tests of `vcd-ccm run` write them.
    fn write_files(&self) {
        let tenant = self.vcd.tenant().expect("vcdsim has a tenant user");
        let write = |path: PathBuf, contents: &str| {
            std::fs::write(&path, contents).unwrap_or_else(|e| panic!("writing {path:?}: {e}"));
        };
        let credentials = self.path("basic-auth");
        std::fs::create_dir(&credentials).expect("the credentials directory is created");
        write(
            credentials.join("username"),
            &format!("{}/{}", tenant.org, tenant.user),
        );
        write(credentials.join("password"), &tenant.password);
        write(credentials.join("refreshToken"), "");
        write(
            self.path("zones.yaml"),
            "zones:\n  - name: zone-a\n    ovdcName: vdc1\n",
        );
        write(
            self.path("vcloud-ccm-config.yaml"),
            &format!(
                "vcd:
  host: {host}
  org: {org}
  vdc: vdc1
  isZoneEnabledCluster: true
loadbalancer:
  network: net1
  enableVirtualServiceSharedIP: true
clusterid: {CLUSTER}
vAppName: cluster1
nodes:
  zonesFile: {zones}
",
                host = self.vcd.base_url(),
                org = tenant.org,
                zones = self.path("zones.yaml").display(),
            ),
        );
        self.kube
            .write_kubeconfig(&self.path("kubeconfig"))
            .expect("the kubeconfig is written");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The file flags of `vcd-ccm run`; the policy directory does not
    /// exist, so the built-in default policy decides.
    pub fn file_args(&self) -> Vec<OsString> {
        [
            ("cloud-config", "vcloud-ccm-config.yaml"),
            ("credentials-dir", "basic-auth"),
            ("policy-dir", "policies"),
            ("kubeconfig", "kubeconfig"),
        ]
        .into_iter()
        .map(|(flag, name)| {
            let mut arg = OsString::from(format!("--{flag}="));
            arg.push(self.path(name));
            arg
        })
        .collect()
    }

    /// VCD's latency per call and duration per task, in milliseconds.
    pub fn set_vcd_speed(&self, latency_ms: u64, task_ms: u64) {
        self.vcd.set_knobs(|knobs| {
            knobs.latency_ms = latency_ms;
            knobs.task_duration_ms = task_ms;
        });
    }

    pub fn calls(&self) -> Calls {
        let mut calls = Calls {
            reads: 0,
            writes: 0,
            by_endpoint: BTreeMap::new(),
        };
        for (endpoint, count) in self.vcd.counters() {
            if endpoint.contains("/api/task/") {
                continue;
            }
            if endpoint.starts_with("GET ") {
                calls.reads += count;
            } else {
                calls.writes += count;
            }
            calls.by_endpoint.insert(endpoint, count);
        }
        calls
    }

    /// Tasks VCD has started so far.
    pub fn tasks(&self) -> usize {
        self.vcd.with_world(|w| w.tasks.len())
    }

    /// Waits until VCD has seen no call (task polls included) for 3 s.
    pub async fn wait_quiet(&self) {
        let total = || self.vcd.counters().values().sum::<u64>();
        let mut last = total();
        let mut since = Instant::now();
        wait("VCD to fall quiet", || {
            let now = total();
            if now != last {
                (last, since) = (now, Instant::now());
            }
            std::future::ready(since.elapsed() >= QUIET)
        })
        .await;
    }

    /// A VM of the cluster and a Node as a kubelet registers it
    /// (uninitialised, Ready, only a Hostname address) for each index.
    pub fn add_nodes(&self, indices: Range<usize>) {
        self.vcd.with_world(|w| {
            let vdc = w
                .vdcs
                .iter()
                .find(|vdc| vdc.name == "vdc1")
                .map(|vdc| vdc.id.clone())
                .expect("VDC vdc1");
            for i in indices.clone() {
                let name = format!("cluster1_{}_{}", ids::uuid_of(&vdc), i / VMS_PER_VAPP);
                let vapp = match w.vapps.iter().find(|vapp| vapp.name == name) {
                    Some(vapp) => vapp.id.clone(),
                    None => {
                        let id = ids::new_urn("vapp");
                        w.vapps.push(VApp {
                            id: id.clone(),
                            vdc_id: vdc.clone(),
                            name,
                        });
                        id
                    }
                };
                let spec: VmSpec = serde_json::from_value(json!({
                    "name": node_name(i),
                    "nics": [{"network": "net1", "ip": node_ip(i)}],
                }))
                .expect("a VM spec");
                w.add_vm(&vapp, &spec).expect("the VM is added");
            }
        });
        for i in indices {
            let name = node_name(i);
            self.kube
                .seed(json!({
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name},
                    "spec": {"taints": [{"key": UNINITIALIZED_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]},
                    "status": {
                        "addresses": [{"type": "Hostname", "address": name}],
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                }))
                .expect("the Node is created");
        }
    }

    /// Waits until `count` Nodes have a providerID and no uninitialized taint.
    pub async fn wait_nodes_initialised(&self, count: usize) {
        wait("the Nodes to be initialised", || {
            let nodes: Vec<Node> = self.kube.list_typed(None).expect("kubesim lists");
            let initialised = nodes.iter().filter(|node| {
                node.spec.as_ref().is_some_and(|spec| {
                    spec.provider_id.is_some()
                        && !spec
                            .taints
                            .iter()
                            .flatten()
                            .any(|t| t.key == UNINITIALIZED_TAINT_KEY)
                })
            });
            std::future::ready(initialised.count() >= count)
        })
        .await;
    }

    fn services(&self) -> Api<Service> {
        Api::namespaced(self.client.clone(), "default")
    }

    /// LoadBalancer Services with TCP `ports`, `at_once` creates in flight.
    pub async fn create_services(&self, names: &[String], ports: &[u16], at_once: usize) {
        futures::stream::iter(names)
            .for_each_concurrent(at_once, |name| async move {
                let service: Service = serde_json::from_value(json!({
                    "metadata": {"name": name},
                    "spec": {
                        "type": "LoadBalancer",
                        "selector": {"app": name},
                        "ports": ports.iter().map(|port| json!({
                            "name": format!("p{port}"), "port": port, "protocol": "TCP"
                        })).collect::<Vec<_>>(),
                    },
                }))
                .expect("a Service");
                self.services()
                    .create(&PostParams::default(), &service)
                    .await
                    .expect("the Service is created");
            })
            .await;
    }

    /// Waits until `count` Services have `status.loadBalancer.ingress`,
    /// looking every `poll`; returns the time since `started`.
    pub async fn wait_addressed(&self, count: usize, started: Instant, poll: Duration) -> Duration {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let services = self
                .services()
                .list(&ListParams::default())
                .await
                .expect("Services are listed");
            let addressed = services.items.iter().filter(|s| has_ingress(s)).count();
            if addressed >= count {
                return started.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "only {addressed} of {count} Services have an address after {PATIENCE:?}"
            );
            tokio::time::sleep(poll).await;
        }
    }

    /// Deletes the Service and waits until its finalizer let it go.
    pub async fn delete_service(&self, name: &str) {
        self.services()
            .delete(name, &DeleteParams::default())
            .await
            .expect("the Service is deleted");
        wait(&format!("Service {name} to be gone"), || {
            let found = self
                .kube
                .get_typed::<Service>(Some("default"), name)
                .expect("kubesim reads");
            std::future::ready(found.is_none())
        })
        .await;
    }

    /// Waits until `count` pools have the Node `index` among their members.
    pub async fn wait_pools_with_node(&self, index: usize, count: usize) {
        let ip = node_ip(index);
        wait("every pool to gain the new Node", || {
            let pools = self.vcd.with_world(|w| {
                w.pools
                    .iter()
                    .filter(|p| w.pool_member_ips(p).contains(&ip))
                    .count()
            });
            std::future::ready(pools >= count)
        })
        .await;
    }
}

fn has_ingress(service: &Service) -> bool {
    service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .is_some_and(|ingress| ingress.iter().any(|i| i.ip.is_some()))
}

fn node_name(index: usize) -> String {
    format!("node-{index}")
}

/// 250 Nodes per /24 of net1, from 10.0.1.1.
fn node_ip(index: usize) -> String {
    format!("10.0.{}.{}", 1 + index / 250, 1 + index % 250)
}

/// Polls `done` every 100 ms until it holds; after [`PATIENCE`] the run is
/// abandoned, naming what it waited for.
pub async fn wait<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + PATIENCE;
    while !done().await {
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {what} after {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `prefix-0`, `prefix-1`, … : `count` Service names.
pub fn names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}-{i}")).collect()
}

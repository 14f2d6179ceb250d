//! The world `vcd-ccm run` runs against in these tests: vcdsim and kubesim
//! in the test process, and the files the binary reads (cloud config,
//! credential Secret, kubeconfig) in a temporary directory.

pub mod gateway;
pub mod process;
pub mod proxy;

use std::ffi::OsString;
use std::path::PathBuf;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Node, Service};
use kube::Api;
use kube::api::PostParams;
use kubesim::KubeSim;
use serde_json::json;
use tempfile::TempDir;
use vcdsim::{Scenario, Sim};

use crate::support::objects::{ServiceEdits, typed_lb_service};
use process::{CcmProcess, Logging, free_port};

pub use crate::support::CLUSTER;
pub const LEASE_NAMESPACE: &str = "kube-system";
pub const LEASE_NAME: &str = "cloud-controller-manager";
/// The default scenario's worker VMs, as Nodes.
pub const NODES: [(&str, &str); 2] = [("worker-0", "10.0.0.11"), ("worker-1", "10.0.0.12")];

/// The files `vcd-ccm run` reads; a test may point one elsewhere.
#[derive(Clone)]
pub struct RunFiles {
    pub cloud_config: PathBuf,
    pub credentials_dir: PathBuf,
    /// Absent: the built-in default policy decides.
    pub policy_dir: PathBuf,
    pub kubeconfig: PathBuf,
}

impl RunFiles {
    pub fn args(&self) -> Vec<OsString> {
        let flag = |name: &str, path: &PathBuf| {
            let mut arg = OsString::from(format!("--{name}="));
            arg.push(path);
            arg
        };
        vec![
            flag("cloud-config", &self.cloud_config),
            flag("credentials-dir", &self.credentials_dir),
            flag("policy-dir", &self.policy_dir),
            flag("kubeconfig", &self.kubeconfig),
        ]
    }
}

/// A LoadBalancer Service the tests created: name, uid and ports.
#[derive(Clone, Debug)]
pub struct LiveService {
    pub name: String,
    pub uid: String,
    pub ports: Vec<u16>,
}

pub struct World {
    pub vcd: Sim,
    /// Serves as long as the world lives; tests use `client`, or restore
    /// objects into it.
    kube: KubeSim,
    pub client: kube::Client,
    pub files: RunFiles,
    pub dir: TempDir,
}

impl World {
    /// vcdsim's default scenario, an empty kubesim, and good files.
    pub async fn start() -> World {
        World::start_on(Scenario::default_scenario()).await
    }

    /// vcdsim running `scenario`, an empty kubesim, and good files.
    pub async fn start_on(scenario: Scenario) -> World {
        let vcd = Sim::start(scenario).await.expect("vcdsim starts");
        let kube = KubeSim::start().await.expect("kubesim starts");
        let client = kube.client().expect("a kube client");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let files = write_files(&dir, &vcd, &kube);
        World {
            vcd,
            kube,
            client,
            files,
            dir,
        }
    }

    /// `vcd-ccm run` with the good files plus `extra` flags, logging at
    /// info level and serving plain HTTP on a free port.
    pub fn spawn(&self, name: &str, extra: &[&str]) -> CcmProcess {
        self.spawn_with_env(name, extra, &[])
    }

    /// The same, with `env` added to the process's environment.
    pub fn spawn_with_env(&self, name: &str, extra: &[&str], env: &[(&str, &str)]) -> CcmProcess {
        let mut args = self.files.args();
        args.extend(extra.iter().map(OsString::from));
        CcmProcess::spawn_with_env(
            name,
            self.dir.path(),
            args,
            Some(free_port()),
            Logging::Info,
            env,
        )
    }

    /// `vcd-ccm run` with the good files plus `extra` flags, logging at
    /// info level and serving HTTPS only (`extra` may name the port).
    pub fn spawn_secure(&self, name: &str, extra: &[&str]) -> CcmProcess {
        let mut args = self.files.args();
        args.extend(extra.iter().map(OsString::from));
        CcmProcess::spawn(name, self.dir.path(), args, None, Logging::Info)
    }

    /// `vcd-ccm run` reaching VCD through `proxy` instead of directly.
    pub fn spawn_behind(&self, name: &str, proxy: &proxy::CutProxy, extra: &[&str]) -> CcmProcess {
        let direct = std::fs::read_to_string(&self.files.cloud_config).expect("the cloud config");
        let cloud_config = self.dir.path().join(format!("{name}-cloud-config.yaml"));
        std::fs::write(
            &cloud_config,
            direct.replace(self.vcd.base_url(), &proxy.url),
        )
        .expect("the proxied cloud config is written");
        let files = RunFiles {
            cloud_config,
            ..self.files.clone()
        };
        let mut args = files.args();
        args.extend(extra.iter().map(OsString::from));
        CcmProcess::spawn(
            name,
            self.dir.path(),
            args,
            Some(free_port()),
            Logging::Info,
        )
    }

    /// The scenario's workers as initialised Nodes.
    pub async fn add_nodes(&self) {
        self.create_nodes(json!({})).await;
    }

    /// The workers as kubelets with `--cloud-provider=external` register
    /// them: tainted uninitialised, for the cloud node controller.
    pub async fn add_new_nodes(&self) {
        let taint = json!({"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"});
        self.create_nodes(json!({"taints": [taint]})).await;
    }

    async fn create_nodes(&self, spec: serde_json::Value) {
        let nodes: Api<Node> = Api::all(self.client.clone());
        for (name, ip) in NODES {
            let node = serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": spec,
                "status": {
                    "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
                    "conditions": [{"type": "Ready", "status": "True"}]
                }
            }))
            .expect("a Node");
            nodes
                .create(&PostParams::default(), &node)
                .await
                .expect("the Node is created");
        }
    }

    fn services(&self) -> Api<Service> {
        Api::namespaced(self.client.clone(), "default")
    }

    /// A LoadBalancer Service in `default` with TCP `ports`.
    pub async fn create_service(&self, name: &str, ports: &[u16]) -> LiveService {
        self.create_annotated_service(name, ports, json!({})).await
    }

    /// The same, with `annotations`.
    pub async fn create_annotated_service(
        &self,
        name: &str,
        ports: &[u16],
        annotations: serde_json::Value,
    ) -> LiveService {
        let listed: Vec<i32> = ports.iter().map(|port| i32::from(*port)).collect();
        let mut service = typed_lb_service(name, &listed);
        service.metadata.annotations = serde_json::from_value(annotations).expect("annotations");
        let created = self
            .services()
            .create(&PostParams::default(), &service)
            .await
            .expect("the Service is created");
        LiveService {
            name: name.to_string(),
            uid: created.metadata.uid.expect("a uid"),
            ports: ports.to_vec(),
        }
    }

    /// Whether the Service still exists (its finalizer keeps it while
    /// the load balancer is torn down).
    pub async fn service_exists(&self, name: &str) -> bool {
        self.services()
            .get_opt(name)
            .await
            .expect("a read")
            .is_some()
    }

    /// `status.loadBalancer.ingress[0].ip`.
    pub async fn external_ip(&self, name: &str) -> Result<String, String> {
        let service = self
            .services()
            .get_opt(name)
            .await
            .map_err(|e| e.to_string())?;
        service
            .and_then(|s| s.status?.load_balancer?.ingress?.first()?.ip.clone())
            .ok_or_else(|| format!("Service {name} has no external IP yet"))
    }

    /// The message of the newest Event `reason` on Service `name` in `default`.
    pub async fn latest_event(&self, name: &str, reason: &str) -> Result<String, String> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), "default");
        let list = events
            .list(&Default::default())
            .await
            .map_err(|e| e.to_string())?;
        list.items
            .into_iter()
            .rev()
            .find(|e| {
                e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some(reason)
            })
            .and_then(|e| e.message)
            .ok_or_else(|| format!("no {reason} Event on {name} yet"))
    }

    /// Puts a Kubernetes object back as another cluster's backup holds it
    /// (uid, finalizers and status kept).
    pub fn restore_kube(&self, object: serde_json::Value) {
        self.kube.restore(object).expect("the object is restored");
    }

    /// Adds a cloud config line under `loadbalancer:`, such as a mode.
    pub fn add_load_balancer_setting(&self, line: &str) {
        let path = &self.files.cloud_config;
        let text = std::fs::read_to_string(path).expect("the cloud config");
        let text = text.replacen("loadbalancer:\n", &format!("loadbalancer:\n  {line}\n"), 1);
        std::fs::write(path, text).expect("the cloud config is written");
    }

    /// One-arm mode as upstream runs it: a VIP per port on 192.168.8.2–100
    /// (`oneArm`), the shared IP off.
    pub fn use_one_arm(&self) {
        self.add_load_balancer_setting("oneArm: {startIP: 192.168.8.2, endIP: 192.168.8.100}");
        let path = &self.files.cloud_config;
        let text = std::fs::read_to_string(path).expect("the cloud config");
        let text = text.replace(
            "enableVirtualServiceSharedIP: true",
            "enableVirtualServiceSharedIP: false",
        );
        std::fs::write(path, text).expect("the cloud config is written");
    }

    fn leases(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), LEASE_NAMESPACE)
    }

    /// The Lease's holderIdentity.
    pub async fn lease_holder(&self) -> Result<String, String> {
        let lease = self
            .leases()
            .get_opt(LEASE_NAME)
            .await
            .map_err(|e| e.to_string())?;
        lease
            .and_then(|l| l.spec?.holder_identity)
            .filter(|holder| !holder.is_empty())
            .ok_or_else(|| "the Lease has no holder yet".to_string())
    }

    /// Writes another holder into the Lease, as a rival replica would.
    pub async fn take_lease(&self, holder: &str) {
        let mut lease = self.leases().get(LEASE_NAME).await.expect("the Lease");
        let spec = lease.spec.as_mut().expect("the Lease has a spec");
        spec.holder_identity = Some(holder.to_string());
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or_default() + 1);
        self.leases()
            .replace(LEASE_NAME, &PostParams::default(), &lease)
            .await
            .expect("the Lease is replaced");
    }
}

fn write_files(dir: &TempDir, vcd: &Sim, kube: &KubeSim) -> RunFiles {
    let tenant = vcd.tenant().expect("vcdsim has a tenant user");
    let write = |path: &PathBuf, contents: &str| {
        std::fs::write(path, contents).unwrap_or_else(|e| panic!("writing {path:?}: {e}"));
    };
    let credentials_dir = dir.path().join("basic-auth");
    std::fs::create_dir(&credentials_dir).expect("the credentials directory is created");
    write(
        &credentials_dir.join("username"),
        &format!("{}/{}", tenant.org, tenant.user),
    );
    write(&credentials_dir.join("password"), &tenant.password);
    write(&credentials_dir.join("refreshToken"), "");
    let cloud_config = dir.path().join("vcloud-ccm-config.yaml");
    write(
        &cloud_config,
        &format!(
            "vcd:
  host: {host}
  org: {org}
  vdc: vdc1
loadbalancer:
  network: net1
  enableVirtualServiceSharedIP: true
  certAlias: my-cert
clusterid: {CLUSTER}
vAppName: cluster1
",
            host = vcd.base_url(),
            org = tenant.org,
        ),
    );
    let kubeconfig = dir.path().join("kubeconfig");
    kube.write_kubeconfig(&kubeconfig)
        .expect("the kubeconfig is written");
    RunFiles {
        cloud_config,
        credentials_dir,
        policy_dir: dir.path().join("policies"),
        kubeconfig,
    }
}

impl ServiceEdits for World {
    fn client(&self) -> &kube::Client {
        &self.client
    }
}

//! The least-privilege test's cluster: vcdsim's default scenario (vApp
//! `cluster1` with control-plane-0, worker-0 and worker-1), kubesim, the
//! files `vcd-ccm run` reads, and the real manager with every controller and
//! leader election, talking to kubesim through a [`RecordingProxy`]. It logs
//! in to VCD as a service account, so it reads and updates the credential
//! Secret as a service account's one-time refresh token makes it.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Node, Service};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubesim::KubeSim;
use serde_json::{Value, json};
use tempfile::TempDir;
use vcd_ccm::access::DEFAULT_ALWAYS_ALLOW_PATHS;
use vcd_ccm::config::CloudConfig;
use vcd_ccm::controllers::EnabledControllers;
use vcd_ccm::controllers::leader::{LeaderConfig, default_identity};
use vcd_ccm::controllers::lifecycle::DeletionFraction;
use vcd_ccm::controllers::node::NodeControllerConfig;
use vcd_ccm::manager::{CredentialSecret, DEFAULT_KUBE_API_RATE, Manager, Settings};
use vcd_ccm::serve::{Certificate, ServeConfig, Transport};
use vcdsim::scenario::ServiceAccountSpec;
use vcdsim::world::compute::PowerState;
use vcdsim::{Scenario, Sim};

use super::documents;
use super::proxy::RecordingProxy;
use crate::support::cluster::fast_config;
use crate::support::objects::{ServiceEdits, typed_lb_service};

pub use crate::support::poll::eventually;

/// The whole manager (`Manager::start`, as `vcd-ccm run` does) on vcdsim
/// and kubesim, its Kubernetes requests recorded by a proxy.
pub struct ManagedCluster {
    vcd: Sim,
    pub kube: KubeSim,
    /// The test's own client, straight to kubesim (not recorded).
    client: kube::Client,
    /// The manager's requests.
    pub proxy: RecordingProxy,
    pub identity: String,
    manager: Option<Manager>,
    _files: TempDir,
}

impl Drop for ManagedCluster {
    fn drop(&mut self) {
        if let Some(manager) = self.manager.take() {
            manager.abort();
        }
    }
}

impl ManagedCluster {
    /// Seeds `objects` (without HTTP), then starts the manager.
    pub async fn start(objects: Vec<Value>) -> ManagedCluster {
        let mut scenario = Scenario::default_scenario();
        scenario.service_accounts.push(ServiceAccountSpec {
            name: "k8s-ccm".to_string(),
            org: scenario.orgs[0].name.clone(),
            roles: vec!["Organization Administrator".to_string()],
            refresh_token: SERVICE_ACCOUNT_TOKEN.to_string(),
            access_token_ttl_ms: None,
        });
        let vcd = Sim::start(scenario).await.expect("vcdsim starts");
        let kube = KubeSim::start().await.expect("kubesim starts");
        for object in objects {
            kube.seed(object).expect("an object is seeded");
        }
        kube.seed(credential_secret())
            .expect("the credential Secret");
        let proxy = RecordingProxy::start(&kube.url()).await;
        let files = tempfile::tempdir().expect("a temporary directory");
        let identity = default_identity();
        let settings = Settings {
            cloud: CloudConfig::from_file(&write_cloud_config(files.path(), &vcd))
                .expect("the cloud config is valid"),
            secret_dir: write_credentials(files.path(), &vcd),
            credentials_secret: Some(CredentialSecret {
                namespace: "kube-system".to_string(),
                name: "vcloud-basic-auth".to_string(),
            }),
            policy_dir: Some(write_policy_dir(files.path())),
            kube: kube::Config::new(proxy.url().parse().expect("the proxy's URL")),
            kube_api_rate: Some(DEFAULT_KUBE_API_RATE),
            controllers: EnabledControllers::parse(&["*".to_string()]).expect("all controllers"),
            service: fast_config(),
            node: NodeControllerConfig {
                concurrent_node_syncs: 2,
                node_status_update_frequency: Duration::from_millis(500),
                ..NodeControllerConfig::default()
            },
            node_monitor_period: Duration::from_millis(200),
            max_node_deletion_fraction: DeletionFraction::default(),
            vcd_unreachable_timeout: std::time::Duration::from_secs(60),
            shutdown_grace_period: std::time::Duration::from_secs(5),
            leader: Some(LeaderConfig {
                identity: identity.clone(),
                lease_duration: Duration::from_secs(2),
                renew_deadline: Duration::from_millis(1500),
                retry_period: Duration::from_millis(200),
                ..LeaderConfig::default()
            }),
            serve: Some(ServeConfig {
                listen: ([127, 0, 0, 1], 0).into(),
                transport: Transport::Https(Certificate::SelfSigned),
            }),
            delegated_access: Some(DEFAULT_ALWAYS_ALLOW_PATHS.map(String::from).to_vec()),
            identity: identity.clone(),
        };
        let manager = Manager::start(settings).await.expect("the manager starts");
        ManagedCluster {
            client: kube.client().expect("a kube client"),
            vcd,
            kube,
            proxy,
            identity,
            manager: Some(manager),
            _files: files,
        }
    }

    /// `https://<address>` of the manager's serving port.
    pub fn serving_url(&self) -> String {
        let url = self.manager.as_ref().and_then(Manager::serving_url);
        url.expect("the manager serves")
    }

    /// GETs `/metrics` on the manager's HTTPS port with `token`; the status.
    pub async fn scrape(&self, token: &str) -> u16 {
        let url = self.manager.as_ref().and_then(Manager::serving_url);
        reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .build()
            .expect("an HTTPS client")
            .get(format!("{}/metrics", url.expect("the manager serves")))
            .bearer_auth(token)
            .send()
            .await
            .expect("an answer")
            .status()
            .as_u16()
    }

    fn services(&self, namespace: &str) -> Api<Service> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// A LoadBalancer Service with one TCP port per entry of `ports`.
    pub async fn create_service(&self, namespace: &str, name: &str, ports: &[i32]) {
        let service = typed_lb_service(name, ports);
        self.services(namespace)
            .create(&PostParams::default(), &service)
            .await
            .expect("the Service is created");
    }

    pub fn service(&self, namespace: &str, name: &str) -> Option<Service> {
        self.kube
            .get_typed(Some(namespace), name)
            .expect("kubesim reads")
    }

    pub fn external_ip(&self, namespace: &str, name: &str) -> Option<String> {
        let status = self.service(namespace, name)?.status?;
        status.load_balancer?.ingress?.first()?.ip.clone()
    }

    /// The refresh token the credential Secret holds now.
    pub fn stored_refresh_token(&self) -> Option<String> {
        let secret: k8s_openapi::api::core::v1::Secret = self
            .kube
            .get_typed(Some("kube-system"), "vcloud-basic-auth")
            .expect("kubesim reads")?;
        let bytes = secret.data?.remove("refreshToken")?;
        String::from_utf8(bytes.0).ok()
    }

    pub fn node(&self, name: &str) -> Option<Node> {
        self.kube.get_typed(None, name).expect("kubesim reads")
    }

    /// The Ready condition, as the kubelet would report it.
    pub async fn set_ready(&self, name: &str, ready: bool) {
        let status = if ready { "True" } else { "False" };
        let patch = json!({"status": {"conditions": [{"type": "Ready", "status": status}]}});
        Api::<Node>::all(self.client.clone())
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .expect("the node's status is patched");
    }

    /// How many times an Event `reason` was recorded about `object`
    /// (repeats fold into one Event whose count grows).
    pub fn event_count(&self, namespace: &str, object: &str, reason: &str) -> i32 {
        let events: Vec<Event> = self
            .kube
            .list_typed(Some(namespace))
            .expect("kubesim lists");
        events
            .iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(object))
            .filter(|e| e.reason.as_deref() == Some(reason))
            .map(|e| e.count.unwrap_or(1))
            .sum()
    }

    /// The holder of the leader-election Lease.
    pub fn lease_holder(&self) -> Option<String> {
        let lease: Lease = self
            .kube
            .get_typed(Some("kube-system"), "cloud-controller-manager")
            .expect("kubesim reads")?;
        lease.spec?.holder_identity
    }

    /// Deletes the leader-election Lease, as an operator may.
    pub async fn delete_lease(&self) {
        Api::<Lease>::namespaced(self.client.clone(), "kube-system")
            .delete("cloud-controller-manager", &Default::default())
            .await
            .expect("the Lease is deleted");
    }

    pub fn vm(&self, name: &str) -> (String, String) {
        self.vcd.with_world(|w| {
            let vm = w
                .vms
                .iter()
                .find(|vm| vm.name == name)
                .expect("the VM exists");
            (vm.id.clone(), vm.nics[vm.primary_nic].ip.clone())
        })
    }

    pub fn remove_vm(&self, name: &str) {
        let (urn, _) = self.vm(name);
        self.vcd
            .with_world(|w| w.remove_vm(&urn))
            .expect("the VM is removed");
    }

    pub fn set_power(&self, name: &str, power: PowerState) {
        let (urn, _) = self.vm(name);
        self.vcd
            .with_world(|w| w.set_vm_power(&urn, power))
            .expect("the VM's power changes");
    }
}

/// The manager logs in as a service account: its one-time refresh token is
/// read from the credential Secret and each new one written back.
const SERVICE_ACCOUNT_TOKEN: &str = "manifests-service-account-token";

/// `kube-system/vcloud-basic-auth` holding the service account's token.
fn credential_secret() -> Value {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(SERVICE_ACCOUNT_TOKEN);
    json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "vcloud-basic-auth", "namespace": "kube-system"},
        "data": {"refreshToken": encoded}})
}

/// The cloud config `vcd-ccm demo` writes, for one vApp and shared VIPs.
fn write_cloud_config(dir: &std::path::Path, vcd: &Sim) -> std::path::PathBuf {
    let tenant = vcd.tenant().expect("a tenant");
    let path = dir.join("vcloud-ccm-config.yaml");
    let text = format!(
        "vcd:\n  host: {host}\n  org: {org}\n  vdc: vdc1\nloadbalancer:\n  network: net1\n  enableVirtualServiceSharedIP: true\nclusterid: NO_RDE_manifests\nvAppName: cluster1\n",
        host = vcd.base_url(),
        org = tenant.org,
    );
    std::fs::write(&path, text).expect("the cloud config is written");
    path
}

fn write_credentials(dir: &std::path::Path, vcd: &Sim) -> std::path::PathBuf {
    let tenant = vcd.tenant().expect("a tenant");
    let secret_dir = dir.join("basic-auth");
    std::fs::create_dir(&secret_dir).expect("the credentials directory");
    let files = [
        ("username", format!("{}/{}", tenant.org, tenant.user)),
        ("password", tenant.password.clone()),
        ("refreshToken", SERVICE_ACCOUNT_TOKEN.to_string()),
    ];
    for (file, contents) in files {
        std::fs::write(secret_dir.join(file), contents).expect("a credential file");
    }
    secret_dir
}

/// The policy directory as the kubelet mounts the policies component's ConfigMap: the
/// example as shipped (placeholder digest, no component) must not stop
/// the manager.
fn write_policy_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let policies: ConfigMap = documents::find(&documents::all(), "ConfigMap", "vcd-ccm-policies");
    let policy_dir = dir.join("policies");
    std::fs::create_dir(&policy_dir).expect("the policy directory");
    for (file, contents) in policies.data.unwrap_or_default() {
        std::fs::write(policy_dir.join(file), contents).expect("a policy file");
    }
    policy_dir
}

impl ServiceEdits for ManagedCluster {
    fn client(&self) -> &kube::Client {
        &self.client
    }
}

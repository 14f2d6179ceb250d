//! The cloud side of the process: the policies (loaded and watched before
//! anything else, so a broken policy directory stops the start), then the
//! VCD client, the load balancer and the node inventory, retried until VCD
//! answers, as upstream retries its provider setup.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;

use super::lb_side::LbSetup;
use super::{Settings, SharedRegistry, StartError, write};
use crate::instances::{Instances, InstancesError};
use crate::lb::{ClusterIdentity, LbConfig};
use crate::policy::directory::{self, DirectoryWatcher};
use crate::policy::metrics::register_policy_set;
use crate::policy::oci::{ImageSource, SecretReader};
use crate::policy::registry::PolicySet;
use crate::policy::{Limits, PolicyEngine, Registry as Policies, loader};
use crate::preflight::Preflight;
use crate::serve::CaptureSource;
use crate::vcd::{ClientConfig, ClientMetrics, Credentials, Rotation, VcdClient, VcdError};

/// How long to wait between attempts to reach VCD at start.
const SETUP_RETRY: Duration = Duration::from_secs(10);

/// Why one attempt to set up the node side failed; the next attempt follows.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    #[error(transparent)]
    Connect(#[from] VcdError),
    #[error(transparent)]
    Instances(#[from] InstancesError),
}

pub struct CloudSide {
    client_config: ClientConfig,
    lb_config: LbConfig,
    instances_config: crate::instances::InstancesConfig,
    policies: Arc<Policies>,
    watcher: Option<DirectoryWatcher>,
    client_metrics: ClientMetrics,
    preflight: Preflight,
}

pub struct Components {
    pub instances: Arc<Instances>,
    /// Keeps reloading the policy directory while the process runs.
    pub policy_watcher: Option<DirectoryWatcher>,
    /// What the load-balancer side is built from, apart from the nodes'.
    pub lb_setup: LbSetup,
}

impl CloudSide {
    pub async fn prepare(
        settings: &Settings,
        metrics: &SharedRegistry,
        rotation: Option<Arc<Rotation>>,
        pull_secrets: SecretReader,
    ) -> Result<CloudSide, StartError> {
        let mut client_config = settings.cloud.client_config(&settings.secret_dir)?;
        client_config.rotation = rotation;
        let lb_config = settings.cloud.lb_config();
        let instances_config = settings.cloud.instances_config()?;
        let engine = PolicyEngine::new()?;
        engine.register_metrics(&mut write(metrics));
        let default = loader::load_default(
            &engine,
            lb_config.default_policy_config(),
            Limits::default(),
        )
        .await
        .map_err(StartError::DefaultPolicy)?;
        let default = Arc::new(default);
        let (policies, watcher) = match settings.policy_dir.as_deref().filter(|d| d.is_dir()) {
            None => {
                if let Some(dir) = &settings.policy_dir {
                    tracing::info!(dir = %dir.display(), "no policy directory; the built-in default policy decides every Service");
                }
                (
                    Arc::new(Policies::new(PolicySet::only_default(default))),
                    None,
                )
            }
            Some(dir) => load_policies(&engine, dir, default, pull_secrets).await?,
        };
        let mut metrics = write(metrics);
        register_policy_set(&mut metrics, policies.clone());
        Ok(CloudSide {
            client_config,
            lb_config,
            instances_config,
            policies,
            watcher,
            client_metrics: ClientMetrics::register(&mut metrics),
            preflight: Preflight::new(settings.cloud.clone()),
        })
    }

    /// The decisions captured for Services that ask for it, for the serving port.
    pub fn captures(&self) -> Arc<dyn CaptureSource> {
        Arc::new(Captures(self.policies.clone()))
    }

    /// Whether the credentials at start are a refresh token that goes
    /// through a rotation: then only the leader may log in.
    pub fn leader_only_login(&self) -> bool {
        self.client_config.rotation.is_some()
            && matches!(
                self.client_config.credentials.load(),
                Ok(Credentials::ApiToken { .. })
            )
    }

    /// Asks VCD for its versions every 10 s, without logging in, until it
    /// answers; then sets `reached`. What a standby that must not log in does.
    pub async fn wait_for_answer(&self, reached: Arc<std::sync::atomic::AtomicBool>) {
        loop {
            match VcdClient::answers(&self.client_config, self.client_metrics.clone()).await {
                Ok(()) => {
                    reached.store(true, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
                Err(reason) => {
                    tracing::error!(%reason, retry_in = ?SETUP_RETRY, "VMware Cloud Director does not answer");
                    tokio::time::sleep(SETUP_RETRY).await;
                }
            }
        }
    }

    /// Whether VCD answers, as every request of the client notes it.
    pub fn reachability(&self) -> crate::vcd::Reachability {
        self.client_config.reachability.clone()
    }

    /// Connects to VCD and builds the node inventory, retrying every 10 s
    /// with the reason logged until it works; then logs the preflight
    /// checks, without waiting for them. The load-balancer side is set up
    /// apart ([`LbSetup::run`]), so nodes never wait for it.
    pub async fn connect(self) -> Components {
        loop {
            match self.try_connect().await {
                Ok((client, instances)) => {
                    tokio::spawn(self.preflight.log_against(client.clone()));
                    return Components {
                        instances,
                        policy_watcher: self.watcher,
                        lb_setup: LbSetup {
                            client,
                            policies: self.policies,
                            config: self.lb_config,
                        },
                    };
                }
                Err(reason) => {
                    tracing::error!(%reason, retry_in = ?SETUP_RETRY, "cannot set up the VMware Cloud Director side");
                    tokio::time::sleep(SETUP_RETRY).await;
                }
            }
        }
    }

    /// The load balancer on a client that refuses every write unsent.
    pub async fn read_only_load_balancers(
        self,
        identity: ClusterIdentity,
        journal: Arc<dyn crate::lb::AllocationJournal>,
        tls_secrets: Arc<dyn crate::lb::TlsSecrets>,
    ) -> Result<crate::lb::LoadBalancers, super::PlanSideError> {
        let config = ClientConfig {
            read_only: true,
            ..self.client_config
        };
        let client = VcdClient::connect(config, self.client_metrics).await?;
        let lb = crate::lb::LoadBalancers::new(
            client,
            self.policies,
            self.lb_config,
            identity,
            journal,
            tls_secrets,
        )
        .await?;
        Ok(lb)
    }

    async fn try_connect(&self) -> Result<(VcdClient, Arc<Instances>), SetupError> {
        let client =
            VcdClient::connect(self.client_config.clone(), self.client_metrics.clone()).await?;
        let instances = Instances::new(client.clone(), self.instances_config.clone())?;
        Ok((client, Arc::new(instances)))
    }
}

struct Captures(Arc<Policies>);

impl CaptureSource for Captures {
    fn list(&self) -> String {
        self.0.captures().list()
    }

    fn suite(&self, namespace: &str, name: &str) -> Option<String> {
        self.0.captures().suite(namespace, name)
    }
}

/// This Kubernetes cluster's identity: the uid of its `kube-system`
/// Namespace, which the load balancer writes into every ownership tag.
pub(super) async fn cluster_identity(client: &kube::Client) -> Result<ClusterIdentity, StartError> {
    let namespace = Api::<Namespace>::all(client.clone())
        .get("kube-system")
        .await
        .map_err(StartError::ClusterIdentity)?;
    let uid = namespace.metadata.uid.unwrap_or_default();
    ClusterIdentity::from_namespace_uid(&uid).ok_or(StartError::UnusableClusterIdentity(uid))
}

async fn load_policies(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    default: Arc<crate::policy::Policy>,
    pull_secrets: SecretReader,
) -> Result<(Arc<Policies>, Option<DirectoryWatcher>), StartError> {
    let shown = dir.display().to_string();
    let images = Arc::new(ImageSource::new(pull_secrets));
    let (set, report) = directory::load_with_images(engine, dir, &images, default, None)
        .await
        .map_err(|source| StartError::PolicyDir {
            dir: shown.clone(),
            source,
        })?;
    for name in &report.loaded {
        tracing::info!(policy = %name, dir = %shown, "policy loaded");
    }
    for (name, reason) in &report.failed {
        tracing::error!(policy = %name, %reason, "policy refused; the Services it selects fail until it is fixed");
    }
    let policies = Arc::new(Policies::new(set));
    policies.note_pull_failures(report.pulls_failed.len());
    let watcher = directory::watch_with_images(
        engine.clone(),
        dir.to_path_buf(),
        policies.clone(),
        images,
        !report.pulls_failed.is_empty(),
    )
    .map_err(|source| StartError::PolicyWatch { dir: shown, source })?;
    Ok((policies, Some(watcher)))
}

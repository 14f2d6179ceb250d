//! What the manager runs with (built from flags by `vcd-ccm run`, or by
//! the demo), and the errors that stop the process at start.

use std::path::PathBuf;
use std::time::Duration;

use kube::Client;
use kube::client::ClientBuilder;

use crate::config::{CloudConfig, ConfigError};
use crate::controllers::EnabledControllers;
use crate::controllers::leader::{LeaderConfig, LeaderConfigError};
use crate::controllers::lifecycle::DeletionFraction;
use crate::controllers::node::NodeControllerConfig;
use crate::controllers::service::ServiceControllerConfig;
use crate::policy::LoadError;
use crate::policy::engine::EngineError;
use crate::policy::manifest::ManifestError;
use crate::ratelimit::{Rate, RateLimiter, ThrottleLayer, ThrottleMetrics};
use crate::serve::{ServeConfig, ServeError};

/// The cloud-controller-manager's client-go rate (`--kube-api-qps`,
/// `--kube-api-burst`).
pub const DEFAULT_KUBE_API_RATE: Rate = Rate {
    per_second: 20.0,
    burst: 30,
};

/// Everything `vcd-ccm run` needs, resolved from flags and files.
pub struct Settings {
    /// The parsed cloud config.
    pub cloud: CloudConfig,
    /// Where the credential Secret is mounted.
    pub secret_dir: PathBuf,
    /// The same Secret through the API: one-time refresh tokens are read
    /// from and written back to it. `None`: never written.
    pub credentials_secret: Option<super::CredentialSecret>,
    /// `None` or a missing directory: the built-in default policy only.
    pub policy_dir: Option<PathBuf>,
    /// How to reach the API server.
    pub kube: kube::Config,
    /// The Kubernetes clients' rate limit; `None`: unlimited.
    pub kube_api_rate: Option<Rate>,
    /// Which controllers run.
    pub controllers: EnabledControllers,
    /// The service controller's workers, class and backoff.
    pub service: ServiceControllerConfig,
    /// The cloud node controller's workers and refresh period.
    pub node: NodeControllerConfig,
    /// How often the lifecycle controller checks NotReady Nodes.
    pub node_monitor_period: Duration,
    /// The lifecycle controller's mass-deletion guard limit.
    pub max_node_deletion_fraction: DeletionFraction,
    /// How long VCD may go unanswered before /readyz fails and the leader
    /// steps down.
    pub vcd_unreachable_timeout: Duration,
    /// On SIGTERM: how long running syncs may take to finish before the
    /// Lease is released and the process exits.
    pub shutdown_grace_period: Duration,
    /// `None` with `--leader-elect=false`.
    pub leader: Option<LeaderConfig>,
    /// `None` when nothing is served.
    pub serve: Option<ServeConfig>,
    /// Paths served to anyone; every other request is authorized by the
    /// API server. `None`: everything is open (plain HTTP).
    pub delegated_access: Option<Vec<String>>,
    /// `<hostname>_<uuid>`: the Lease holder and the Events' source host.
    pub identity: String,
}

/// Why `vcd-ccm run` cannot start; each names the flag or file to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The cloud config or the credential Secret is wrong.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A flag has a value that cannot work; the text names the flag.
    #[error("{0}")]
    Flag(String),
    /// The kubeconfig cannot be read or used.
    #[error("kubeconfig {path}: {reason}")]
    Kubeconfig {
        /// The file, or where the config was inferred from.
        path: String,
        /// The first line of the loader's message.
        reason: String,
    },
    /// The Kubernetes client cannot be built from the config.
    #[error("cannot build a Kubernetes client: {0}")]
    Kube(#[source] kube::Error),
    /// The `kube-system` Namespace, whose uid identifies the cluster in
    /// every VCD object's ownership tag, cannot be read.
    #[error(
        "cannot read Namespace kube-system, whose uid identifies this cluster in the tags of its VCD objects (the ClusterRole needs get on namespaces): {0}"
    )]
    ClusterIdentity(#[source] kube::Error),
    /// The `kube-system` Namespace's uid cannot be written into a tag.
    #[error("the kube-system Namespace has uid {0:?}, which cannot identify the cluster in tags")]
    UnusableClusterIdentity(String),
    /// The leader-election flags are inconsistent.
    #[error("leader election: {0}")]
    Leader(#[from] LeaderConfigError),
    /// The serving port cannot be set up.
    #[error("serving /healthz, /readyz and /metrics: {0}")]
    Serve(#[source] ServeError),
    /// wasmtime refused the engine configuration.
    #[error("the policy engine cannot start: {0}")]
    PolicyEngine(#[from] EngineError),
    /// The built-in default policy does not load (its settings from the cloud config are refused).
    #[error("the built-in default policy cannot load: {0}")]
    DefaultPolicy(#[source] LoadError),
    /// `policies.yaml` in the policy directory is wrong.
    #[error("policy directory {dir}: {source}")]
    PolicyDir {
        /// The directory.
        dir: String,
        /// What is wrong with the manifest.
        #[source]
        source: ManifestError,
    },
    /// The policy directory cannot be watched for changes.
    #[error("policy directory {dir}: cannot watch for changes: {source}")]
    PolicyWatch {
        /// The directory.
        dir: String,
        /// The watcher's error.
        #[source]
        source: notify::Error,
    },
}

/// A Kubernetes client, throttled to the settings' rate with a bucket of
/// its own.
pub fn kube_client(settings: &Settings, metrics: &ThrottleMetrics) -> Result<Client, StartError> {
    let builder = ClientBuilder::try_from(settings.kube.clone()).map_err(StartError::Kube)?;
    Ok(match settings.kube_api_rate.and_then(RateLimiter::new) {
        Some(limiter) => builder
            .with_layer(&ThrottleLayer::new(limiter, metrics))
            .build(),
        None => builder.build(),
    })
}

/// The serving port's access-review client: a connection of its own, not
/// throttled by `--kube-api-qps` (the reviews are paced by
/// [`crate::access::ACCESS_RATE`] instead), so reviews and the controllers'
/// requests never wait for each other.
pub fn access_client(settings: &Settings) -> Result<Client, StartError> {
    Ok(ClientBuilder::try_from(settings.kube.clone())
        .map_err(StartError::Kube)?
        .build())
}

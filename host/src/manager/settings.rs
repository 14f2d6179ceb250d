//! What the manager runs with (built from flags by `vcd-ccm run`, or by
//! the demo), and the errors that stop the process at start.

use std::path::PathBuf;
use std::time::Duration;

use kube::Client;
use kube::client::ClientBuilder;

use crate::config::{CloudConfig, ConfigError};
use crate::controllers::EnabledControllers;
use crate::controllers::leader::{LeaderConfig, LeaderConfigError};
use crate::controllers::node::NodeControllerConfig;
use crate::controllers::service::ServiceControllerConfig;
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

pub struct Settings {
    pub cloud: CloudConfig,
    pub secret_dir: PathBuf,
    /// `None` or a missing directory: the built-in default policy only.
    pub policy_dir: Option<PathBuf>,
    pub kube: kube::Config,
    /// The Kubernetes clients' rate limit; `None`: unlimited.
    pub kube_api_rate: Option<Rate>,
    pub controllers: EnabledControllers,
    pub service: ServiceControllerConfig,
    pub node: NodeControllerConfig,
    pub node_monitor_period: Duration,
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

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Flag(String),
    #[error("kubeconfig {path}: {reason}")]
    Kubeconfig { path: String, reason: String },
    #[error("cannot build a Kubernetes client: {0}")]
    Kube(#[source] kube::Error),
    #[error("leader election: {0}")]
    Leader(#[from] LeaderConfigError),
    #[error("serving /healthz, /readyz and /metrics: {0}")]
    Serve(#[source] ServeError),
    #[error("the policy engine cannot start: {0}")]
    PolicyEngine(#[from] EngineError),
    #[error("the built-in default policy cannot load: {0}")]
    DefaultPolicy(String),
    #[error("policy directory {dir}: {source}")]
    PolicyDir {
        dir: String,
        #[source]
        source: ManifestError,
    },
    #[error("policy directory {dir}: cannot watch for changes: {reason}")]
    PolicyWatch { dir: String, reason: String },
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

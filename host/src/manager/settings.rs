//! What the manager runs with, built from `vcd-ccm run`'s flags, and the
//! errors that stop the process at start.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::config::{CloudConfig, ConfigError};
use crate::controllers::EnabledControllers;
use crate::controllers::leader::{LeaderConfig, LeaderConfigError, default_identity};
use crate::controllers::node::NodeControllerConfig;
use crate::controllers::service::ServiceControllerConfig;
use crate::policy::engine::EngineError;
use crate::policy::manifest::ManifestError;
use crate::serve::{Certificate, ServeConfig, ServeError, Transport};

/// The provider name upstream's command line passes.
pub const PROVIDER_NAME: &str = "vmware-cloud-director";

pub struct Settings {
    pub cloud: CloudConfig,
    pub secret_dir: PathBuf,
    /// `None` or a missing directory: the built-in default policy only.
    pub policy_dir: Option<PathBuf>,
    pub kube: kube::Config,
    pub controllers: EnabledControllers,
    pub service: ServiceControllerConfig,
    pub node: NodeControllerConfig,
    pub node_monitor_period: Duration,
    /// `None` with `--leader-elect=false`.
    pub leader: Option<LeaderConfig>,
    /// `None` when nothing is served.
    pub serve: Option<ServeConfig>,
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

impl Settings {
    /// Everything from the flags and files; any problem is one error.
    pub async fn from_args(args: &RunArgs) -> Result<Settings, StartError> {
        if let Some(provider) = args.cloud_provider.as_deref()
            && provider != PROVIDER_NAME
        {
            return Err(StartError::Flag(format!(
                "--cloud-provider: {provider:?} is not this provider; use {PROVIDER_NAME:?} or leave it out"
            )));
        }
        let controllers = EnabledControllers::parse(&args.controllers).map_err(StartError::Flag)?;
        let positive = |flag: &str, value: usize| {
            if value == 0 {
                Err(StartError::Flag(format!("--{flag}: must be at least 1")))
            } else {
                Ok(value)
            }
        };
        let cloud = CloudConfig::from_file(&args.cloud_config)?;
        let identity = default_identity();
        let leader = args.leader_elect.then(|| LeaderConfig {
            namespace: args.leader_elect_resource_namespace.clone(),
            name: args.leader_elect_resource_name.clone(),
            identity: identity.clone(),
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        });
        if let Some(leader) = &leader {
            leader.validate()?;
        }
        Ok(Settings {
            secret_dir: args.credentials_dir.clone(),
            policy_dir: Some(args.policy_dir.clone()),
            kube: kube_config(args.kubeconfig.as_ref()).await?,
            controllers,
            service: ServiceControllerConfig {
                workers: positive("concurrent-service-syncs", args.concurrent_service_syncs)?,
                load_balancer_class: args.load_balancer_class.clone(),
                ..ServiceControllerConfig::default()
            },
            node: NodeControllerConfig {
                concurrent_node_syncs: positive(
                    "concurrent-node-syncs",
                    args.concurrent_node_syncs,
                )?,
                node_status_update_frequency: args.node_status_update_frequency,
            },
            node_monitor_period: args.node_monitor_period,
            leader,
            serve: serve_config(args),
            identity,
            cloud,
        })
    }
}

fn serve_config(args: &RunArgs) -> Option<ServeConfig> {
    let (port, transport) = match (args.port, &args.tls_cert_file, &args.tls_private_key_file) {
        (Some(port), _, _) => (port, Transport::Http),
        (None, _, _) if args.secure_port == 0 => return None,
        (None, Some(cert), Some(key)) => (
            args.secure_port,
            Transport::Https(Certificate::Files {
                cert: cert.clone(),
                key: key.clone(),
            }),
        ),
        (None, _, _) => (args.secure_port, Transport::Https(Certificate::SelfSigned)),
    };
    Some(ServeConfig {
        listen: SocketAddr::new(args.bind_address, port),
        transport,
    })
}

/// `--kubeconfig`, else the in-cluster config or `$KUBECONFIG`.
pub async fn kube_config(path: Option<&PathBuf>) -> Result<kube::Config, StartError> {
    match path {
        Some(path) => {
            // YAML errors append a multi-line snippet; the first line has
            // the line and column already.
            let error = |reason: String| StartError::Kubeconfig {
                path: path.display().to_string(),
                reason: reason.lines().next().unwrap_or_default().to_string(),
            };
            let kubeconfig =
                kube::config::Kubeconfig::read_from(path).map_err(|e| error(e.to_string()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .map_err(|e| error(e.to_string()))
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| StartError::Kubeconfig {
                path: "(in-cluster or $KUBECONFIG)".into(),
                reason: e.to_string(),
            }),
    }
}

//! The command line: `vcd-ccm run`, `vcd-ccm check`, `vcd-ccm demo` and
//! `vcd-ccm policy {test,eval,inspect,new,wit,configmap,push}`. `run` takes the Go CCM's flags
//! where they exist, so existing Deployments keep their command lines.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

use crate::access::DEFAULT_ALWAYS_ALLOW_PATHS;
use crate::config::{DEFAULT_CLOUD_CONFIG, DEFAULT_SECRET_DIR};
use crate::controllers::leader::{DEFAULT_LEASE_NAME, DEFAULT_LEASE_NAMESPACE};
use crate::logging::LogFormat;
use crate::manager::DEFAULT_KUBE_API_RATE;
use crate::serve::DEFAULT_SECURE_PORT;

/// The parsed command line.
#[derive(Parser)]
#[command(
    name = "vcd-ccm",
    version,
    about = "Kubernetes cloud-controller-manager for VMware Cloud Director"
)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// What `vcd-ccm` does.
#[derive(Subcommand)]
pub enum Command {
    /// Run the cloud-controller-manager against a cluster and VCD.
    Run(Box<RunArgs>),
    /// Check, read only, that VCD and the configuration are ready for `run`
    /// (exit 1 when a check fails).
    Check(Box<CheckArgs>),
    /// Print, read only, what a reconcile of every LoadBalancer Service
    /// would write to VCD now (exit 0: nothing, 2: something, 1: an error).
    Plan(Box<PlanArgs>),
    /// Run the controllers against embedded VCD and Kubernetes simulators.
    #[cfg(feature = "demo")]
    Demo(DemoArgs),
    /// Work with load-balancer policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

/// `vcd-ccm policy …`: tools for policy authors and operators.
#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Run policy test suites (exit 0: all passed, 1: a case failed, 2: a suite could not run).
    Test(TestArgs),
    /// Print the decision a policy makes for one input.
    Eval(EvalArgs),
    /// Show a component's imports, exports, contract version and digest, and whether the host accepts it.
    Inspect(InspectArgs),
    /// Create a policy project (Rust, Python or JavaScript) that builds and
    /// passes its test suite as created.
    New(NewArgs),
    /// Write the policy contract's WIT files.
    Wit(WitArgs),
    /// Make the policy ConfigMap from a spec, refusing what the CCM would refuse.
    Configmap(ConfigMapArgs),
    /// Publish a component to an OCI registry as a wasm artifact and print
    /// its reference pinned by digest, for `image:` in policies.yaml.
    Push(PushArgs),
}

/// Where the tools find registry credentials.
#[derive(clap::Args)]
pub struct RegistryArgs {
    /// A Docker config.json with the registry's credentials (`auths`);
    /// default `$REGISTRY_AUTH_FILE`, else `~/.docker/config.json` when it
    /// exists, else none. Registries on loopback are reached over plain
    /// HTTP, every other over HTTPS.
    #[arg(long, value_name = "FILE")]
    pub registry_auth: Option<PathBuf>,
}

/// Arguments of `vcd-ccm policy push`.
#[derive(clap::Args)]
pub struct PushArgs {
    /// The policy component (.wasm); refused if the host would refuse it.
    pub component: PathBuf,
    /// Where to publish: `oci://<registry>/<repository>[:<tag>]`.
    pub reference: String,
    /// Registry credentials.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Arguments of `vcd-ccm policy new`.
#[derive(clap::Args)]
pub struct NewArgs {
    /// The policy's name: a lowercase DNS label other than `default`; the
    /// crate's name and directory too.
    pub name: String,
    /// The directory to create the project in.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// The language the policy is written in.
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    pub lang: Language,
}

/// A language `policy new` writes projects in, each with its component toolchain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Language {
    /// wit-bindgen and cargo's `wasm32-wasip2` target.
    Rust,
    /// componentize-py, from PyPI.
    Python,
    /// componentize-js, from npm.
    Javascript,
}

/// Arguments of `vcd-ccm policy wit`.
#[derive(clap::Args)]
pub struct WitArgs {
    /// The directory to write `types.wit` and `world.wit` to.
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `vcd-ccm policy configmap`.
#[derive(clap::Args)]
pub struct ConfigMapArgs {
    /// `policies.yaml` with each `file` a path to the component relative to
    /// it, and `sha256` optional.
    pub spec: PathBuf,
    /// The ConfigMap's name: the one the CCM's Deployment mounts as its policy directory.
    #[arg(long, default_value = DEFAULT_POLICY_CONFIGMAP)]
    pub name: String,
    /// The ConfigMap's namespace: the CCM's.
    #[arg(long, default_value = DEFAULT_POLICY_NAMESPACE)]
    pub namespace: String,
    /// Write the ConfigMap here instead of to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The ConfigMap `manifests/deployment.yaml` mounts at `--policy-dir`'s default.
pub const DEFAULT_POLICY_CONFIGMAP: &str = "vcd-ccm-policies";
/// The namespace `manifests/` deploys the CCM in.
pub const DEFAULT_POLICY_NAMESPACE: &str = "kube-system";

/// Arguments of `vcd-ccm policy test`.
#[derive(clap::Args)]
pub struct TestArgs {
    /// Suite files, or directories searched for *.yaml.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Run only the cases whose name matches this regular expression.
    #[arg(long)]
    pub run: Option<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// Credentials for suites whose `policy` is an `oci://` reference.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// How a report is printed.
#[derive(Clone, Copy, ValueEnum)]
pub enum Output {
    /// Lines for a terminal.
    Text,
    /// One JSON document, for CI tooling.
    Json,
}

/// Arguments of `vcd-ccm policy eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// `default`, the path of a policy component (.wasm), or
    /// `oci://<registry>/<repository>@sha256:<digest>`.
    #[arg(long)]
    pub policy: String,
    /// A decision-input document (YAML or JSON, WIT field names).
    #[arg(long)]
    pub input: PathBuf,
    /// The policy's settings (a JSON file); `{}` when omitted.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The per-call deadline in milliseconds, as `timeoutMs` in
    /// `policies.yaml` (1–10000); 100 when omitted.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub timeout_ms: Option<u64>,
    /// Credentials for an `oci://` policy.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Arguments of `vcd-ccm policy inspect`.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// The policy component (.wasm), or
    /// `oci://<registry>/<repository>@sha256:<digest>`.
    pub component: String,
    /// The deadline of the `describe` call that verifies it, in
    /// milliseconds, as `timeoutMs` in `policies.yaml` (1–10000); 100 when
    /// omitted.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub timeout_ms: Option<u64>,
    /// Credentials for an `oci://` component.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|e| format!("{text:?} is not a duration such as 15s or 5m: {e}"))
}

/// Arguments of `vcd-ccm run`, named as the Go CCM's flags where those exist.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The upstream cloud config (`vcloud-ccm-config.yaml`).
    #[arg(long, default_value = DEFAULT_CLOUD_CONFIG)]
    pub cloud_config: PathBuf,
    /// The mounted credential Secret (`username`, `password`, `refreshToken`).
    #[arg(long, default_value = DEFAULT_SECRET_DIR)]
    pub credentials_dir: PathBuf,
    /// The same Secret as `<namespace>/<name>`, read through the API before
    /// each exchange of a refresh token, and where a service account's new
    /// one-time refresh token is written back; "" turns the write-back off.
    #[arg(long, default_value = "kube-system/vcloud-basic-auth")]
    pub credentials_secret: String,
    /// Provider policies (`policies.yaml` and `<name>.wasm`); absent means
    /// the built-in default policy only.
    #[arg(long, default_value = "/etc/vcd-ccm/policies")]
    pub policy_dir: PathBuf,
    /// A kubeconfig; without it, the in-cluster config (or $KUBECONFIG).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Controllers to run: `*`, names or aliases, `-name` to disable.
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// Services synced at once (also the node-update parallelism).
    #[arg(long, default_value_t = 1)]
    pub concurrent_service_syncs: usize,
    /// Nodes initialised at once.
    #[arg(long, default_value_t = 1)]
    pub concurrent_node_syncs: usize,
    /// How often initialised nodes' addresses are refreshed.
    #[arg(long, value_parser = duration, default_value = "5m")]
    pub node_status_update_frequency: Duration,
    /// How often NotReady nodes are checked against their VMs.
    #[arg(long, value_parser = duration, default_value = "5s")]
    pub node_monitor_period: Duration,
    /// The largest share of the Nodes one lifecycle pass may delete when more
    /// than one would go; above it the pass deletes none. In (0, 1].
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub max_node_deletion_fraction: f64,
    /// How long VCD may go without answering before /readyz fails and the
    /// leader gives up its Lease to a standby that can reach VCD.
    #[arg(long, value_parser = duration, default_value = "60s")]
    pub vcd_unreachable_timeout: Duration,
    /// On SIGTERM, how long running syncs may take to finish before the
    /// leader Lease is released; keep it below the Pod's
    /// terminationGracePeriodSeconds.
    #[arg(long, value_parser = duration, default_value = "20s")]
    pub shutdown_grace_period: Duration,
    /// How often every Service's load balancer is compared with what VCD
    /// holds, and objects deleted or changed outside the CCM are repaired
    /// (one read of the gateway per period); 0 turns it off.
    #[arg(long, value_parser = duration, default_value = "5m")]
    pub drift_repair_period: Duration,
    /// How often Services annotated vcd-ccm.io/tls-secret are reconciled so
    /// a Secret renewed in place (cert-manager) reaches VCD: one Secret GET
    /// each, no VCD write while unchanged; 0 turns it off.
    #[arg(long, value_parser = duration, default_value = "60s")]
    pub tls_secret_resync_period: Duration,
    /// How often VCD's view of each load balancer's members (one list of
    /// the gateway's pool summaries) becomes the Services' health condition,
    /// gauges and Events; 0 turns it off.
    #[arg(long, value_parser = duration, default_value = "60s")]
    pub health_interval: Duration,
    /// Serve Services of this `spec.loadBalancerClass` too; may be given
    /// several times.
    #[arg(long)]
    pub load_balancer_class: Vec<String>,
    /// Serve Services with no `spec.loadBalancerClass`; `false` leaves them
    /// to another implementation (MetalLB, Cilium).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub serve_classless: bool,
    /// Elect a leader among replicas through a Lease.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// How long a leader's Lease holds without renewal before a standby may take it.
    #[arg(long, value_parser = duration, default_value = "15s")]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading.
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub leader_elect_renew_deadline: Duration,
    /// How often candidates try to acquire or renew the Lease.
    #[arg(long, value_parser = duration, default_value = "2s")]
    pub leader_elect_retry_period: Duration,
    /// Namespace of the leader-election Lease.
    #[arg(long, default_value = DEFAULT_LEASE_NAMESPACE)]
    pub leader_elect_resource_namespace: String,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = DEFAULT_LEASE_NAME)]
    pub leader_elect_resource_name: String,
    /// Address of /healthz, /readyz and /metrics.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    /// HTTPS port (self-signed unless --tls-cert-file is given); 0 serves nothing.
    #[arg(long, default_value_t = DEFAULT_SECURE_PORT)]
    pub secure_port: u16,
    /// Paths (or prefixes ending in `*`) the HTTPS port serves without
    /// authorization; every other request needs a token allowed by the API
    /// server (TokenReview, SubjectAccessReview).
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_ALWAYS_ALLOW_PATHS.map(String::from))]
    pub authorization_always_allow_paths: Vec<String>,
    /// Serve plain HTTP on this port instead of HTTPS (local runs), open to
    /// anyone who reaches it.
    #[arg(long)]
    pub port: Option<u16>,
    /// PEM certificate chain (leaf first) of the HTTPS port, read at start.
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of --tls-cert-file.
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Kubernetes API requests per second (client-go's token bucket; leader
    /// election has its own); negative turns the limit off.
    #[arg(long, default_value_t = DEFAULT_KUBE_API_RATE.per_second as f32, allow_negative_numbers = true)]
    pub kube_api_qps: f32,
    /// Kubernetes API requests allowed at once above `--kube-api-qps`.
    #[arg(long, default_value_t = DEFAULT_KUBE_API_RATE.burst)]
    pub kube_api_burst: u32,
    /// Accepted for drop-in command lines; must name this provider if set.
    #[arg(long)]
    pub cloud_provider: Option<String>,
    /// Accepted for drop-in command lines (upstream's deprecated flag).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub allow_untagged_cloud: bool,
    /// Accepted for drop-in command lines; objects are named after `clusterid`.
    #[arg(long, default_value = "kubernetes")]
    pub cluster_name: String,
    /// Log verbosity as klog's `-v`: up to 3 info, 4–5 debug, 6 and more
    /// trace (of vcd-ccm; dependencies log warnings). `RUST_LOG` overrides it.
    #[arg(short = 'v', long = "v", default_value_t = 2)]
    pub verbosity: u8,
    /// Log lines as `text` (colour only on a terminal) or `json` (one object
    /// per line: timestamp, level, target, fields, spans).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub logging_format: LogFormat,
}

impl RunArgs {
    /// The log filter `--v` selects.
    pub fn log_filter(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "warn,vcd_ccm=info",
            4..=5 => "warn,vcd_ccm=debug",
            _ => "info,vcd_ccm=trace",
        }
    }
}

/// Arguments of `vcd-ccm check`: `run`'s, so the same command line checks
/// what `run` would use.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// `run`'s flags; the cloud config and the credentials are read.
    #[command(flatten)]
    pub run: RunArgs,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// Arguments of `vcd-ccm plan`.
#[derive(clap::Args)]
pub struct PlanArgs {
    /// `run`'s flags: the same cloud config, credentials, kubeconfig,
    /// policy directory (`--policy-dir` previews another policy set) and
    /// load-balancer class.
    #[command(flatten)]
    pub run: RunArgs,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// Arguments of `vcd-ccm demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Exit after convergence with a summary (non-zero if it fails).
    #[arg(long)]
    pub once: bool,
    /// Where to write a kubeconfig for the embedded API server.
    #[arg(long, default_value = "vcd-ccm-demo.kubeconfig")]
    pub kubeconfig_out: PathBuf,
    /// How long `--once` waits for convergence.
    #[arg(long, value_parser = duration, default_value = "60s")]
    pub timeout: Duration,
    /// On exit, write every request the simulators answered to this
    /// directory, one JSON object per line: `vcd.jsonl` (method, path, body
    /// sent to VCD and the answer) and `kube.jsonl` (method, path and write
    /// body sent to Kubernetes).
    #[arg(long, value_name = "DIR")]
    pub request_log: Option<PathBuf>,
    /// The VCD world: `default` (one VDC) or `dc-group` (the cluster's VMs
    /// in two VDCs of a data-center group, one zone each, behind the
    /// group's edge gateway).
    #[arg(long, value_enum, default_value_t = DemoScenario::Default)]
    pub scenario: DemoScenario,
}

/// The vcdsim scenarios `vcd-ccm demo` can start on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DemoScenario {
    /// One VDC with its network and edge gateway.
    Default,
    /// Two VDCs of a data-center group, on the group's network and gateway.
    DcGroup,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Command};

    #[test]
    fn the_upstream_deployments_command_line_is_accepted() {
        let cli = Cli::try_parse_from([
            "vcd-ccm",
            "run",
            "--cloud-provider=vmware-cloud-director",
            "--cloud-config=/etc/kubernetes/vcloud/vcloud-ccm-config.yaml",
            "--allow-untagged-cloud=true",
        ])
        .expect("upstream's flags parse");
        let Command::Run(args) = cli.command else {
            panic!("not the run command");
        };
        assert!(args.allow_untagged_cloud && args.leader_elect);
        assert_eq!(args.secure_port, 10258);
        assert_eq!(args.leader_elect_lease_duration.as_secs(), 15);
        assert_eq!(args.log_filter(), "warn,vcd_ccm=info");
        let verbose = Cli::try_parse_from(["vcd-ccm", "run", "--v=4"]).expect("klog's -v");
        let Command::Run(verbose) = verbose.command else {
            panic!("not the run command");
        };
        assert_eq!(verbose.log_filter(), "warn,vcd_ccm=debug");
    }

    #[test]
    fn durations_take_go_style_values_and_name_bad_ones() {
        let cli = Cli::try_parse_from(["vcd-ccm", "run", "--node-monitor-period=1m30s"])
            .expect("a Go-style duration");
        let Command::Run(args) = cli.command else {
            panic!("not the run command");
        };
        assert_eq!(args.node_monitor_period.as_secs(), 90);
        let error = Cli::try_parse_from(["vcd-ccm", "run", "--node-monitor-period=soon"])
            .err()
            .expect("refused")
            .to_string();
        assert!(error.contains("\"soon\" is not a duration"), "{error}");
    }
}

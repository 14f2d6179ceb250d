//! `vcd-ccm run`'s flags turned into the manager's settings.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::config::CloudConfig;
use crate::controllers::EnabledControllers;
use crate::controllers::leader::{LeaderConfig, default_identity};
use crate::controllers::lifecycle::DeletionFraction;
use crate::controllers::node::NodeControllerConfig;
use crate::controllers::service::{ClassFilter, ServiceControllerConfig, lease_reference};
use crate::manager::{CredentialSecret, Settings, StartError};
use crate::ratelimit::Rate;
use crate::serve::{Certificate, ServeConfig, Transport};

/// The provider name upstream's command line passes.
pub const PROVIDER_NAME: &str = "vmware-cloud-director";
/// The manager's settings from `vcd-ccm run`'s flags and the files they
/// name; any problem is one error.
pub async fn settings(args: &RunArgs) -> Result<Settings, StartError> {
    if let Some(provider) = args.cloud_provider.as_deref()
        && provider != PROVIDER_NAME
    {
        return Err(StartError::Flag(format!(
            "--cloud-provider: {provider:?} is not this provider; use {PROVIDER_NAME:?} or leave it out"
        )));
    }
    let controllers = EnabledControllers::parse(&args.controllers).map_err(StartError::Flag)?;
    for class in &args.load_balancer_class {
        load_balancer_class(class).map_err(StartError::Flag)?;
    }
    if !args.serve_classless && args.load_balancer_class.is_empty() {
        return Err(StartError::Flag(
            "--serve-classless=false with no --load-balancer-class serves no Service; name the classes to serve with --load-balancer-class".into(),
        ));
    }
    let max_node_deletion_fraction = max_node_deletion_fraction(args)?;
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
    let serve = serve_config(args);
    Ok(Settings {
        kube_api_rate: kube_api_rate(args)?,
        secret_dir: args.credentials_dir.clone(),
        credentials_secret: match args.credentials_secret.as_str() {
            "" => None,
            text => Some(
                CredentialSecret::parse(text)
                    .map_err(|e| StartError::Flag(format!("--credentials-secret: {e}")))?,
            ),
        },
        policy_dir: Some(args.policy_dir.clone()),
        kube: kube_config(args.kubeconfig.as_ref()).await?,
        controllers,
        service: ServiceControllerConfig {
            workers: positive("concurrent-service-syncs", args.concurrent_service_syncs)?,
            classes: ClassFilter::new(args.load_balancer_class.clone(), args.serve_classless),
            drift_period: Some(args.drift_repair_period).filter(|p| !p.is_zero()),
            tls_secret_period: Some(args.tls_secret_resync_period).filter(|p| !p.is_zero()),
            health_period: health_period(args),
            events_on: lease_reference(
                &args.leader_elect_resource_namespace,
                &args.leader_elect_resource_name,
            ),
            ..ServiceControllerConfig::default()
        },
        node: NodeControllerConfig {
            concurrent_node_syncs: positive("concurrent-node-syncs", args.concurrent_node_syncs)?,
            node_status_update_frequency: args.node_status_update_frequency,
            ..NodeControllerConfig::default()
        },
        node_monitor_period: args.node_monitor_period,
        max_node_deletion_fraction,
        vcd_unreachable_timeout: vcd_unreachable_timeout(args)?,
        shutdown_grace_period: args.shutdown_grace_period,
        leader,
        delegated_access: serve
            .as_ref()
            .is_some_and(|serve| serve.transport != Transport::Http)
            .then(|| args.authorization_always_allow_paths.clone()),
        serve,
        identity,
        cloud,
    })
}

fn kube_api_rate(args: &RunArgs) -> Result<Option<Rate>, StartError> {
    let qps = args.kube_api_qps;
    if qps < 0.0 {
        return Ok(None);
    }
    if !qps.is_finite() || qps == 0.0 {
        return Err(StartError::Flag(format!(
            "--kube-api-qps: {qps} is not a rate; give requests per second above 0, or a negative number to turn the limit off"
        )));
    }
    if args.kube_api_burst == 0 {
        return Err(StartError::Flag(
            "--kube-api-burst: must be at least 1 while --kube-api-qps limits the rate".into(),
        ));
    }
    Ok(Some(Rate {
        per_second: f64::from(qps),
        burst: args.kube_api_burst,
    }))
}

fn vcd_unreachable_timeout(args: &RunArgs) -> Result<Duration, StartError> {
    match args.vcd_unreachable_timeout {
        timeout if timeout < Duration::from_secs(1) => Err(StartError::Flag(format!(
            "--vcd-unreachable-timeout: {timeout:?} is shorter than a second; a blip would fail readiness and cost the leadership"
        ))),
        timeout => Ok(timeout),
    }
}

fn max_node_deletion_fraction(args: &RunArgs) -> Result<DeletionFraction, StartError> {
    DeletionFraction::new(args.max_node_deletion_fraction)
        .map_err(|e| StartError::Flag(format!("--max-node-deletion-fraction: {e}")))
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

/// `--health-interval`; 0 turns the reads off.
fn health_period(args: &RunArgs) -> Option<Duration> {
    Some(args.health_interval).filter(|p| !p.is_zero())
}

/// A class as the API server accepts it: a label-style name with a
/// domain prefix (`example.com/name`), at most 63 characters after it.
fn load_balancer_class(text: &str) -> Result<(), String> {
    let what_works = "write a domain-prefixed name such as vcd-ccm.io/gold";
    let (prefix, name) = text.split_once('/').ok_or_else(|| {
        format!("--load-balancer-class: {text:?} has no domain prefix; {what_works}")
    })?;
    let label = |part: &str| {
        !part.is_empty()
            && part.len() <= 63
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            && part.as_bytes()[0].is_ascii_alphanumeric()
            && part.as_bytes()[part.len() - 1].is_ascii_alphanumeric()
    };
    let domain = prefix.len() <= 253
        && prefix.split('.').all(|l| {
            label(l)
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        });
    match domain && label(name) {
        true => Ok(()),
        false => Err(format!(
            "--load-balancer-class: {text:?} is not a valid class; {what_works}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::manager::DEFAULT_KUBE_API_RATE;

    fn run_args(flags: &[&str]) -> RunArgs {
        let cli = Cli::try_parse_from(["vcd-ccm", "run"].iter().chain(flags)).expect("flags parse");
        let Command::Run(args) = cli.command else {
            panic!("not the run command");
        };
        *args
    }

    fn rate(flags: &[&str]) -> Result<Option<Rate>, String> {
        kube_api_rate(&run_args(flags)).map_err(|e| e.to_string())
    }

    fn fraction(flags: &[&str]) -> Result<f64, String> {
        max_node_deletion_fraction(&run_args(flags))
            .map(DeletionFraction::get)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn health_reads_every_minute_unless_set_and_0_turns_them_off() {
        let period = |flags: &[&str]| health_period(&run_args(flags));
        assert_eq!(period(&[]), Some(Duration::from_secs(60)));
        assert_eq!(period(&["--health-interval=0"]), None);
    }

    #[test]
    fn classes_are_domain_prefixed_names() {
        for good in ["vcd-ccm.io/gold", "example.com/a_b.c-1", "a/b"] {
            assert_eq!(load_balancer_class(good), Ok(()), "{good}");
        }
        for bad in [
            "gold",
            "Example.com/gold",
            "example.com/",
            "/gold",
            "example.com/-x",
            "a/b/c",
        ] {
            assert!(load_balancer_class(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_node_deletion_fraction_is_half_unless_set_and_refused_outside_zero_to_one() {
        assert_eq!(fraction(&[]), Ok(0.5));
        assert_eq!(fraction(&["--max-node-deletion-fraction=1"]), Ok(1.0));
        assert_eq!(
            fraction(&["--max-node-deletion-fraction", "0.25"]),
            Ok(0.25)
        );
        for bad in ["0", "1.5", "-0.5", "NaN"] {
            let error = fraction(&["--max-node-deletion-fraction", bad]).unwrap_err();
            let expected =
                format!("--max-node-deletion-fraction: {bad} is not a fraction in (0, 1]");
            assert!(error.starts_with(&expected), "{error}");
        }
    }

    #[test]
    fn the_kubernetes_api_rate_is_client_gos_unless_set() {
        assert_eq!(rate(&[]), Ok(Some(DEFAULT_KUBE_API_RATE)));
        let set = rate(&["--kube-api-qps=50", "--kube-api-burst=100"]);
        assert_eq!(
            set,
            Ok(Some(Rate {
                per_second: 50.0,
                burst: 100
            }))
        );
        assert_eq!(rate(&["--kube-api-qps=-1"]), Ok(None));
    }

    #[test]
    fn a_rate_that_would_stop_every_request_is_refused() {
        let zero = rate(&["--kube-api-qps=0"]).unwrap_err();
        assert!(
            zero.starts_with("--kube-api-qps: 0 is not a rate"),
            "{zero}"
        );
        let burst = rate(&["--kube-api-burst=0"]).unwrap_err();
        assert!(
            burst.starts_with("--kube-api-burst: must be at least 1"),
            "{burst}"
        );
    }
}

//! Read-only checks that VCD and the configuration are ready for the CCM,
//! in the order an operator fixes them: the cloud config and credentials;
//! login and API version; org, VDC, network and its edge gateway; NSX ALB,
//! a service engine group with room, free external addresses and
//! `certAlias` in the library; the rights of the role; the zones file; the
//! clock against VCD's. `vcd-ccm check` prints them, `vcd-ccm run` logs
//! them at start.
//!
//! Every VCD call is a GET, made with the client's own typed calls (the
//! ones the load balancer and the node side use), each check bounded in
//! time. A check whose input an earlier one could not give is skipped with
//! the reason, never failed twice over.

mod clock;
mod findings;
mod load_balancer;
mod placement;
mod rights;
mod token_file;
mod zones;

use std::path::Path;
use std::time::Duration;

pub use clock::MAX_SKEW;
pub use findings::{CheckId, Finding, Outcome, Report};

use findings::{Failure, bounded};
use token_file::TokenFile;

use crate::config::CloudConfig;
use crate::vcd::{ClientConfig, ClientMetrics, RetryPolicy, VcdClient, VcdError};

/// The checks of one configuration.
#[derive(Debug, Clone)]
pub struct Preflight {
    cloud: CloudConfig,
}

impl Preflight {
    /// The checks of `cloud`.
    pub fn new(cloud: CloudConfig) -> Self {
        Self { cloud }
    }

    /// Every check against a client already logged in (as `run`'s is): the
    /// configuration and the login pass as such.
    pub async fn against(&self, client: &VcdClient) -> Report {
        let mut report = Report::default();
        let detail = self.config_detail(&client.config().org);
        report.push(CheckId::Config, Outcome::pass(detail));
        report.push(CheckId::Login, Outcome::pass(login_detail(client)));
        self.after_login(client, &mut report).await;
        report
    }

    /// Runs the checks against `client` and logs them: one line per check,
    /// a warning for each failure.
    pub async fn log_against(self, client: VcdClient) {
        log(&self.against(&client).await);
    }

    fn config_detail(&self, org: &str) -> String {
        let lb = self.cloud.lb_config();
        let network = if self.cloud.load_balancers_enabled() {
            format!(", network {}", lb.network)
        } else {
            ", no load balancers".to_string()
        };
        format!(
            "{}: org {}, VDC {}{network}",
            self.cloud.origin(),
            org,
            lb.vdc
        )
    }

    async fn after_login(&self, client: &VcdClient, report: &mut Report) {
        let lb = self.cloud.lb_config();
        let load_balancers = self.cloud.load_balancers_enabled();
        let found = placement::check(client, &lb, load_balancers, report).await;
        let gateway = match (&found.gateway, load_balancers) {
            (_, false) => Err("loadbalancer.enabled is false: no load balancers"),
            (Some(gateway), true) => Ok(gateway),
            (None, true) => Err("needs the edge gateway"),
        };
        load_balancer::check(client, &lb, gateway, report).await;
        let ip_spaces = found.gateway.as_ref().map(|g| g.uses_ip_spaces());
        let uses = rights::uses(&lb, load_balancers, ip_spaces, client.api_version());
        let outcome = rights::check(client, uses, found.gateway.is_some()).await;
        report.push(CheckId::Rights, outcome);
        let step = zones::check(&self.cloud, Some(client), found.org.as_ref()).await;
        report.record(CheckId::Zones, step);
        let step = clock::check(client).await;
        report.record(CheckId::Clock, step);
    }
}

/// `vcd-ccm check`: every check, from reading `cloud_config` and the
/// credentials in `credentials_dir` on.
pub async fn check_files(cloud_config: &Path, credentials_dir: &Path) -> Report {
    let mut report = Report::default();
    let (cloud, client_config) = match read_config(cloud_config, credentials_dir) {
        Ok(read) => read,
        Err(failure) => {
            report.push(CheckId::Config, Outcome::fail(failure.problem, failure.fix));
            report.skip(&CheckId::ALL[1..], "needs the cloud config");
            return report;
        }
    };
    let preflight = Preflight::new(cloud);
    let detail = preflight.config_detail(&client_config.org);
    report.push(CheckId::Config, Outcome::pass(detail));
    match login(client_config, credentials_dir).await {
        Ok(client) => {
            report.push(CheckId::Login, Outcome::pass(login_detail(&client)));
            preflight.after_login(&client, &mut report).await;
        }
        Err(failure) => {
            report.push(CheckId::Login, Outcome::fail(failure.problem, failure.fix));
            // Org to rights; the zones file is read all the same.
            report.skip(&CheckId::ALL[2..11], "needs a login");
            let step = zones::check(&preflight.cloud, None, None).await;
            report.record(CheckId::Zones, step);
            report.skip(&[CheckId::Clock], "needs a login");
        }
    }
    report
}

fn read_config(
    cloud_config: &Path,
    credentials_dir: &Path,
) -> Result<(CloudConfig, ClientConfig), Failure> {
    let fix = "Correct what the message names in the cloud config (--cloud-config) or the credential Secret (--credentials-dir)";
    let cloud = CloudConfig::from_file(cloud_config).map_err(|e| Failure::new(e, fix))?;
    let client_config = cloud
        .client_config(credentials_dir)
        .map_err(|e| Failure::new(e, fix))?;
    if cloud.load_balancers_enabled() {
        cloud
            .lb_config()
            .check()
            .map_err(|e| Failure::new(format!("cloud config {}: {e}", cloud.origin()), fix))?;
    }
    Ok((cloud, client_config))
}

/// The login, unless `refreshToken` holds a token whose successor could
/// not be stored: a service account's token is voided by the exchange, so
/// the check logs in only where it can write the new one back.
async fn login(mut config: ClientConfig, credentials_dir: &Path) -> Result<VcdClient, Failure> {
    if let Some(file) = TokenFile::of(credentials_dir) {
        if let Some(why) = file.unwritable() {
            return Err(Failure::new(
                format!(
                    "refreshToken may be a service account's one-time token, which a login voids, and its successor could not be stored: {why}"
                ),
                "Run vcd-ccm check on a writable copy of the credential files (then put the refreshToken it leaves there into the Secret), or with username and password",
            ));
        }
        config.rotation = Some(file.rotation());
    }
    connect(config).await
}

/// A client for checking: few retries and short timeouts, so an
/// unreachable VCD is reported within seconds.
async fn connect(mut config: ClientConfig) -> Result<VcdClient, Failure> {
    config.retry = RetryPolicy {
        max_attempts: 2,
        ..RetryPolicy::default()
    };
    config.request_timeout = Duration::from_secs(20);
    let host = config.host.clone();
    bounded(VcdClient::connect(config, ClientMetrics::default()))
        .await?
        .map_err(|e| {
            let fix = login_fix(&e, &host);
            Failure::new(e, fix)
        })
}

fn login_fix(error: &VcdError, host: &str) -> String {
    match error {
        VcdError::NoCommonVersion { .. } => "Use a VCD release this CCM speaks (API 36.0 to 39.1: VCD 10.3 to 10.6.1)".to_string(),
        VcdError::Unauthorized { .. } | VcdError::Credentials(_) | VcdError::Rejected { .. } => {
            "Check username and password (or refreshToken) in the credential Secret, and vcd.org; an API token must not be revoked".to_string()
        }
        VcdError::Tls { .. } | VcdError::TlsConfig(_) => {
            "Set vcd.caFile to the CA that signed VCD's certificate".to_string()
        }
        _ => format!(
            "Check vcd.host ({host}) and that this host reaches VCD over HTTPS (proxies, firewalls)"
        ),
    }
}

fn login_detail(client: &VcdClient) -> String {
    let config = client.config();
    let who = if client.is_provider() {
        "System administrator"
    } else {
        "tenant"
    };
    format!(
        "{}: API version {}, {who} login, acting in org {}",
        config.host,
        client.api_version(),
        config.org
    )
}

/// Logs each finding: one line per check, failures as warnings.
pub fn log(report: &Report) {
    for finding in &report.findings {
        let check = finding.check.name();
        match &finding.outcome {
            Outcome::Pass(detail) => tracing::info!(check, %detail, "preflight check passed"),
            Outcome::Fail { problem, fix } => {
                tracing::warn!(check, %problem, %fix, "preflight check failed")
            }
            Outcome::Skipped(reason) => tracing::info!(check, %reason, "preflight check skipped"),
        }
    }
}

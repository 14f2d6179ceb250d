//! What the checks found: one finding per check, in the order they run.

use std::future::Future;
use std::time::Duration;

use crate::text::sanitize;

/// The longest text one finding carries; VCD's words are cut to it. Room
/// for every right the CCM may need, each with what it is for.
const TEXT_BYTES: usize = 2048;

/// The checks, in the order they run and are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckId {
    /// The cloud config and the credentials are readable and valid.
    Config,
    /// VCD answers, speaks an API version of ours and takes the login.
    Login,
    /// `vcd.org`.
    Org,
    /// `vcd.vdc`.
    Vdc,
    /// `loadbalancer.network`, routed through an edge gateway.
    Network,
    /// The network's edge gateway.
    Gateway,
    /// NSX ALB on the gateway, and its feature set.
    LoadBalancer,
    /// A service engine group of the gateway with room for a virtual service.
    EngineGroup,
    /// The gateway's address source (IP blocks or IP Spaces) has free addresses.
    Addresses,
    /// `loadbalancer.certAlias` is in the org's certificate library.
    Certificate,
    /// The role holds every right the CCM's calls need.
    Rights,
    /// The zones file of a zone-enabled cluster.
    Zones,
    /// This host's clock against VCD's.
    Clock,
}

impl CheckId {
    /// Every check, in order.
    pub const ALL: [CheckId; 13] = [
        CheckId::Config,
        CheckId::Login,
        CheckId::Org,
        CheckId::Vdc,
        CheckId::Network,
        CheckId::Gateway,
        CheckId::LoadBalancer,
        CheckId::EngineGroup,
        CheckId::Addresses,
        CheckId::Certificate,
        CheckId::Rights,
        CheckId::Zones,
        CheckId::Clock,
    ];

    /// The check's name in the table, the JSON and the logs.
    pub fn name(self) -> &'static str {
        match self {
            CheckId::Config => "config",
            CheckId::Login => "login",
            CheckId::Org => "org",
            CheckId::Vdc => "vdc",
            CheckId::Network => "network",
            CheckId::Gateway => "gateway",
            CheckId::LoadBalancer => "load-balancer",
            CheckId::EngineGroup => "service-engine-group",
            CheckId::Addresses => "addresses",
            CheckId::Certificate => "certificate",
            CheckId::Rights => "rights",
            CheckId::Zones => "zones",
            CheckId::Clock => "clock",
        }
    }
}

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Ready; what was found.
    Pass(String),
    /// Not ready: what is wrong and what to do about it.
    Fail {
        /// What is wrong.
        problem: String,
        /// What to change.
        fix: String,
    },
    /// Not checked, and why (an earlier check failed, or it does not apply).
    Skipped(String),
}

impl Outcome {
    /// A pass; outside text in `detail` is escaped and bounded.
    pub fn pass(detail: impl AsRef<str>) -> Self {
        Outcome::Pass(sanitize(detail.as_ref(), TEXT_BYTES))
    }

    /// A failure; outside text is escaped and bounded.
    pub fn fail(problem: impl AsRef<str>, fix: impl AsRef<str>) -> Self {
        Outcome::Fail {
            problem: sanitize(problem.as_ref(), TEXT_BYTES),
            fix: sanitize(fix.as_ref(), TEXT_BYTES),
        }
    }

    /// A skip, with its reason.
    pub fn skipped(reason: impl AsRef<str>) -> Self {
        Outcome::Skipped(sanitize(reason.as_ref(), TEXT_BYTES))
    }
}

/// One check and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Which check.
    pub check: CheckId,
    /// How it ended.
    pub outcome: Outcome,
}

/// Every check's finding, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The findings, in the order the checks ran.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether no check failed (skipped ones do not count).
    pub fn passed(&self) -> bool {
        !self
            .findings
            .iter()
            .any(|f| matches!(f.outcome, Outcome::Fail { .. }))
    }

    pub(super) fn push(&mut self, check: CheckId, outcome: Outcome) {
        self.findings.push(Finding { check, outcome });
    }

    /// Records `step`'s outcome; its value, if it passed.
    pub(super) fn record<T>(&mut self, check: CheckId, step: Step<T>) -> Option<T> {
        match step {
            Ok((value, detail)) => {
                self.push(check, Outcome::pass(detail));
                Some(value)
            }
            Err(Failure { problem, fix }) => {
                self.push(check, Outcome::fail(problem, fix));
                None
            }
        }
    }

    /// Each of `checks` skipped for `reason`.
    pub(super) fn skip(&mut self, checks: &[CheckId], reason: &str) {
        for check in checks {
            self.push(*check, Outcome::skipped(reason));
        }
    }
}

/// Why a check failed: what is wrong and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    pub problem: String,
    pub fix: String,
}

impl Failure {
    pub fn new(problem: impl ToString, fix: impl ToString) -> Self {
        Self {
            problem: problem.to_string(),
            fix: fix.to_string(),
        }
    }
}

/// A check's value and what it found, or why it failed.
pub(super) type Step<T> = Result<(T, String), Failure>;

/// How long one check may wait for VCD, retries included.
pub(super) const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// `work`'s output, or a failure once [`CHECK_TIMEOUT`] has passed.
pub(super) async fn bounded<T>(work: impl Future<Output = T>) -> Result<T, Failure> {
    tokio::time::timeout(CHECK_TIMEOUT, work)
        .await
        .map_err(|_| {
            Failure::new(
                format!("VCD did not answer within {}s", CHECK_TIMEOUT.as_secs()),
                "Check that VCD is up and this host reaches it; then run the check again",
            )
        })
}

//! The client's configuration knobs and their defaults. See `README.md`
//! beside this file for what each one means to an operator.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::credentials::CredentialSource;
use super::reachability::Reachability;
use super::retry::RetryPolicy;
use super::rotation::Rotation;
use super::version::VersionRange;

/// How the client verifies VCD's TLS certificate.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// PEM file with the CA certificate(s) VCD's certificate chains to, in
    /// addition to the built-in public roots.
    pub ca_bundle: Option<PathBuf>,
    /// Skip certificate verification entirely (logged as a warning).
    pub insecure: bool,
}

/// How the client polls the VCD task a write starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPolicy {
    /// While the client has not yet seen a task finish: the step between
    /// polls in the first second (the first poll is immediate).
    pub first_poll_delay: Duration,
    /// Polls never wait longer than this apart.
    pub max_poll_delay: Duration,
    /// How long to wait for one task before giving up.
    pub deadline: Duration,
}

impl Default for TaskPolicy {
    fn default() -> Self {
        Self {
            first_poll_delay: Duration::from_millis(100),
            max_poll_delay: Duration::from_secs(3),
            deadline: Duration::from_secs(600),
        }
    }
}

/// Everything [`VcdClient::connect`](super::VcdClient::connect) needs;
/// [`ClientConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `https://vcd.example.com` (a trailing `/` is ignored).
    pub host: String,
    /// The tenant org the cluster lives in; a System login acts on it
    /// through the tenant-context header.
    pub org: String,
    /// Where the login credentials come from.
    pub credentials: CredentialSource,
    /// Verification of VCD's TLS certificate.
    pub tls: TlsOptions,
    /// The API versions the client may use; the highest one VCD also offers
    /// wins.
    pub versions: VersionRange,
    /// Timeout of a TCP plus TLS connect.
    pub connect_timeout: Duration,
    /// Per HTTP request (task waits have their own deadline).
    pub request_timeout: Duration,
    /// Requests per second; `None` for no client-side limit.
    pub rate_limit: Option<f64>,
    /// Retries of failed requests.
    pub retry: RetryPolicy,
    /// Polling of VCD tasks.
    pub tasks: TaskPolicy,
    /// Log in again this long before the token expires (at most a tenth of
    /// the token's lifetime).
    pub token_refresh_margin: Duration,
    /// The most the client reads of one answer.
    pub body_limits: BodyLimits,
    /// Whether VCD answers, noted by every request.
    pub reachability: Reachability,
    /// How one-time refresh tokens (service accounts) are exchanged and
    /// stored; `None`: the token is only read, never written back.
    pub rotation: Option<Arc<Rotation>>,
    /// Refuse every request but reads (logins aside), before it is sent:
    /// `vcd-ccm plan` looks and never touches.
    pub read_only: bool,
}

/// How much of an answer the client reads before it gives up: a proxy or a
/// VCD sending without end cannot exhaust the process's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// An answer about one object (and errors, tasks, logins).
    pub object: usize,
    /// A collection: one page of a list (up to 128 items), or a vApp
    /// with every VM (thousands of VMs in one vApp reach tens of MiB).
    pub collection: usize,
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self {
            object: 4 << 20,
            collection: 64 << 20,
        }
    }
}

impl ClientConfig {
    /// A configuration of `org` at `host` with every other knob at its
    /// default: API versions 36.0–39.1, a 10 s connect and a 60 s request
    /// timeout, no rate limit, the default [`RetryPolicy`] and [`TaskPolicy`],
    /// a 120 s token refresh margin and the default [`BodyLimits`] (4 MiB
    /// per object, 64 MiB per collection).
    pub fn new(
        host: impl Into<String>,
        org: impl Into<String>,
        credentials: CredentialSource,
    ) -> Self {
        Self {
            host: host.into(),
            org: org.into(),
            credentials,
            tls: TlsOptions::default(),
            versions: VersionRange::default(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            rate_limit: None,
            retry: RetryPolicy::default(),
            tasks: TaskPolicy::default(),
            token_refresh_margin: Duration::from_secs(120),
            body_limits: BodyLimits::default(),
            reachability: Reachability::default(),
            rotation: None,
            read_only: false,
        }
    }
}

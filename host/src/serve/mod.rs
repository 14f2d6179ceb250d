//! The health and metrics server: `/healthz` (and `/healthz/<check>`),
//! `/readyz`, `/metrics` and captured policy inputs
//! (`/policy/captures[/<namespace>/<name>]`), over HTTPS on port 10258 as
//! upstream, or plain HTTP for local runs.
//!
//! Checks are closures supplied by the caller (leader election health, VCD
//! reachability, …), so this module knows nothing of Kubernetes or VCD.
//! Answers follow the apiserver's healthz format: `ok`, or one line per check
//! (`[+]name ok` / `[-]name failed: reason`) and a closing line, with 500.

mod access;
mod check_metrics;
mod conn;
mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use self::access::{Authorize, Verdict};
pub use self::check_metrics::CHECK_METRIC;
pub use self::conn::{HEADER_READ_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS};
pub use self::tls::Certificate;
/// Upstream's `--secure-port` default (`CloudControllerManagerPort`).
pub const DEFAULT_SECURE_PORT: u16 = 10258;

/// The `Content-Type` of `/metrics` answers.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long [`Server::stop`] lets open requests finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The metrics registry the server encodes on every scrape; metrics may be
/// registered after the server has started.
pub type SharedRegistry = Arc<RwLock<Registry>>;

/// How the port is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// TLS with this certificate; requests are authorized when an [`Authorize`] is given.
    Https(Certificate),
    /// Plain HTTP, for local runs and the demo.
    Http,
}

/// Where and how to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Address and port to bind; port 0 picks a free one.
    pub listen: SocketAddr,
    /// HTTPS or plain HTTP.
    pub transport: Transport,
}

impl Default for ServeConfig {
    /// `0.0.0.0:10258`, HTTPS with a self-signed certificate: upstream's defaults.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([0, 0, 0, 0], DEFAULT_SECURE_PORT)),
            transport: Transport::Https(Certificate::SelfSigned),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound (in use, or not this host's).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// `--tls-cert-file` is unreadable or holds no certificate.
    #[error("cannot read the TLS certificate file {}: {reason}", path.display())]
    CertificateFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// `--tls-private-key-file` is unreadable or holds no key (the key itself is never shown).
    #[error("cannot read the TLS private key file {}: {reason}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The key does not belong to the certificate, or is of a kind TLS cannot use.
    #[error("the TLS certificate {} and key {} cannot be used together: {source}", cert.display(), key.display())]
    KeyPair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        source: tokio_rustls::rustls::Error,
    },
    /// Generating the self-signed certificate failed.
    #[error("cannot generate the self-signed serving certificate: {0}")]
    SelfSigned(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("cannot configure TLS: {0}")]
    Tls(#[source] tokio_rustls::rustls::Error),
}

/// A named check; `Err` carries the reason shown on the failing line.
#[derive(Clone)]
pub struct Check {
    name: Arc<str>,
    run: Arc<dyn Fn() -> Result<(), String> + Send + Sync>,
}

impl Check {
    /// A check named `name` (the `/healthz/<name>` path and the line label).
    pub fn new(name: &str, run: impl Fn() -> Result<(), String> + Send + Sync + 'static) -> Check {
        Check {
            name: Arc::from(name),
            run: Arc::new(run),
        }
    }

    /// The check's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn outcome(&self) -> (String, Result<(), String>) {
        (self.name.to_string(), (self.run)())
    }
}

/// What `/healthz` and `/readyz` consult.
#[derive(Clone, Default)]
pub struct Probes {
    /// `/healthz`: e.g. `leaderElection`, the leader's renewal.
    pub health: Vec<Check>,
    /// `/readyz`: e.g. `informer-sync` (the controllers' caches) and `vcd`.
    pub ready: Vec<Check>,
}

/// Where captured policy inputs come from (the policy registry in production).
pub trait CaptureSource: Send + Sync {
    /// The captured Services, one `namespace/name` per line.
    fn list(&self) -> String;
    /// One Service's capture as a suite file.
    fn suite(&self, namespace: &str, name: &str) -> Option<String>;
}

#[derive(Clone)]
struct AppState {
    probes: Arc<Probes>,
    metrics: SharedRegistry,
    captures: Option<Arc<dyn CaptureSource>>,
}

/// A running server; dropping it stops it too, without waiting.
pub struct Server {
    addr: SocketAddr,
    scheme: &'static str,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Server {
    /// The bound address (the actual port when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://<bound address>` or `http://…`.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stops accepting, lets open requests finish for a few seconds, and
    /// releases the port.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(STOP_GRACE, &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Binds `config.listen` and serves until the returned [`Server`] is stopped.
/// With `access`, every request must be authorized by it first; without
/// `captures`, the capture paths are 404. Registers [`CHECK_METRIC`], the
/// probes' checks, in `metrics`.
pub async fn start(
    config: ServeConfig,
    probes: Probes,
    metrics: SharedRegistry,
    access: Option<Arc<dyn Authorize>>,
    captures: Option<Arc<dyn CaptureSource>>,
) -> Result<Server, ServeError> {
    let bind_error = |source| ServeError::Bind {
        addr: config.listen,
        source,
    };
    // The certificate is checked before the port is taken.
    let acceptor = match &config.transport {
        Transport::Https(certificate) => Some(tls::acceptor(certificate, config.listen)?),
        Transport::Http => None,
    };
    let tcp = TcpListener::bind(config.listen).await.map_err(bind_error)?;
    let addr = tcp.local_addr().map_err(bind_error)?;
    let probes = Arc::new(probes);
    metrics
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .register_collector(Box::new(check_metrics::CheckCollector(probes.clone())));
    let mut app = router(AppState {
        probes,
        metrics,
        captures,
    });
    if let Some(access) = access {
        // On the routes only: any other path is 404 at once, without a
        // review, so random paths cost the API server nothing.
        app = app.route_layer(axum::middleware::from_fn_with_state(access, access::guard));
    }
    let (shutdown, signal) = oneshot::channel::<()>();
    let signal = async {
        let _ = signal.await;
    };
    let (scheme, task) = match acceptor {
        Some(acceptor) => {
            let listener = tls::TlsListener::new(tcp, acceptor).map_err(bind_error)?;
            let served = axum::serve(listener, app).with_graceful_shutdown(signal);
            ("https", tokio::spawn(log_exit(served.into_future())))
        }
        None => {
            let served =
                axum::serve(conn::PlainListener::new(tcp), app).with_graceful_shutdown(signal);
            ("http", tokio::spawn(log_exit(served.into_future())))
        }
    };
    tracing::info!(%addr, scheme, "serving /healthz, /readyz and /metrics");
    Ok(Server {
        addr,
        scheme,
        shutdown: Some(shutdown),
        task: Some(task),
    })
}

async fn log_exit(served: impl Future<Output = std::io::Result<()>>) {
    if let Err(error) = served.await {
        tracing::error!(%error, "the health and metrics server stopped");
    }
}

fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/healthz/{check}", get(healthz_one))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/policy/captures", get(capture_list))
        .route("/policy/captures/{namespace}/{name}", get(capture_one))
        .with_state(state)
}

async fn capture_list(State(state): State<AppState>) -> Response {
    match &state.captures {
        Some(captures) => (StatusCode::OK, captures.list()).into_response(),
        None => no_captures(),
    }
}

async fn capture_one(
    State(state): State<AppState>,
    Path((namespace, name)): Path<(String, String)>,
) -> Response {
    let Some(captures) = &state.captures else {
        return no_captures();
    };
    match captures.suite(&namespace, &name) {
        Some(suite) => ([(header::CONTENT_TYPE, "application/yaml")], suite).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            format!(
                "no capture for Service {namespace}/{name}: annotate it vcd-ccm.io/capture-policy-input=true and wait for its next reconcile\n"
            ),
        )
            .into_response(),
    }
}

fn no_captures() -> Response {
    (
        StatusCode::NOT_FOUND,
        "this process decides for no Service: nothing is captured\n",
    )
        .into_response()
}

async fn healthz(State(state): State<AppState>) -> Response {
    let outcomes = state.probes.health.iter().map(Check::outcome).collect();
    report("healthz", outcomes)
}

async fn healthz_one(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    match state
        .probes
        .health
        .iter()
        .find(|check| check.name() == name)
    {
        Some(check) => report("healthz", vec![check.outcome()]),
        None => (
            StatusCode::NOT_FOUND,
            format!("no health check named {name}\n"),
        )
            .into_response(),
    }
}

async fn readyz(State(state): State<AppState>) -> Response {
    let outcomes = state.probes.ready.iter().map(Check::outcome).collect();
    report("readyz", outcomes)
}

/// `ok` when every check passed, else every check's line and a 500.
fn report(endpoint: &str, outcomes: Vec<(String, Result<(), String>)>) -> Response {
    if outcomes.iter().all(|(_, outcome)| outcome.is_ok()) {
        return (StatusCode::OK, "ok").into_response();
    }
    let mut body = String::new();
    for (name, outcome) in &outcomes {
        match outcome {
            Ok(()) => body += &format!("[+]{name} ok\n"),
            Err(reason) => body += &format!("[-]{name} failed: {reason}\n"),
        }
    }
    body += &format!("{endpoint} check failed\n");
    (StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
}

async fn metrics(State(state): State<AppState>) -> Response {
    let mut body = String::new();
    let encoded = {
        let registry = state.metrics.read().unwrap_or_else(|p| p.into_inner());
        prometheus_client::encoding::text::encode(&mut body, &registry)
    };
    match encoded {
        Ok(()) => ([(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], body).into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot encode the metrics");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot encode the metrics\n",
            )
                .into_response()
        }
    }
}

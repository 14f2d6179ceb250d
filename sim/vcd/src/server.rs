//! The running simulator: an HTTP server on a loopback port plus a handle
//! that reads and steers the world in-process, like vcsim's model access.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::response::IntoResponse;
use axum::serve::Listener;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::ApiError;
use crate::faults::FaultRule;
use crate::knobs::Knobs;
use crate::observe::LogEntry;
use crate::scenario::{Scenario, ScenarioError};
use crate::seed::{Credentials, build_world, credentials};
use crate::state::{AppState, SimState};
use crate::tls::{TestPki, TlsError, TlsListener};
use crate::world::World;
use crate::{api, middleware};

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("cannot listen or write a file: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// How to start a simulator beyond its scenario.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    pub knobs: Knobs,
    /// Append every logged request to this JSONL file too.
    pub request_log: Option<PathBuf>,
    /// Serve HTTPS with a certificate signed by a CA generated at start
    /// (see [`Sim::ca_pem`]) instead of plain HTTP.
    pub tls: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            knobs: Knobs::default(),
            request_log: None,
            tls: false,
        }
    }
}

pub struct Sim {
    state: AppState,
    addr: SocketAddr,
    tenant: Option<Credentials>,
    system: Option<Credentials>,
    ca_pem: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
}

/// Serves `router` on `listener` until `signal` fires.
fn spawn_server<L>(listener: L, router: Router, signal: oneshot::Receiver<()>) -> JoinHandle<()>
where
    L: Listener,
    L::Addr: std::fmt::Debug,
{
    tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                signal.await.ok();
            })
            .await;
        if let Err(error) = served {
            tracing::error!(%error, "vcdsim server stopped");
        }
    })
}

async fn no_route() -> axum::response::Response {
    ApiError::unknown_path().into_response()
}

fn app(state: AppState) -> Router {
    api::router()
        .route_layer(from_fn_with_state(state.clone(), middleware::route))
        .merge(api::admin_router())
        .fallback(no_route)
        .layer(from_fn_with_state(state.clone(), middleware::observe))
        .with_state(state)
}

impl Sim {
    /// Starts on `127.0.0.1:0` with default knobs.
    pub async fn start(scenario: Scenario) -> Result<Self, SimError> {
        Self::start_with(scenario, Options::default()).await
    }

    pub async fn from_yaml(yaml: &str) -> Result<Self, SimError> {
        Self::start(Scenario::from_yaml(yaml)?).await
    }

    pub async fn start_with(scenario: Scenario, options: Options) -> Result<Self, SimError> {
        let world = build_world(&scenario)?;
        let listener = tokio::net::TcpListener::bind(options.listen).await?;
        let addr = listener.local_addr()?;
        let pki = options.tls.then(TestPki::generate).transpose()?;
        let scheme = if pki.is_some() { "https" } else { "http" };
        let state = Arc::new(SimState::new(
            world,
            options.knobs,
            format!("{scheme}://{addr}"),
        ));
        if let Some(path) = &options.request_log {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            state.log().sink = Some(file);
        }
        let (shutdown, signal) = oneshot::channel::<()>();
        let router = app(state.clone());
        let ca_pem = pki.as_ref().map(|p| p.ca_pem.clone());
        let server = match pki {
            Some(pki) => spawn_server(
                TlsListener {
                    tcp: listener,
                    acceptor: pki.acceptor,
                },
                router,
                signal,
            ),
            None => spawn_server(listener, router, signal),
        };
        let (tenant, system) = credentials(&scenario);
        Ok(Self {
            state,
            addr,
            tenant,
            system,
            ca_pem,
            shutdown: Some(shutdown),
            server: Some(server),
        })
    }

    /// `http://127.0.0.1:PORT`, or `https://…` with [`Options::tls`].
    pub fn base_url(&self) -> &str {
        &self.state.base_url
    }

    /// The PEM of the CA that signed the server certificate, when serving HTTPS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The first user of the first tenant org in the scenario.
    pub fn tenant(&self) -> Option<&Credentials> {
        self.tenant.as_ref()
    }

    /// The first system administrator in the scenario.
    pub fn system(&self) -> Option<&Credentials> {
        self.system.as_ref()
    }

    /// Reads or changes the world directly (the lock is held during `f`).
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        f(&mut self.state.world())
    }

    /// The whole world as JSON, as `/_sim/state` returns it.
    pub fn dump(&self) -> Value {
        serde_json::to_value(&*self.state.world()).unwrap_or_default()
    }

    /// Replaces the world with a [`Sim::dump`] taken from a simulator of
    /// the same scenario (so logins work alike): the objects another
    /// program left, such as an earlier release's. Sessions and gateway
    /// cool-downs are not carried over.
    pub fn restore(&self, dump: Value) -> Result<(), serde_json::Error> {
        let mut world: World = serde_json::from_value(dump)?;
        for gateway in &mut world.gateways {
            gateway.busy = None;
        }
        *self.state.world() = world;
        Ok(())
    }

    pub fn knobs(&self) -> Knobs {
        self.state.knobs()
    }

    pub fn set_knobs(&self, f: impl FnOnce(&mut Knobs)) {
        f(&mut self.state.knobs_mut());
    }

    pub fn add_fault(&self, rule: FaultRule) {
        self.state.faults().rules.push(rule);
    }

    /// The rules in force, with how often each matched and fired.
    pub fn faults(&self) -> Vec<FaultRule> {
        self.state.faults().rules.clone()
    }

    pub fn clear_faults(&self) {
        self.state.faults().rules.clear();
    }

    /// Removes the rules in force and returns them with their counts, so a
    /// test can show that what it injected fired.
    pub fn take_faults(&self) -> Vec<FaultRule> {
        std::mem::take(&mut self.state.faults().rules)
    }

    pub fn requests(&self) -> Vec<LogEntry> {
        self.state.log().entries.clone()
    }

    pub fn requests_jsonl(&self) -> String {
        self.state.log().jsonl()
    }

    /// Calls per `METHOD /route/{template}`.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        self.state.log().counters.clone()
    }

    pub fn count(&self, key: &str) -> u64 {
        self.state.log().counters.get(key).copied().unwrap_or(0)
    }

    /// Clears the request log and the counters.
    pub fn reset_log(&self) {
        self.state.log().reset();
    }

    /// Stops serving and waits for the server to finish.
    pub async fn shutdown(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
        if let Some(server) = self.server.take() {
            server.await.ok();
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
    }
}

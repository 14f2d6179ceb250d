//! The library entry point: start a server, get clients, seed and inspect objects,
//! and inject faults.

use crate::access::{self, Tokens};
use crate::error::SimError;
use crate::faults::Faults;
use crate::http::{self, AppState, RequestLog, RequestRecord};
use crate::kubeconfig;
use crate::resources::{self, ResourceType};
use crate::store::{DEFAULT_HISTORY, ListOptions, Store};
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Namespaces every cluster starts with.
const INITIAL_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Settings for [`KubeSim::start_with`].
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// How many past changes a watch can resume across before 410 Gone.
    pub history: usize,
    /// How often watches that allow bookmarks receive one.
    pub bookmark_interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            history: DEFAULT_HISTORY,
            bookmark_interval: Duration::from_secs(60),
        }
    }
}

/// A running API server. Dropping it stops accepting connections.
pub struct KubeSim {
    addr: SocketAddr,
    store: Arc<Store>,
    faults: Faults,
    log: RequestLog,
    tokens: Tokens,
    server: JoinHandle<()>,
}

impl Drop for KubeSim {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The served resource for a typed kube-rs object.
fn resource_of<K: kube::Resource<DynamicType = ()>>()
-> Result<&'static resources::ResourceType, SimError> {
    let api_version = K::api_version(&());
    let kind = K::kind(&());
    resources::by_kind(&api_version, &kind)
        .ok_or_else(|| SimError::Unsupported(format!("{api_version} {kind}")))
}

impl KubeSim {
    /// Starts on 127.0.0.1 with a free port and default settings.
    pub async fn start() -> Result<Self, SimError> {
        Self::start_with(Config::default()).await
    }

    pub async fn start_with(config: Config) -> Result<Self, SimError> {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| SimError::Bind {
                addr: config.listen.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SimError::Bind {
            addr: config.listen.to_string(),
            source,
        })?;
        let store = Arc::new(Store::new(config.history));
        seed_cluster(&store)?;
        let state = AppState {
            store: Arc::clone(&store),
            faults: Faults::default(),
            log: RequestLog::default(),
            bookmark_interval: config.bookmark_interval,
            server_address: addr.to_string(),
            tokens: Tokens::default(),
        };
        let (faults, log, tokens) = (
            state.faults.clone(),
            state.log.clone(),
            state.tokens.clone(),
        );
        let app = http::router(state);
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "kubesim server stopped");
            }
        });
        Ok(Self {
            addr,
            store,
            faults,
            log,
            tokens,
            server,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kube client for this server, with `default` as its default namespace.
    pub fn client(&self) -> Result<kube::Client, SimError> {
        let uri = self
            .url()
            .parse()
            .map_err(|e| SimError::Uri(format!("{e}")))?;
        let config = kube::Config::new(uri);
        Ok(kube::Client::try_from(config)?)
    }

    pub fn kubeconfig(&self) -> String {
        kubeconfig::render(&self.url())
    }

    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), SimError> {
        std::fs::write(path, self.kubeconfig()).map_err(|source| SimError::Kubeconfig {
            path: path.display().to_string(),
            source,
        })
    }

    /// Fault hooks for this server.
    /// Makes TokenReview accept `token` as `username` in `groups` (plus
    /// `system:authenticated`).
    pub fn add_token(&self, token: &str, username: &str, groups: &[&str]) {
        let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        groups.push("system:authenticated".into());
        self.tokens.add(
            token,
            UserInfo {
                username: Some(username.into()),
                uid: Some(uuid::Uuid::new_v4().to_string()),
                groups: Some(groups),
                extra: None,
            },
        );
    }

    /// A new token of the ServiceAccount `namespace/name`, as TokenRequest
    /// would issue (the ServiceAccount object itself is not modelled).
    pub fn service_account_token(&self, namespace: &str, name: &str) -> String {
        let token = format!("kubesim-{}", uuid::Uuid::new_v4().simple());
        self.tokens
            .add(&token, access::service_account_user(namespace, name));
        token
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Requests answered so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.log.snapshot()
    }

    pub fn clear_requests(&self) {
        self.log.clear();
    }

    /// Drops the change history so older resourceVersions get 410 Gone.
    pub fn compact(&self) {
        self.store.compact();
    }

    /// The newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.store.revision()
    }

    /// Creates an object given as JSON with `apiVersion` and `kind`, like a POST.
    pub fn seed(&self, object: Value) -> Result<Value, SimError> {
        let (resource, namespace) = placement(&object)?;
        Ok(self
            .store
            .create(resource, namespace.as_deref(), object, false)?
            .object)
    }

    /// Puts an object back as a backup of another cluster's API server holds
    /// it (uid, finalizers and status kept), replacing one of that name:
    /// for tests that start from a state another program left.
    pub fn restore(&self, object: Value) -> Result<Value, SimError> {
        let (resource, namespace) = placement(&object)?;
        Ok(self.store.restore(resource, namespace.as_deref(), object)?)
    }

    /// Creates a typed object, like [`KubeSim::seed`].
    pub fn seed_typed<K>(&self, object: &K) -> Result<K, SimError>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let mut value = serde_json::to_value(object)?;
        value["apiVersion"] = json!(K::api_version(&()));
        value["kind"] = json!(K::kind(&()));
        Ok(serde_json::from_value(self.seed(value)?)?)
    }

    /// Reads an object straight from the store (no HTTP), in served form.
    pub fn get_typed<K>(&self, namespace: Option<&str>, name: &str) -> Result<Option<K>, SimError>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        let resource = resource_of::<K>()?;
        match self.store.get(resource, namespace, name) {
            Ok(value) => Ok(Some(serde_json::from_value(value)?)),
            Err(crate::error::ApiError::NotFound(_)) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }

    /// Lists objects straight from the store; `None` means every namespace.
    pub fn list_typed<K>(&self, namespace: Option<&str>) -> Result<Vec<K>, SimError>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        let resource = resource_of::<K>()?;
        let options = ListOptions {
            namespace: namespace.map(str::to_string),
            ..ListOptions::default()
        };
        let list = self.store.list(resource, &options)?;
        let items = list
            .get("items")
            .cloned()
            .unwrap_or(Value::Array(Vec::new()));
        Ok(serde_json::from_value(items)?)
    }
}

/// The objects a fresh cluster has: the standard namespaces and `default/kubernetes`.
fn seed_cluster(store: &Store) -> Result<(), SimError> {
    let namespaces = resources::find("", "v1", "namespaces")
        .ok_or_else(|| SimError::Unsupported("namespaces".into()))?;
    for name in INITIAL_NAMESPACES {
        store.create(namespaces, None, json!({"metadata": {"name": name}}), false)?;
    }
    let services = resources::find("", "v1", "services")
        .ok_or_else(|| SimError::Unsupported("services".into()))?;
    let kubernetes = json!({
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]},
    });
    store.create(services, Some("default"), kubernetes, false)?;
    Ok(())
}

/// The resource of an object given as JSON with `apiVersion` and `kind`,
/// and its namespace (`default` for a namespaced one that names none).
fn placement(object: &Value) -> Result<(&'static ResourceType, Option<String>), SimError> {
    let field = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let resource = resources::by_kind(api_version, kind)
        .ok_or_else(|| SimError::Unsupported(format!("{api_version} {kind}")))?;
    let namespace = crate::object::namespace(object).map(str::to_string);
    Ok((
        resource,
        namespace.or_else(|| resource.namespaced.then(|| "default".to_string())),
    ))
}

//! The VCD client: one per process, cheap to clone. It negotiates the API
//! version, keeps the access token warm, and sends every request with the
//! right `Accept`, bearer and tenant-context headers, refreshing the token
//! once on a 401 and retrying what is safe to retry.

use std::sync::{Arc, OnceLock};

use reqwest::Method;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, IF_MATCH};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::auth::{Authenticator, Token, bearer};
use super::cache::LookupCache;
use super::config::ClientConfig;
use super::errors::{CallSite, VcdError};
use super::gateway_locks::GatewayLocks;
use super::metrics::ClientMetrics;
use super::retry::{Idempotency, with_retries};
use super::task_timing::TaskTimings;
use super::transport::{BodyKind, Reply, Transport};
use super::version::{ApiVersion, SupportedVersions, negotiate};

const TENANT_CONTEXT: &str = "x-vmware-vcloud-tenant-context";

/// Which of VCD's two APIs a path belongs to; they want different `Accept`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFamily {
    /// `/cloudapi/…`: `application/json;version=V`.
    CloudApi,
    /// `/api/…` in its JSON form: `application/*+json;version=V`.
    Legacy,
}

/// One logical request, before auth and retries.
#[derive(Debug, Clone)]
pub(in crate::vcd) struct ApiRequest {
    /// The logical operation, e.g. `get_gateway`: the metrics label, and the
    /// name errors and logs give the call.
    pub operation: &'static str,
    /// The HTTP method.
    pub method: Method,
    /// Path under the host, starting with `/`.
    pub path: String,
    /// Query parameters, in order; percent-encoded when the URL is built.
    pub query: Vec<(&'static str, String)>,
    /// Which API the path belongs to, which decides the `Accept` header.
    pub family: ApiFamily,
    /// A JSON body as text, sent with `Content-Type: application/json`.
    pub body: Option<String>,
    /// An ETag sent as `If-Match`: VCD refuses the write (412) if the object
    /// changed since.
    pub if_match: Option<String>,
    /// Whether a 5xx, reset or timeout may be retried; [`ApiRequest::new`]
    /// derives it from the method.
    pub idempotency: Idempotency,
    /// What the answer holds, which bounds how much of it is read.
    pub body_kind: BodyKind,
}

impl ApiRequest {
    /// A CloudAPI request. A POST counts as not idempotent, any other method
    /// as idempotent.
    pub fn new(operation: &'static str, method: Method, path: impl Into<String>) -> Self {
        let idempotency = if method == Method::POST {
            Idempotency::NotIdempotent
        } else {
            Idempotency::Idempotent
        };
        Self {
            operation,
            method,
            path: path.into(),
            query: Vec::new(),
            family: ApiFamily::CloudApi,
            body: None,
            if_match: None,
            idempotency,
            body_kind: BodyKind::Object,
        }
    }

    /// A CloudAPI GET.
    pub fn get(operation: &'static str, path: impl Into<String>) -> Self {
        Self::new(operation, Method::GET, path)
    }

    /// Appends the query parameter `name=value`.
    pub fn query(mut self, name: &'static str, value: impl ToString) -> Self {
        self.query.push((name, value.to_string()));
        self
    }

    /// Marks the path as one of the legacy API (`/api/…`, JSON form).
    pub fn legacy(mut self) -> Self {
        self.family = ApiFamily::Legacy;
        self
    }

    /// Marks the answer as a collection (a list page, a vApp with its VMs),
    /// which may be larger.
    pub fn collection(mut self) -> Self {
        self.body_kind = BodyKind::Collection;
        self
    }

    /// Sets the JSON body.
    pub fn json(self, body: Value) -> Self {
        self.encoded(body.to_string())
    }

    /// Sets a JSON body already serialised (see [`super::resources::encode`]).
    pub fn encoded(mut self, body: String) -> Self {
        self.body = Some(body);
        self
    }

    /// Sends `If-Match: etag`.
    pub fn if_match(mut self, etag: impl Into<String>) -> Self {
        self.if_match = Some(etag.into());
        self
    }
}

#[derive(Debug)]
struct Inner {
    transport: Transport,
    auth: Authenticator,
    version: ApiVersion,
    config: ClientConfig,
    /// The tenant org's URN, once known; sent by System-org sessions.
    tenant_context: OnceLock<String>,
    provider: bool,
    gateway_locks: GatewayLocks,
    task_timings: TaskTimings,
    cache: LookupCache,
}

/// A logged-in client of VCD, acting on one tenant org. Cheap to clone:
/// clones share the connection pool, the access token, the lookup cache
/// and the per-gateway write locks. The typed calls are its methods, in
/// [`resources`](super::resources).
#[derive(Debug, Clone)]
pub struct VcdClient {
    inner: Arc<Inner>,
}

impl VcdClient {
    /// Negotiates the API version and logs in, so configuration mistakes
    /// (host, TLS, credentials, versions) fail here, at start.
    pub async fn connect(config: ClientConfig, metrics: ClientMetrics) -> Result<Self, VcdError> {
        let transport = Transport::new(&config, metrics)?;
        let version = discover_version(&transport, &config).await?;
        tracing::info!(%version, host = %config.host, "negotiated the VCD API version");
        transport.metrics.negotiated(&version.to_string());
        let auth = Authenticator::new(
            config.credentials.clone(),
            config.token_refresh_margin,
            config.retry,
        )
        .with_rotation(config.rotation.clone());
        let provider = auth.token(&transport, version).await?.system;
        Ok(Self {
            inner: Arc::new(Inner {
                transport,
                auth,
                version,
                config,
                tenant_context: OnceLock::new(),
                provider,
                gateway_locks: GatewayLocks::default(),
                task_timings: TaskTimings::default(),
                cache: LookupCache::default(),
            }),
        })
    }

    /// The API version negotiated at connect, sent in every `Accept` header.
    pub fn api_version(&self) -> ApiVersion {
        self.inner.version
    }

    /// The configuration the client was connected with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    pub(crate) fn metrics(&self) -> &ClientMetrics {
        &self.inner.transport.metrics
    }

    pub(crate) fn gateway_locks(&self) -> &GatewayLocks {
        &self.inner.gateway_locks
    }

    pub(super) fn task_timings(&self) -> &TaskTimings {
        &self.inner.task_timings
    }

    pub(crate) fn cache(&self) -> &LookupCache {
        &self.inner.cache
    }

    /// A GET call site, for errors about a path rather than one request.
    pub(in crate::vcd) fn call_of(&self, operation: &'static str, path: &str) -> CallSite {
        CallSite::new(operation, Method::GET, path)
    }

    /// Whether the session is a System-org (provider) one.
    pub fn is_provider(&self) -> bool {
        self.inner.provider
    }

    /// Scopes System-org sessions to the tenant org (its URN).
    pub(crate) fn set_tenant_context(&self, org_urn: &str) {
        self.inner
            .tenant_context
            .get_or_init(|| org_urn.to_string());
    }

    pub(in crate::vcd) fn call_site(&self, request: &ApiRequest) -> (reqwest::Url, CallSite) {
        let mut url = self.inner.transport.url(&request.path);
        if !request.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &request.query {
                pairs.append_pair(name, value);
            }
        }
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let call = CallSite::new(request.operation, request.method.clone(), path);
        (url, call)
    }

    fn build(
        &self,
        request: &ApiRequest,
        url: reqwest::Url,
        token: &Token,
    ) -> Result<reqwest::RequestBuilder, VcdError> {
        let version = self.inner.version;
        let accept = match request.family {
            ApiFamily::CloudApi => format!("application/json;version={version}"),
            ApiFamily::Legacy => format!("application/*+json;version={version}"),
        };
        let mut builder = self
            .inner
            .transport
            .http
            .request(request.method.clone(), url)
            .header(ACCEPT, accept)
            .header(AUTHORIZATION, bearer(token)?);
        if token.system
            && let Some(org) = self.inner.tenant_context.get()
        {
            builder = builder.header(TENANT_CONTEXT, org.as_str());
        }
        if let Some(etag) = &request.if_match {
            builder = builder.header(IF_MATCH, etag.as_str());
        }
        if let Some(body) = &request.body {
            builder = builder
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        Ok(builder)
    }

    /// One attempt: with the cached token, and once more with a fresh one
    /// if VCD answers 401.
    async fn attempt(
        &self,
        request: &ApiRequest,
        url: &reqwest::Url,
        call: &CallSite,
    ) -> Result<Reply, VcdError> {
        let inner = &self.inner;
        let token = inner.auth.token(&inner.transport, inner.version).await?;
        let sent = inner
            .transport
            .send(
                call,
                self.build(request, url.clone(), &token)?,
                request.body_kind,
            )
            .await;
        match sent {
            Err(VcdError::Unauthorized { .. }) => {
                let fresh = inner
                    .auth
                    .refresh_rejected(&inner.transport, inner.version, &token)
                    .await?;
                inner
                    .transport
                    .send(
                        call,
                        self.build(request, url.clone(), &fresh)?,
                        request.body_kind,
                    )
                    .await
            }
            other => other,
        }
    }

    /// Sends `request` with auth and retries; a 2xx answer comes back as is.
    pub(in crate::vcd) async fn execute(&self, request: &ApiRequest) -> Result<Reply, VcdError> {
        let (url, call) = self.call_site(request);
        if self.inner.config.read_only && request.method != Method::GET {
            return Err(VcdError::ReadOnly { call });
        }
        with_retries(
            &self.inner.config.retry,
            self.metrics(),
            request.operation,
            request.idempotency,
            || self.attempt(request, &url, &call),
        )
        .await
    }

    pub(in crate::vcd) fn decode<T: DeserializeOwned>(
        &self,
        request: &ApiRequest,
        reply: &Reply,
    ) -> Result<T, VcdError> {
        serde_json::from_slice(&reply.body).map_err(|error| VcdError::Unexpected {
            call: self.call_site(request).1,
            detail: format!("cannot read the answer: {error}"),
        })
    }

    pub(in crate::vcd) async fn fetch<T: DeserializeOwned>(
        &self,
        request: ApiRequest,
    ) -> Result<T, VcdError> {
        let reply = self.execute(&request).await?;
        self.decode(&request, &reply)
    }
}

impl VcdClient {
    /// Whether VCD at `config.host` answers `GET /api/versions` with a
    /// version both speak, without logging in: how a standby that must not
    /// log in yet tells VCD is there.
    pub async fn answers(config: &ClientConfig, metrics: ClientMetrics) -> Result<(), VcdError> {
        let transport = Transport::new(config, metrics)?;
        discover_version(&transport, config).await.map(drop)
    }

    /// Asks VCD for its API versions (no login), once: all that matters is
    /// whether an answer comes, which [`Reachability`](super::Reachability)
    /// notes.
    pub async fn ping(&self) -> Result<(), VcdError> {
        self.versions().await.map(drop)
    }

    /// One `GET /api/versions` (no login, no retry), answer included.
    pub(in crate::vcd) async fn versions(&self) -> Result<Reply, VcdError> {
        let transport = &self.inner.transport;
        let call = versions_call();
        transport
            .send(&call, versions_request(transport, &call), BodyKind::Object)
            .await
    }
}

fn versions_call() -> CallSite {
    CallSite::new("get_versions", Method::GET, "/api/versions")
}

fn versions_request(transport: &Transport, call: &CallSite) -> reqwest::RequestBuilder {
    transport
        .http
        .get(transport.url(call.path()))
        .header(ACCEPT, "application/*+json")
}

/// `GET /api/versions` (no auth), then the best version in range.
async fn discover_version(
    transport: &Transport,
    config: &ClientConfig,
) -> Result<ApiVersion, VcdError> {
    let call = versions_call();
    let reply = with_retries(
        &config.retry,
        &transport.metrics,
        call.operation(),
        Idempotency::Idempotent,
        || transport.send(&call, versions_request(transport, &call), BodyKind::Object),
    )
    .await?;
    let supported: SupportedVersions =
        serde_json::from_slice(&reply.body).map_err(|error| VcdError::Unexpected {
            call,
            detail: format!("the version list is not JSON: {error}"),
        })?;
    let offered: Vec<String> = supported
        .version_info
        .into_iter()
        .map(|info| info.version)
        .collect();
    negotiate(&offered, config.versions)
}

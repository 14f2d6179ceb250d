//! One HTTP attempt: the shared reqwest client (rustls, connection reuse,
//! timeouts, TLS verification with an optional CA bundle), the optional rate
//! limit, per-request metrics, and the mapping of failures to typed errors.

use std::error::Error as _;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode, Url};

use super::config::{BodyLimits, ClientConfig};
use super::errors::{CallSite, VcdError, from_status};
use super::metrics::ClientMetrics;
use super::reachability::Reachability;
use crate::ratelimit::{Rate, RateLimiter};

/// A successful (2xx) answer, body read in full.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What an answer holds, which decides how much of it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// One object, a task, an error, a login.
    Object,
    /// A collection: a page of a list, or a vApp with all its VMs.
    Collection,
}

#[derive(Debug)]
pub struct Transport {
    pub http: reqwest::Client,
    base: Url,
    request_timeout: Duration,
    body_limits: BodyLimits,
    reachability: Reachability,
    limiter: Option<RateLimiter>,
    pub metrics: ClientMetrics,
}

fn read_ca_bundle(config: &ClientConfig) -> Result<Vec<reqwest::Certificate>, VcdError> {
    let Some(path) = &config.tls.ca_bundle else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(path).map_err(|error| {
        VcdError::TlsConfig(format!(
            "cannot read the CA bundle {}: {error}",
            path.display()
        ))
    })?;
    let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|error| {
        VcdError::TlsConfig(format!(
            "the CA bundle {} is not PEM: {error}",
            path.display()
        ))
    })?;
    if certificates.is_empty() {
        return Err(VcdError::TlsConfig(format!(
            "the CA bundle {} holds no certificate",
            path.display()
        )));
    }
    Ok(certificates)
}

impl Transport {
    pub fn new(config: &ClientConfig, metrics: ClientMetrics) -> Result<Self, VcdError> {
        let base = Url::parse(config.host.trim_end_matches('/')).map_err(|error| {
            VcdError::TlsConfig(format!(
                "the VCD host '{}' is not a URL: {error}",
                config.host
            ))
        })?;
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .user_agent(concat!("vcd-ccm/", env!("CARGO_PKG_VERSION")));
        for certificate in read_ca_bundle(config)? {
            builder = builder.add_root_certificate(certificate);
        }
        if config.tls.insecure {
            tracing::warn!(
                host = %base,
                "TLS certificate verification of VCD is OFF (insecure): anyone on the path can impersonate VCD and read the credentials; configure a CA bundle instead"
            );
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|error| {
            VcdError::TlsConfig(format!("cannot build the HTTP client: {error}"))
        })?;
        Ok(Self {
            http,
            base,
            request_timeout: config.request_timeout,
            body_limits: config.body_limits,
            reachability: config.reachability.clone(),
            limiter: config.rate_limit.and_then(|per_second| {
                // `vcd.requestsPerSecond` spaces requests evenly: no burst.
                RateLimiter::new(Rate {
                    per_second,
                    burst: 1,
                })
            }),
            metrics,
        })
    }

    /// The absolute URL of `path` (which starts with `/`) on the VCD host.
    pub fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        url.set_path(path);
        url.set_query(Some(query).filter(|q| !q.is_empty()));
        url
    }

    /// Sends one request and reads the whole answer, up to the limit of
    /// its kind; a non-2xx status is a typed error.
    pub async fn send(
        &self,
        call: &CallSite,
        request: RequestBuilder,
        kind: BodyKind,
    ) -> Result<Reply, VcdError> {
        if let Some(limiter) = &self.limiter {
            limiter.wait().await;
        }
        let started = Instant::now();
        let outcome = self.attempt(call, request, kind).await;
        self.reachability.note(&outcome);
        let label = match &outcome {
            Ok(_) => "ok",
            Err(error) => error.outcome(),
        };
        self.metrics
            .request(call.operation(), label, started.elapsed());
        outcome
    }

    async fn attempt(
        &self,
        call: &CallSite,
        request: RequestBuilder,
        kind: BodyKind,
    ) -> Result<Reply, VcdError> {
        let response = request.send().await.map_err(|e| self.classify(call, &e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = self.read_body(call, response, kind).await?;
        if status.is_success() {
            return Ok(Reply {
                status,
                headers,
                body,
            });
        }
        let retry_after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        Err(from_status(call.clone(), status, &body, retry_after))
    }

    /// The body, chunk by chunk, refused as soon as it is known to pass the
    /// limit (by its declared length, or by what has arrived).
    async fn read_body(
        &self,
        call: &CallSite,
        mut response: reqwest::Response,
        kind: BodyKind,
    ) -> Result<Vec<u8>, VcdError> {
        let (limit, what) = match kind {
            BodyKind::Object => (self.body_limits.object, "one object"),
            BodyKind::Collection => (
                self.body_limits.collection,
                "a collection (a list page, a vApp with its VMs)",
            ),
        };
        let too_large = || VcdError::ResponseTooLarge {
            call: call.clone(),
            limit,
            kind: what,
        };
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.classify(call, &e))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn classify(&self, call: &CallSite, error: &reqwest::Error) -> VcdError {
        if error.is_timeout() {
            return VcdError::Timeout {
                call: call.clone(),
                after: self.request_timeout,
            };
        }
        let mut detail = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            detail.push_str(": ");
            detail.push_str(&cause.to_string());
            source = cause.source();
        }
        let lower = detail.to_ascii_lowercase();
        if lower.contains("certificate") || lower.contains("unknownissuer") {
            VcdError::Tls {
                call: call.clone(),
                detail,
            }
        } else {
            VcdError::Transport {
                call: call.clone(),
                detail,
            }
        }
    }
}

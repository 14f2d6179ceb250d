//! Delegated authentication and authorization for the serving port, as the
//! Kubernetes components do it: a bearer token is checked with a
//! TokenReview (no token: `system:anonymous`), and the user is checked with
//! a SubjectAccessReview for the verb on the path. The always-allowed paths
//! (`--authorization-always-allow-paths`) and the group `system:masters`
//! skip the second step. Answers are cached for ten seconds, as upstream.
//!
//! The reviews go through a Kubernetes client of their own with its own
//! token bucket ([`ACCESS_RATE`]), as client-go's delegated authentication
//! does: anyone who reaches the port can make reviews happen, and they must
//! wait in their own queue, never ahead of the controllers' writes.

mod cache;

use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use self::cache::Cache;
use crate::ratelimit::{Rate, RateLimiter};
use crate::serve::{Authorize, Verdict};

/// Upstream's `--authorization-always-allow-paths` default.
pub const DEFAULT_ALWAYS_ALLOW_PATHS: [&str; 3] = ["/healthz", "/readyz", "/livez"];
/// The access client's own rate: reviews a flood of requests causes wait
/// here, not in the controllers' `--kube-api-qps` bucket. A few reviews a
/// second is plenty for probes and scrapers, whose answers are cached.
pub const ACCESS_RATE: Rate = Rate {
    per_second: 10.0,
    burst: 20,
};
/// How long an accepted token or an allowed request is remembered (upstream's 10 s).
pub const GRANT_TTL: Duration = Duration::from_secs(10);
/// How long a refused token or a denied request is remembered, so repeating
/// it costs no review.
pub const REFUSAL_TTL: Duration = Duration::from_secs(10);
/// Entries per cache; a full cache evicts the answer due soonest, so random
/// tokens or paths cannot grow memory.
pub const CACHE_CAPACITY: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct User {
    name: String,
    groups: Vec<String>,
}

impl User {
    fn anonymous() -> User {
        User {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
        }
    }
}

/// Delegated authorization of the HTTPS port, as Kubernetes components do it:
/// tokens checked by TokenReview, requests by SubjectAccessReview, answers
/// cached briefly.
pub struct Delegated {
    /// Not the controllers' client: its requests are paced by `limiter` only.
    client: Client,
    limiter: RateLimiter,
    always_allow: Vec<String>,
    /// By the token's SHA-256 (tokens themselves are not kept): the user,
    /// or `None` for a token the API server refused.
    tokens: Cache<[u8; 32], Option<User>>,
    decisions: Cache<(User, String, String), bool>,
    metrics: AccessMetrics,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReviewLabels {
    kind: &'static str,
    outcome: &'static str,
}

#[derive(Clone)]
struct AccessMetrics {
    reviews: Family<ReviewLabels, Counter>,
    waits: Histogram,
}

impl AccessMetrics {
    fn register(registry: &mut Registry) -> Self {
        let metrics = AccessMetrics {
            reviews: Family::default(),
            waits: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
        };
        registry.register(
            "vcd_ccm_access_reviews",
            "TokenReviews and SubjectAccessReviews made for the serving port, by kind and outcome",
            metrics.reviews.clone(),
        );
        registry.register(
            "vcd_ccm_access_rate_limiter_duration_seconds",
            "Time access reviews waited for the access client's own rate limit",
            metrics.waits.clone(),
        );
        metrics
    }

    fn reviewed(&self, kind: &'static str, outcome: &'static str) {
        self.reviews
            .get_or_create(&ReviewLabels { kind, outcome })
            .inc();
    }
}

impl Delegated {
    /// `client`: a client for the reviews alone, without a rate limit of
    /// its own (it is paced at [`ACCESS_RATE`] here); `always_allow`:
    /// paths, or prefixes ending in `*`, served to anyone. The metrics are
    /// registered in `registry`.
    pub fn new(client: Client, always_allow: Vec<String>, registry: &mut Registry) -> Delegated {
        Delegated {
            client,
            limiter: RateLimiter::new(ACCESS_RATE).expect("ACCESS_RATE is a valid rate"),
            always_allow,
            tokens: Cache::new(CACHE_CAPACITY),
            decisions: Cache::new(CACHE_CAPACITY),
            metrics: AccessMetrics::register(registry),
        }
    }

    /// Waits for this review's turn in the access client's bucket.
    async fn paced(&self) {
        let at = self.limiter.reserve();
        self.metrics
            .waits
            .observe(at.saturating_duration_since(Instant::now()).as_secs_f64());
        tokio::time::sleep_until(at).await;
    }

    async fn decide(&self, token: Option<&str>, verb: &str, path: &str) -> Verdict {
        let user = match token {
            None => User::anonymous(),
            Some(token) => match self.authenticate(token).await {
                Ok(Some(user)) => user,
                Ok(None) => return Verdict::Unauthenticated,
                Err(error) => return Verdict::Failed(format!("TokenReview: {error}")),
            },
        };
        if self.always_allowed(path) || user.groups.iter().any(|g| g == "system:masters") {
            return Verdict::Allow;
        }
        match self.allowed(&user, verb, path).await {
            Ok(true) => Verdict::Allow,
            Ok(false) => Verdict::Forbidden { user: user.name },
            Err(error) => Verdict::Failed(format!("SubjectAccessReview: {error}")),
        }
    }

    fn always_allowed(&self, path: &str) -> bool {
        self.always_allow
            .iter()
            .any(|allowed| match allowed.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => allowed == path,
            })
    }

    async fn authenticate(&self, token: &str) -> Result<Option<User>, kube::Error> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(user) = self.tokens.get(&key) {
            return Ok(user);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                ..TokenReviewSpec::default()
            },
            ..TokenReview::default()
        };
        self.paced().await;
        let answered = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .inspect_err(|_| self.metrics.reviewed("token_review", "error"))?;
        let status = answered.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => Some(User {
                name: user.username.unwrap_or_default(),
                groups: user.groups.unwrap_or_default(),
            }),
            _ => None,
        };
        let (outcome, ttl) = match user {
            Some(_) => ("authenticated", GRANT_TTL),
            None => ("unauthenticated", REFUSAL_TTL),
        };
        self.metrics.reviewed("token_review", outcome);
        self.tokens.put(key, user.clone(), ttl);
        Ok(user)
    }

    async fn allowed(&self, user: &User, verb: &str, path: &str) -> Result<bool, kube::Error> {
        let key = (user.clone(), verb.to_string(), path.to_string());
        if let Some(allowed) = self.decisions.get(&key) {
            return Ok(allowed);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                groups: Some(user.groups.clone()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some(verb.to_string()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        self.paced().await;
        let answered = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .inspect_err(|_| self.metrics.reviewed("subject_access_review", "error"))?;
        let allowed = answered.status.is_some_and(|status| status.allowed);
        let (outcome, ttl) = match allowed {
            true => ("allowed", GRANT_TTL),
            false => ("denied", REFUSAL_TTL),
        };
        self.metrics.reviewed("subject_access_review", outcome);
        self.decisions.put(key, allowed, ttl);
        Ok(allowed)
    }
}

impl Authorize for Delegated {
    fn authorize<'a>(
        &'a self,
        token: Option<&'a str>,
        verb: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Verdict> {
        Box::pin(self.decide(token, verb, path))
    }
}

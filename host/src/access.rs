//! Delegated authentication and authorization for the serving port, as the
//! Kubernetes components do it: a bearer token is checked with a
//! TokenReview (no token: `system:anonymous`), and the user is checked with
//! a SubjectAccessReview for the verb on the path. The always-allowed paths
//! (`--authorization-always-allow-paths`) and the group `system:masters`
//! skip the second step. Answers are cached for ten seconds, as upstream.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use sha2::{Digest, Sha256};

use crate::serve::{Authorize, Verdict};

/// Upstream's `--authorization-always-allow-paths` default.
pub const DEFAULT_ALWAYS_ALLOW_PATHS: [&str; 3] = ["/healthz", "/readyz", "/livez"];
const CACHE_TTL: Duration = Duration::from_secs(10);
/// Entries per cache: at this size the expired ones are dropped, and while
/// it is still full of live ones new answers are not cached, so a flood of
/// distinct tokens cannot grow memory.
const CACHE_CAPACITY: usize = 1024;

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
    client: Client,
    always_allow: Vec<String>,
    /// By the token's SHA-256 (tokens themselves are not kept): the user,
    /// or `None` for a token the API server refused.
    tokens: Cache<[u8; 32], Option<User>>,
    decisions: Cache<(User, String, String), bool>,
}

impl Delegated {
    /// `always_allow`: paths, or prefixes ending in `*`, served to anyone.
    pub fn new(client: Client, always_allow: Vec<String>) -> Delegated {
        Delegated {
            client,
            always_allow,
            tokens: Cache::default(),
            decisions: Cache::default(),
        }
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
        let answered = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let status = answered.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => Some(User {
                name: user.username.unwrap_or_default(),
                groups: user.groups.unwrap_or_default(),
            }),
            _ => None,
        };
        self.tokens.put(key, user.clone());
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
        let answered = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let allowed = answered.status.is_some_and(|status| status.allowed);
        self.decisions.put(key, allowed);
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

/// Answers kept for [`CACHE_TTL`].
struct Cache<K, V>(Mutex<HashMap<K, (V, Instant)>>);

impl<K, V> Default for Cache<K, V> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Cache<K, V> {
    fn get(&self, key: &K) -> Option<V> {
        let entries = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (value, stored) = entries.get(key)?;
        (stored.elapsed() < CACHE_TTL).then(|| value.clone())
    }

    fn put(&self, key: K, value: V) {
        let mut entries = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CACHE_CAPACITY {
            entries.retain(|_, (_, stored)| stored.elapsed() < CACHE_TTL);
            if entries.len() >= CACHE_CAPACITY {
                return;
            }
        }
        entries.insert(key, (value, Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_cache_of_live_answers_caches_no_more() {
        let cache: Cache<usize, bool> = Cache::default();
        for key in 0..CACHE_CAPACITY {
            cache.put(key, true);
        }
        cache.put(CACHE_CAPACITY, true);
        assert_eq!(cache.get(&CACHE_CAPACITY), None);
        assert_eq!(cache.get(&0), Some(true), "live answers stay");
    }

    #[test]
    fn expired_answers_make_room() {
        let cache: Cache<usize, bool> = Cache::default();
        let expired = Instant::now() - CACHE_TTL;
        cache
            .0
            .lock()
            .unwrap()
            .extend((0..CACHE_CAPACITY).map(|k| (k, (true, expired))));
        assert_eq!(cache.get(&0), None, "expired");
        cache.put(CACHE_CAPACITY, false);
        assert_eq!(cache.get(&CACHE_CAPACITY), Some(false));
        assert_eq!(cache.0.lock().unwrap().len(), 1);
    }
}

//! Components of `image` entries as the CCM gets them: from the cache when
//! their digest was pulled before, else pulled with the credentials of the
//! entry's `pullSecret`, read through the Kubernetes API.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use super::auth::{AuthConfigError, Credentials, DockerConfig};
use super::cache::PullCache;
use super::errors::RegistryError;
use super::pull::{Pulled, pull};
use super::reference::Reference;
use super::runtime::on_registry_runtime;
use crate::text::sanitize;

/// The Secret type a `pullSecret` must have.
pub const PULL_SECRET_TYPE: &str = "kubernetes.io/dockerconfigjson";
/// The key of its Docker config.
pub const PULL_SECRET_KEY: &str = ".dockerconfigjson";

/// Why an image entry's component could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The registry exchange failed, or what came failed a check.
    #[error("pulling {reference}: {source}")]
    Registry {
        /// The reference pulled.
        reference: String,
        /// What failed.
        #[source]
        source: RegistryError,
    },
    /// The `pullSecret` cannot be read or used.
    #[error("pullSecret {namespace}/{name}: {problem}")]
    Secret {
        /// The CCM's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// What is wrong, never its data.
        problem: String,
    },
    /// The Secret's Docker config is not usable.
    #[error(transparent)]
    Credentials(#[from] AuthConfigError),
    /// The requests could not run.
    #[error("{0}")]
    Runtime(String),
}

/// Where `pullSecret`s are read: the CCM's namespace through its client.
#[derive(Clone)]
pub struct SecretReader {
    /// The CCM's client.
    pub client: kube::Client,
    /// The namespace the Secrets are in.
    pub namespace: String,
}

/// Image components for the policy directory's loads.
#[derive(Default)]
pub struct ImageSource {
    secrets: Option<SecretReader>,
    cache: PullCache,
}

impl ImageSource {
    /// A source that reads `pullSecret`s with `secrets`.
    pub fn new(secrets: SecretReader) -> ImageSource {
        ImageSource {
            secrets: Some(secrets),
            cache: PullCache::default(),
        }
    }

    /// The component `reference` pins: cached, or pulled and then cached.
    pub async fn component(
        &self,
        reference: &Reference,
        pull_secret: Option<&str>,
    ) -> Result<Arc<Pulled>, PullError> {
        let digest = reference.digest.as_deref().unwrap_or_default();
        if let Some(pulled) = self.cache.get(digest) {
            return Ok(pulled);
        }
        let credentials = match pull_secret {
            Some(name) => self.credentials(name, &reference.registry).await?,
            None => None,
        };
        let owned = reference.clone();
        let pulled = on_registry_runtime(async move { pull(&owned, credentials).await })
            .await
            .map_err(PullError::Runtime)?
            .map_err(|source| PullError::Registry {
                reference: reference.to_string(),
                source,
            })?;
        let pulled = Arc::new(pulled);
        self.cache.insert(pulled.clone());
        Ok(pulled)
    }

    /// Forgets the components of digests no entry names any more.
    pub fn retain(&self, in_use: &[String]) {
        self.cache.retain(in_use);
    }

    /// How many components are cached.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    async fn credentials(
        &self,
        name: &str,
        registry: &str,
    ) -> Result<Option<Credentials>, PullError> {
        let Some(reader) = self.secrets.clone() else {
            return Err(PullError::Secret {
                namespace: "-".into(),
                name: name.into(),
                problem: "this process has no Kubernetes client to read it with".into(),
            });
        };
        let secret_error = |problem: String| PullError::Secret {
            namespace: reader.namespace.clone(),
            name: name.to_string(),
            problem,
        };
        let api: Api<Secret> = Api::namespaced(reader.client.clone(), &reader.namespace);
        let owned = name.to_string();
        let secret = on_registry_runtime(async move { api.get_opt(&owned).await })
            .await
            .map_err(PullError::Runtime)?
            .map_err(|e| {
                secret_error(format!("cannot be read: {}", sanitize(&e.to_string(), 256)))
            })?
            .ok_or_else(|| {
                secret_error(format!(
                    "does not exist; create a {PULL_SECRET_TYPE} Secret of that name in namespace {} (kubectl create secret docker-registry {name} --namespace {} --docker-server={registry} …) or change pullSecret",
                    reader.namespace, reader.namespace
                ))
            })?;
        let kind = secret.type_.as_deref().unwrap_or("Opaque");
        if kind != PULL_SECRET_TYPE {
            return Err(secret_error(format!(
                "has type {:?}, not {PULL_SECRET_TYPE} (kubectl create secret docker-registry makes one)",
                sanitize(kind, 64)
            )));
        }
        let data = secret
            .data
            .as_ref()
            .and_then(|data| data.get(PULL_SECRET_KEY))
            .ok_or_else(|| secret_error(format!("has no key {PULL_SECRET_KEY}")))?;
        let origin = format!("pullSecret {}/{name}", reader.namespace);
        let config = DockerConfig::parse(&origin, &data.0)?;
        match config.for_registry(registry)? {
            Some(credentials) => Ok(Some(credentials)),
            None => Err(secret_error(format!(
                "has no credentials for registry {registry} (it has: {}); add an auths entry for {registry} to its {PULL_SECRET_KEY}, or name a Secret that has one",
                sanitize(&config.registries().join(", "), 256)
            ))),
        }
    }
}

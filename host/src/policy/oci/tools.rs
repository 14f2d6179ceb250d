//! `oci://` references in the command-line tools (`policy test`, `eval`,
//! `inspect`): pulled with the command line's Docker config, checked as
//! the CCM checks them, and loaded as a file would be.

use std::sync::Arc;

use super::auth::{AuthConfigError, DockerConfig};
use super::errors::RegistryError;
use super::pull::{Pulled, pull};
use super::reference::{Reference, ReferenceError};
use super::runtime::on_registry_runtime;
use crate::policy::loader::{self, Policy, PolicySource};
use crate::policy::{Limits, LoadError, PolicyEngine};

/// Why a tool could not get or load an image's policy.
#[derive(Debug, thiserror::Error)]
pub enum ImagePolicyError {
    /// The reference is not a pinned `oci://` reference.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// The Docker config cannot be used.
    #[error(transparent)]
    Credentials(#[from] AuthConfigError),
    /// The pull failed.
    #[error("pulling {reference}: {source}")]
    Registry {
        /// The reference.
        reference: String,
        /// What failed.
        #[source]
        source: RegistryError,
    },
    /// The requests could not run.
    #[error("{0}")]
    Runtime(String),
    /// The component was pulled but is not a policy the host accepts.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// Whether `spec` names an image rather than a file or `default`.
pub fn is_image(spec: &str) -> bool {
    spec.starts_with(super::reference::SCHEME)
}

/// The name a policy pulled from `reference` is loaded under: the
/// repository's last component.
pub fn policy_name(reference: &Reference) -> &str {
    reference
        .repository
        .rsplit('/')
        .next()
        .unwrap_or(&reference.repository)
}

/// Pulls the pinned reference `text` with `auth`'s credentials for its registry.
pub fn pull_blocking(
    engine: &PolicyEngine,
    text: &str,
    auth: &DockerConfig,
) -> Result<(Reference, Pulled), ImagePolicyError> {
    let reference = Reference::pinned(text)?;
    let credentials = auth.for_registry(&reference.registry)?;
    let owned = reference.clone();
    let pulled = engine
        .block_on(on_registry_runtime(async move {
            pull(&owned, credentials).await
        }))
        .map_err(ImagePolicyError::Runtime)?
        .map_err(|source| ImagePolicyError::Registry {
            reference: reference.to_string(),
            source,
        })?;
    Ok((reference, pulled))
}

/// Pulls and loads the pinned reference `text` under `limits` with `config`.
pub fn load_blocking(
    engine: &Arc<PolicyEngine>,
    text: &str,
    auth: &DockerConfig,
    config: String,
    limits: Limits,
) -> Result<Policy, ImagePolicyError> {
    let (reference, pulled) = pull_blocking(engine, text, auth)?;
    let source = PolicySource {
        name: policy_name(&reference),
        bytes: &pulled.component,
        pin: Some(&pulled.component_sha256),
        config,
        limits,
    };
    Ok(engine.block_on(loader::load(engine, source))?)
}

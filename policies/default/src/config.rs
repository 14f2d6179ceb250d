//! The provider's settings for the default policy (JSON).

use serde::Deserialize;

use crate::annotations::{self, parse_algorithm};
use crate::vcd::lb_policy::types::PoolAlgorithm;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    cert_alias: Option<String>,
    algorithm: Option<String>,
    share_across_namespaces: Option<bool>,
    forbidden_annotations: Option<Vec<String>>,
}

/// Validated settings.
pub struct Config {
    /// Certificate for TLS ports when the Service names none (upstream `loadbalancer.certAlias`).
    pub cert_alias: Option<String>,
    /// Pool algorithm when the Service asks for none; upstream used round-robin.
    pub algorithm: PoolAlgorithm,
    /// A Service with a sharing key may join another namespace's group when
    /// its own namespace has none.
    pub share_across_namespaces: bool,
    /// Annotations the provider does not let Services use: a Service that
    /// sets one is refused, naming it.
    pub forbidden_annotations: Vec<String>,
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
        let raw: RawConfig = if text.trim().is_empty() {
            RawConfig::default()
        } else {
            serde_json::from_str(text).map_err(|e| format!("default policy config: {e}"))?
        };
        let algorithm = match raw.algorithm.as_deref() {
            None => PoolAlgorithm::RoundRobin,
            Some(name) => parse_algorithm(name)
                .map_err(|message| format!("default policy config: algorithm: {message}"))?,
        };
        let cert_alias = raw.cert_alias.filter(|alias| !alias.is_empty());
        let forbidden_annotations = raw.forbidden_annotations.unwrap_or_default();
        if let Some(unknown) = forbidden_annotations
            .iter()
            .find(|key| !annotations::READ.contains(&key.as_str()))
        {
            return Err(format!(
                "default policy config: forbiddenAnnotations: {unknown:?} is not an annotation the default policy reads; use any of {}",
                annotations::READ.join(", ")
            ));
        }
        Ok(Config {
            cert_alias,
            algorithm,
            share_across_namespaces: raw.share_across_namespaces.unwrap_or(false),
            forbidden_annotations,
        })
    }
}

//! `policies.yaml`: the provider's list of policies in the policy ConfigMap.
//!
//! ```yaml
//! default:                         # the built-in policy's settings (optional)
//!   config: {forbiddenAnnotations: [vcd-ccm.io/pool-algorithm]}
//!   timeoutMs: 100
//! policies:
//! - name: namespace-pools          # lowercase DNS label; not "default"
//!   file: namespace-pools.wasm     # optional, defaults to <name>.wasm
//!   sha256: 3f2a…                  # pin of the file's contents; required for a file
//!   config: {certificateSuffix: -tls}
//!   timeoutMs: 100                 # per-call deadline, 1–10000
//!   memoryLimitMiB: 32             # per-call memory cap, 1–1024
//!   selector:
//!     namespaceSelector: {matchLabels: {tenant: gold}}
//!     loadBalancerClass: vcd-ccm.io/gold
//!     allowAnnotation: true        # Services may name it with vcd-ccm.io/policy
//! - name: tenant-python            # from a registry instead of a file:
//!   image: oci://registry.example.com/policies/tenant@sha256:9e0d…  # pinned by digest
//!   pullSecret: registry-pull      # optional kubernetes.io/dockerconfigjson Secret
//!   selector: {loadBalancerClass: vcd-ccm.io/python}
//! - name: namespace-pools-next     # a candidate, evaluated beside another policy
//!   sha256: 9b1c…
//!   mode: shadow                   # decides for no Service; differences are reported
//!   shadows: namespace-pools       # the policy it runs beside: a listed one or "default"
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::builtin::DEFAULT_POLICY_NAME;
use super::oci::entry::{ComponentSource, SourceFields};
use super::sandbox::MAX_MEMORY_BYTES;
use super::sandbox::{Limits, MAX_TIMEOUT_MS};
use super::selector::LabelSelector;

/// The manifest's file name inside the policy directory.
pub const MANIFEST_FILE: &str = "policies.yaml";

/// Why the manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file exists but cannot be read.
    #[error("{}: cannot read: {error}", file.display())]
    Read {
        /// The manifest's path.
        file: PathBuf,
        /// What reading it failed with.
        error: std::io::Error,
    },
    /// The file is not valid YAML, does not fit the schema or breaks a rule.
    #[error("{}: {path}: {message}", file.display())]
    Invalid {
        /// The manifest's path.
        file: PathBuf,
        /// The offending field, e.g. `policies[0].sha256`.
        path: String,
        /// The problem, with YAML's line and column where the parser knows them.
        message: String,
    },
}

/// The parsed `policies.yaml`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// `default`: settings of the built-in policy, over the cloud config's.
    #[serde(default)]
    pub default: Option<DefaultEntry>,
    /// The provider's policies, in the order selectors are tried; names are unique.
    #[serde(default)]
    pub policies: Vec<PolicyEntry>,
}

/// The built-in policy's settings: the one place a provider configures it.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefaultEntry {
    /// `config`: a JSON object of the default policy's settings; its keys
    /// win over the cloud config's (`certAlias`).
    #[serde(default)]
    pub config: Option<serde_json::Map<String, serde_json::Value>>,
    /// `timeoutMs`: as for a provider policy.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `memoryLimitMiB`: as for a provider policy.
    #[serde(default, rename = "memoryLimitMiB")]
    pub memory_limit_mib: Option<u64>,
}

impl DefaultEntry {
    /// The settings handed to the built-in policy: `base` (from the cloud
    /// config) with this entry's keys over it, as JSON text.
    pub fn config_over(&self, base: &str) -> String {
        let mut merged = match serde_json::from_str(base) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        merged.extend(self.config.clone().unwrap_or_default());
        serde_json::Value::Object(merged).to_string()
    }

    /// The call budgets.
    pub fn limits(&self) -> Limits {
        limits(self.timeout_ms, self.memory_limit_mib)
    }
}

/// `timeoutMs` and `memoryLimitMiB` where given, the [`Limits`] defaults
/// elsewhere.
fn limits(timeout_ms: Option<u64>, memory_limit_mib: Option<u64>) -> Limits {
    let defaults = Limits::default();
    Limits {
        timeout: timeout_ms.map_or(defaults.timeout, Duration::from_millis),
        memory_bytes: memory_limit_mib.map_or(defaults.memory_bytes, |mib| (mib as usize) << 20),
    }
}

/// The budgets' bounds; the error is `(field, problem)`.
fn check_limits(
    timeout_ms: Option<u64>,
    memory_limit_mib: Option<u64>,
) -> Result<(), (&'static str, String)> {
    if let Some(ms) = timeout_ms
        && !(1..=MAX_TIMEOUT_MS).contains(&ms)
    {
        return Err(("timeoutMs", format!("{ms} is outside 1–{MAX_TIMEOUT_MS}")));
    }
    let max_mib = (MAX_MEMORY_BYTES >> 20) as u64;
    if let Some(mib) = memory_limit_mib
        && !(1..=max_mib).contains(&mib)
    {
        return Err(("memoryLimitMiB", format!("{mib} is outside 1–{max_mib}")));
    }
    Ok(())
}

/// One provider policy.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyEntry {
    /// `name`: a lowercase DNS label other than `default`.
    pub name: String,
    /// `file`: the component's file name in the policy directory; `None` means
    /// `<name>.wasm` unless `image` is set (see [`PolicyEntry::source`]).
    #[serde(default)]
    pub file: Option<String>,
    /// `sha256`: the pin the file's contents must match, 64 hex digits;
    /// required for a file, refused with `image`.
    #[serde(default)]
    pub sha256: Option<String>,
    /// `image`: `oci://registry/repository[:tag]@sha256:<64 hex>`, a wasm
    /// artifact pinned by its manifest's digest, instead of a file.
    #[serde(default)]
    pub image: Option<String>,
    /// `pullSecret`: with `image`, the `kubernetes.io/dockerconfigjson`
    /// Secret in the CCM's namespace that holds the registry's credentials.
    #[serde(default)]
    pub pull_secret: Option<String>,
    /// `config`: settings handed to the policy as JSON; `None` means `{}`.
    #[serde(default)]
    pub config: Option<serde_json::Value>,
    /// `timeoutMs`: the per-call deadline in milliseconds (1–10000); `None`
    /// means the [`Limits`] default.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `memoryLimitMiB`: the per-call memory cap in MiB (1–1024); `None` means
    /// the [`Limits`] default.
    #[serde(default, rename = "memoryLimitMiB")]
    pub memory_limit_mib: Option<u64>,
    /// `selector`: which Services the policy governs (none for a shadow).
    #[serde(default)]
    pub selector: PolicySelector,
    /// `mode`: `active` (the default) or `shadow`.
    #[serde(default)]
    pub mode: PolicyMode,
    /// `shadows`: for a shadow, the policy it is evaluated beside.
    #[serde(default)]
    pub shadows: Option<String>,
}

/// Whether a policy decides for Services or only runs beside another.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum PolicyMode {
    /// It governs the Services its selector picks.
    #[default]
    Active,
    /// It is evaluated beside the policy named by `shadows` on each of that
    /// policy's decisions; its own decision is compared, never applied.
    Shadow,
}

/// Which Services a policy governs. `namespaceSelector` and `loadBalancerClass`
/// must both match when both are set; `allowAnnotation` lets a Service pick the
/// policy by name.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicySelector {
    /// `namespaceSelector`: matched against the labels of the Service's namespace.
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
    /// `loadBalancerClass`: matched against the Service's `spec.loadBalancerClass`.
    #[serde(default)]
    pub load_balancer_class: Option<String>,
    /// `allowAnnotation`: Services may choose the policy with the
    /// `vcd-ccm.io/policy` annotation.
    #[serde(default)]
    pub allow_annotation: bool,
}

impl PolicyEntry {
    /// Where the component comes from: a pinned file (`file`, else
    /// `<name>.wasm`) or a pinned image. Entries of a parsed [`Manifest`]
    /// always have one; the error is `(field, problem)`.
    pub fn source(&self) -> Result<ComponentSource, (&'static str, String)> {
        SourceFields {
            name: &self.name,
            file: self.file.as_deref(),
            sha256: self.sha256.as_deref(),
            image: self.image.as_deref(),
            pull_secret: self.pull_secret.as_deref(),
        }
        .source()
    }

    /// The config as JSON text for the policy (`{}` when none is given).
    pub fn config_json(&self) -> String {
        self.config
            .as_ref()
            .map_or_else(|| "{}".to_string(), serde_json::Value::to_string)
    }

    /// The policy this one is a shadow of; `None` for an active policy.
    pub fn shadowed(&self) -> Option<&str> {
        match self.mode {
            PolicyMode::Shadow => self.shadows.as_deref(),
            PolicyMode::Active => None,
        }
    }

    /// The call budgets: `timeoutMs` and `memoryLimitMiB` where given, the
    /// [`Limits`] defaults elsewhere.
    pub fn limits(&self) -> Limits {
        limits(self.timeout_ms, self.memory_limit_mib)
    }

    /// Rules serde cannot express; the error is `(field, problem)`.
    fn validate(&self) -> Result<(), (&'static str, String)> {
        let name = &self.name;
        let is_label = !name.is_empty()
            && name.len() <= 63
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !name.starts_with('-')
            && !name.ends_with('-');
        if !is_label {
            return Err((
                "name",
                format!("{name:?} must be a lowercase DNS label (a-z, 0-9, '-', at most 63)"),
            ));
        }
        if name == DEFAULT_POLICY_NAME {
            return Err((
                "name",
                format!(
                    "{name:?} is the built-in policy's name; give its settings under the top-level default: key"
                ),
            ));
        }
        self.source()?;
        check_limits(self.timeout_ms, self.memory_limit_mib)?;
        let selector = &self.selector;
        match (self.mode, &self.shadows) {
            (PolicyMode::Shadow, None) => {
                return Err((
                    "shadows",
                    "a shadow policy must name the policy it runs beside (a listed policy or \"default\")".into(),
                ));
            }
            (PolicyMode::Active, Some(shadowed)) => {
                return Err((
                    "shadows",
                    format!(
                        "{shadowed:?} is set, but mode is active: set mode: shadow, or remove shadows"
                    ),
                ));
            }
            (PolicyMode::Shadow, Some(_)) if *selector != PolicySelector::default() => {
                return Err((
                    "selector",
                    "a shadow policy decides for no Service: remove its selector (it runs wherever the policy it shadows decides)".into(),
                ));
            }
            (PolicyMode::Shadow, Some(_)) => return Ok(()),
            (PolicyMode::Active, None) => {}
        }
        if let Some(namespaces) = &selector.namespace_selector {
            namespaces
                .validate()
                .map_err(|e| ("selector.namespaceSelector", e))?;
        }
        if selector.namespace_selector.is_none()
            && selector.load_balancer_class.is_none()
            && !selector.allow_annotation
        {
            return Err((
                "selector",
                "selects no Service: set namespaceSelector, loadBalancerClass or allowAnnotation"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl Manifest {
    /// Parses and checks the manifest text; errors name the file, the field path
    /// (with YAML's line and column where the parser knows them) and the problem.
    pub fn parse(file: &Path, text: &str) -> Result<Manifest, ManifestError> {
        let invalid = |path: String, message: String| ManifestError::Invalid {
            file: file.to_path_buf(),
            path,
            message,
        };
        let manifest: Manifest =
            serde_path_to_error::deserialize(serde_yaml_ng::Deserializer::from_str(text))
                .map_err(|e| invalid(e.path().to_string(), e.into_inner().to_string()))?;
        if let Some(default) = &manifest.default {
            check_limits(default.timeout_ms, default.memory_limit_mib)
                .map_err(|(field, message)| invalid(format!("default.{field}"), message))?;
        }
        for (i, entry) in manifest.policies.iter().enumerate() {
            entry
                .validate()
                .map_err(|(field, message)| invalid(format!("policies[{i}].{field}"), message))?;
            if manifest.policies[..i]
                .iter()
                .any(|other| other.name == entry.name)
            {
                return Err(invalid(
                    format!("policies[{i}].name"),
                    format!("{:?} is listed twice", entry.name),
                ));
            }
        }
        for (i, entry) in manifest.policies.iter().enumerate() {
            let Some(shadowed) = entry.shadowed() else {
                continue;
            };
            let active = shadowed == DEFAULT_POLICY_NAME
                || manifest
                    .policies
                    .iter()
                    .any(|p| p.name == shadowed && p.mode == PolicyMode::Active);
            if !active {
                return Err(invalid(
                    format!("policies[{i}].shadows"),
                    format!(
                        "{shadowed:?} is not an active policy of this manifest nor \"default\""
                    ),
                ));
            }
        }
        Ok(manifest)
    }

    /// Reads and parses [`MANIFEST_FILE`] in `dir`; a missing file is an empty manifest.
    pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
        let file = dir.join(MANIFEST_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => Manifest::parse(&file, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest {
                default: None,
                policies: Vec::new(),
            }),
            Err(error) => Err(ManifestError::Read { file, error }),
        }
    }
}

#[cfg(test)]
mod tests;

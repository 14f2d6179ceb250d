//! The test-suite file format (YAML, field names in WIT spelling).
//!
//! ```yaml
//! policy: default                # "default", a .wasm path relative to this file, or oci://…@sha256:…
//! config: {certAlias: web-cert}  # optional settings, handed to the policy as JSON
//! limits: {timeoutMs: 50, memoryLimitMiB: 16}  # optional budgets, as in policies.yaml
//! defaults:                      # optional: deep-merged under every case's input
//!   service: {namespace: shop, name: web, uid: u-1, ip-families: [ipv4]}
//!   pools: [{name: public, source: ip-block, ranges: [{first: 203.0.113.10, last: 203.0.113.20}], free-count: 11}]
//!   profiles: [l4-tcp, http, https]
//! cases:
//! - name: plain-tcp
//!   input: {service: {ports: [{protocol: tcp, port: 80, node-port: 30080}]}}
//!   expect:
//!     decision:
//!       address: {from-pool: public}
//!       ports: [{service-port: 80, protocol: tcp, listen-port: 80, profile: l4-tcp,
//!                health-monitor: tcp, algorithm: round-robin}]
//! - name: missing-certificate
//!   input: {...}
//!   expect: {error: {certificate-not-found: web-cert}}
//! ```
//!
//! Mappings merge key by key; lists and scalars in a case replace the default.
//! Every call runs under the suite's `limits` (the CCM's defaults when left
//! out), and a case whose call exceeds one fails, naming it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::policy::model::{Decision, DecisionError};
use crate::policy::sandbox::MAX_MEMORY_BYTES;
use crate::policy::sandbox::{Limits, MAX_TIMEOUT_MS};

/// One suite file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteFile {
    /// `default`, or the path of a `.wasm` component relative to the suite file.
    pub policy: String,
    /// Settings handed to the policy as JSON; `None` means `{}`.
    #[serde(default)]
    pub config: Option<Value>,
    /// The budgets the policy's calls run under.
    #[serde(default)]
    pub limits: SuiteLimits,
    /// A partial decision input deep-merged under every case's `input`.
    #[serde(default)]
    pub defaults: Option<Value>,
    /// The cases, run in order.
    pub cases: Vec<CaseFile>,
}

/// `limits`: the keys and ranges of a `policies.yaml` entry's budgets, so a
/// suite can run a policy as the provider will ship it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuiteLimits {
    /// `timeoutMs`: the per-call deadline in milliseconds, 1–10000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `memoryLimitMiB`: the per-call memory cap in MiB, 1–1024.
    #[serde(default, rename = "memoryLimitMiB")]
    pub memory_limit_mib: Option<u64>,
}

impl SuiteLimits {
    /// The limits, defaults filled in; the error names the key and the range.
    pub fn limits(&self) -> Result<Limits, String> {
        let defaults = Limits::default();
        let timeout = match self.timeout_ms {
            None => defaults.timeout,
            Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Duration::from_millis(ms),
            Some(ms) => {
                return Err(format!(
                    "limits.timeoutMs: {ms} is outside 1–{MAX_TIMEOUT_MS}"
                ));
            }
        };
        let max_mib = (MAX_MEMORY_BYTES >> 20) as u64;
        let memory_bytes = match self.memory_limit_mib {
            None => defaults.memory_bytes,
            Some(mib) if (1..=max_mib).contains(&mib) => (mib as usize) << 20,
            Some(mib) => {
                return Err(format!(
                    "limits.memoryLimitMiB: {mib} is outside 1–{max_mib}"
                ));
            }
        };
        Ok(Limits {
            timeout,
            memory_bytes,
        })
    }
}

/// One case of a suite file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CaseFile {
    /// The case's name, which the `--run` pattern is matched against.
    pub name: String,
    /// The decision input, merged over the suite's `defaults`.
    #[serde(default)]
    pub input: Value,
    /// What `decide` must produce.
    pub expect: Expectation,
}

/// What a case expects of `decide`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Expectation {
    /// This exact decision.
    Decision(Decision),
    /// This exact `decision-error` from the policy.
    Error(DecisionError),
    /// The host rejects the policy's decision with a message containing this text.
    InvalidDecision(String),
}

/// `overlay` merged onto `base`: mappings key by key, anything else replaced.
pub fn merge(base: &Value, overlay: &Value) -> Value {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            let mut merged = base.clone();
            for (key, value) in overlay {
                let combined = match merged.get(key) {
                    Some(existing) => merge(existing, value),
                    None => value.clone(),
                };
                merged.insert(key.clone(), combined);
            }
            Value::Object(merged)
        }
        (_, Value::Null) => base.clone(),
        _ => overlay.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mappings_merge_and_lists_replace() {
        let base = json!({"service": {"name": "web", "ports": [1, 2], "annotations": {"a": "1"}}});
        let overlay = json!({"service": {"ports": [3], "annotations": {"b": "2"}}});
        assert_eq!(
            merge(&base, &overlay),
            json!({"service": {"name": "web", "ports": [3], "annotations": {"a": "1", "b": "2"}}})
        );
        assert_eq!(merge(&base, &Value::Null), base);
    }

    #[test]
    fn limits_default_to_the_ccms_and_keep_the_manifests_ranges() {
        let parse = |text: &str| {
            serde_yaml_ng::from_str::<SuiteLimits>(text)
                .unwrap()
                .limits()
        };
        assert_eq!(parse("{}"), Ok(Limits::default()));
        assert_eq!(
            parse("{timeoutMs: 250, memoryLimitMiB: 8}"),
            Ok(Limits {
                timeout: Duration::from_millis(250),
                memory_bytes: 8 << 20
            })
        );
        assert_eq!(
            parse("{timeoutMs: 0}"),
            Err("limits.timeoutMs: 0 is outside 1–10000".into())
        );
        assert_eq!(
            parse("{memoryLimitMiB: 2048}"),
            Err("limits.memoryLimitMiB: 2048 is outside 1–1024".into())
        );
    }
}

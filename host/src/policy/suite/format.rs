//! The test-suite file format (YAML, field names in WIT spelling).
//!
//! ```yaml
//! policy: default                # "default" or a .wasm path relative to this file
//! config: {certAlias: web-cert}  # optional settings, handed to the policy as JSON
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

use serde::Deserialize;
use serde_json::Value;

use crate::policy::model::{Decision, DecisionError};

/// One suite file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteFile {
    /// `default`, or the path of a `.wasm` component relative to the suite file.
    pub policy: String,
    /// Settings handed to the policy as JSON; `None` means `{}`.
    #[serde(default)]
    pub config: Option<Value>,
    /// A partial decision input deep-merged under every case's `input`.
    #[serde(default)]
    pub defaults: Option<Value>,
    /// The cases, run in order.
    pub cases: Vec<CaseFile>,
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
}

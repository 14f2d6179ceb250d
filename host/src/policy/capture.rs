//! Captured decisions: for a Service annotated
//! `vcd-ccm.io/capture-policy-input: "true"`, the input the CCM built and
//! the outcome the governing policy gave are kept (the latest per Service,
//! at most [`CAPTURE_CAPACITY`] Services) and served on the serving port as
//! a ready-to-run suite file, so a policy author tests against production
//! inputs. The input carries no secrets: certificates are aliases and
//! metadata, never keys.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use super::builtin::DEFAULT_POLICY_NAME;
use super::errors::EvalError;
use super::loader::Policy;
use super::model::{Decision, DecisionError, DecisionInput};
use super::yaml;

/// The Service annotation that asks for its decisions to be captured.
pub const CAPTURE_ANNOTATION: &str = "vcd-ccm.io/capture-policy-input";
/// Services whose latest decision is kept; the oldest capture goes first.
pub const CAPTURE_CAPACITY: usize = 64;

/// What a case expects, in the suite's spelling.
#[derive(Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Expect {
    Decision(Decision),
    Error(DecisionError),
    InvalidDecision(String),
}

#[derive(Clone)]
struct Captured {
    policy: String,
    config: Value,
    input: DecisionInput,
    expect: Expect,
    at: SystemTime,
}

/// The latest captured decision of each annotated Service.
#[derive(Default)]
pub struct CaptureStore {
    captured: Mutex<HashMap<String, Captured>>,
}

/// Whether the Service asks for its decisions to be captured.
pub fn wanted(input: &DecisionInput) -> bool {
    input
        .service
        .annotations
        .iter()
        .any(|(k, v)| k == CAPTURE_ANNOTATION && v.trim().eq_ignore_ascii_case("true"))
}

impl CaptureStore {
    /// Keeps `input` and its outcome when the Service asks for it, and forgets
    /// the Service's capture once it no longer does. A call that failed in
    /// the sandbox (a trap, a budget) has no outcome a suite can expect, so
    /// the previous capture stays.
    pub(super) fn record(
        &self,
        input: &DecisionInput,
        policy: &Policy,
        result: &Result<Decision, EvalError>,
    ) {
        let key = format!("{}/{}", input.service.namespace, input.service.name);
        let mut captured = self.captured.lock().unwrap_or_else(|p| p.into_inner());
        if !wanted(input) {
            captured.remove(&key);
            return;
        }
        let expect = match result {
            Ok(decision) => Expect::Decision(decision.clone()),
            Err(EvalError::Declined { error, .. }) => Expect::Error(error.clone()),
            Err(EvalError::InvalidDecision { problem, .. }) => {
                Expect::InvalidDecision(problem.clone())
            }
            Err(EvalError::Call { .. }) => return,
        };
        if !captured.contains_key(&key) && captured.len() >= CAPTURE_CAPACITY {
            let oldest = captured
                .iter()
                .min_by_key(|(_, c)| c.at)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                captured.remove(&oldest);
            }
        }
        let config = serde_json::from_str(&policy.config).unwrap_or(Value::Null);
        captured.insert(
            key,
            Captured {
                policy: policy.name().to_string(),
                config,
                input: input.clone(),
                expect,
                at: SystemTime::now(),
            },
        );
    }

    /// The Services with a capture, as `namespace/name` lines.
    pub fn list(&self) -> String {
        let captured = self.captured.lock().unwrap_or_else(|p| p.into_inner());
        let mut keys: Vec<&String> = captured.keys().collect();
        keys.sort();
        keys.iter().map(|k| format!("{k}\n")).collect()
    }

    /// The capture of `namespace/name` as a suite file, if there is one.
    pub fn suite(&self, namespace: &str, name: &str) -> Option<String> {
        let captured = self.captured.lock().unwrap_or_else(|p| p.into_inner());
        let c = captured.get(&format!("{namespace}/{name}"))?;
        let policy = match c.policy.as_str() {
            DEFAULT_POLICY_NAME => DEFAULT_POLICY_NAME.to_string(),
            provider => format!("{provider}.wasm"),
        };
        let at = humantime::format_rfc3339_seconds(c.at);
        let header = format!(
            "# The decision input vcd-ccm built for Service {namespace}/{name} at {at},\n\
             # and what policy {} decided. Run: vcd-ccm policy test <this file>\n\
             # (point `policy` at a component to test it against this input).\n",
            c.policy
        );
        let suite = serde_json::json!({
            "policy": policy,
            "config": c.config,
            "cases": [{
                "name": format!("captured-{namespace}-{name}"),
                "input": c.input,
                "expect": c.expect,
            }],
        });
        Some(header + &yaml::to_string(&suite))
    }
}

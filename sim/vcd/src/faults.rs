//! Fault injection: rules matched against each call by method and route
//! template, fired by count (skip the first N, fire at most M times) and/or
//! probability (from a seeded generator, so runs repeat).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum FaultAction {
    /// Answer this status with a CloudAPI error body instead of serving.
    Error {
        status: u16,
        #[serde(default = "internal_error")]
        minor_error_code: String,
        #[serde(default)]
        message: String,
    },
    /// Wait, then serve normally.
    Delay { ms: u64 },
    /// Send the status line, then break the connection mid-body.
    Reset,
    /// Serve in full, then break the connection instead of answering: the
    /// write is applied but the client never hears of it, as when VCD
    /// commits and the connection resets or a proxy times out. A task the
    /// call started runs on as usual (tasks advance on timers, not on
    /// polling). The client sees none of the real answer (no status, no
    /// `Location`); the request log has the real status.
    LoseAnswer,
    /// Revoke the caller's access token, then serve (so it gets 401).
    RevokeToken,
    /// Serve (202), but end the resulting task in `error`.
    FailTask {
        #[serde(default = "internal_error")]
        minor_error_code: String,
        #[serde(default)]
        message: String,
    },
}

fn internal_error() -> String {
    "INTERNAL_SERVER_ERROR".to_string()
}

/// How an injected task failure ends a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFailure {
    pub minor: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultRule {
    /// `GET`, `POST`, ...; absent matches any method.
    pub method: Option<String>,
    /// A route template such as `/cloudapi/1.0.0/edgeGateways/{id}`, or `*`.
    pub path: String,
    pub action: FaultAction,
    /// Let this many matching calls through first.
    #[serde(default)]
    pub skip: u32,
    /// Fire at most this many times; absent means always.
    pub times: Option<u32>,
    /// Fire with this probability (after `skip`); absent means 1.
    pub probability: Option<f64>,
    #[serde(default)]
    pub matched: u32,
    #[serde(default)]
    pub fired: u32,
}

impl FaultRule {
    pub fn new(method: Option<&str>, path: &str, action: FaultAction) -> Self {
        Self {
            method: method.map(str::to_uppercase),
            path: path.to_string(),
            action,
            skip: 0,
            times: None,
            probability: None,
            matched: 0,
            fired: 0,
        }
    }

    pub fn times(mut self, times: u32) -> Self {
        self.times = Some(times);
        self
    }

    pub fn skip(mut self, skip: u32) -> Self {
        self.skip = skip;
        self
    }

    pub fn probability(mut self, probability: f64) -> Self {
        self.probability = Some(probability);
        self
    }

    fn applies_to(&self, method: &str, template: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && (self.path == "*" || self.path == template)
    }
}

/// The rules in force and the generator behind probabilities.
#[derive(Debug)]
pub struct FaultBook {
    pub rules: Vec<FaultRule>,
    rng: fastrand::Rng,
}

impl Default for FaultBook {
    fn default() -> Self {
        Self::with_seed(0x5eed)
    }
}

impl FaultBook {
    pub fn with_seed(seed: u64) -> Self {
        Self {
            rules: Vec::new(),
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The actions that fire for this call, in rule order.
    pub fn fire(&mut self, method: &str, template: &str) -> Vec<FaultAction> {
        let mut actions = Vec::new();
        for rule in self
            .rules
            .iter_mut()
            .filter(|r| r.applies_to(method, template))
        {
            rule.matched += 1;
            if rule.matched <= rule.skip || rule.times.is_some_and(|t| rule.fired >= t) {
                continue;
            }
            if rule.probability.is_some_and(|p| self.rng.f64() >= p) {
                continue;
            }
            rule.fired += 1;
            actions.push(rule.action.clone());
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_times_and_probability() {
        let mut book = FaultBook::default();
        book.rules.push(
            FaultRule::new(Some("get"), "/x", FaultAction::Reset)
                .skip(1)
                .times(2),
        );
        let fired: Vec<usize> = (0..5).map(|_| book.fire("GET", "/x").len()).collect();
        assert_eq!(fired, [0, 1, 1, 0, 0]);
        assert!(book.fire("POST", "/x").is_empty());

        let mut book = FaultBook::default();
        book.rules
            .push(FaultRule::new(None, "*", FaultAction::Reset).probability(0.5));
        let hits = (0..1000)
            .filter(|_| !book.fire("GET", "/y").is_empty())
            .count();
        assert!((350..650).contains(&hits), "{hits}");
    }

    #[test]
    fn actions_are_tagged_by_kind() {
        let rule: FaultRule = serde_json::from_value(serde_json::json!({
            "method": "POST", "path": "*", "action": {"kind": "loseAnswer"},
        }))
        .unwrap();
        assert_eq!(rule.action, FaultAction::LoseAnswer);
        assert_eq!(
            serde_json::to_value(&FaultAction::LoseAnswer).unwrap(),
            serde_json::json!({"kind": "loseAnswer"})
        );
    }
}

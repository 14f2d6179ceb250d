//! The engine's evaluation metrics: every `decide` call counted by policy
//! and outcome, and timed, under the `policy_` prefix.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry as MetricRegistry;

use super::errors::{CallError, EvalError};
use super::model::Decision;

/// How one `decide` call ended, as the `outcome` label spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A decision that passed validation.
    Ok,
    /// The policy returned its decision-error.
    Declined,
    /// The decision broke the contract and was rejected.
    Invalid,
    /// The call ran past its deadline.
    Timeout,
    /// The call grew its memories or tables past its memory cap.
    OutOfMemory,
    /// The value returned (or a log line) broke an output bound.
    OutputTooLarge,
    /// No slot of the policy's share freed up in time.
    Busy,
    /// The guest trapped (or panicked).
    Trap,
}

impl Outcome {
    /// How `result`, a `decide` call's result after validation, ended.
    pub(super) fn of(result: &Result<Decision, EvalError>) -> Outcome {
        match result {
            Ok(_) => Outcome::Ok,
            Err(EvalError::Declined { .. }) => Outcome::Declined,
            Err(EvalError::InvalidDecision { .. }) => Outcome::Invalid,
            Err(EvalError::Call { cause, .. }) => match cause {
                CallError::Timeout(_) => Outcome::Timeout,
                CallError::OutOfMemory { .. } => Outcome::OutOfMemory,
                CallError::OutputTooLarge { .. } | CallError::TooManyWarnings { .. } => {
                    Outcome::OutputTooLarge
                }
                CallError::Busy { .. } => Outcome::Busy,
                CallError::Trap { .. } => Outcome::Trap,
            },
        }
    }

    /// The `outcome` label value.
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Declined => "declined",
            Outcome::Invalid => "invalid",
            Outcome::Timeout => "timeout",
            Outcome::OutOfMemory => "out_of_memory",
            Outcome::OutputTooLarge => "output_too_large",
            Outcome::Busy => "busy",
            Outcome::Trap => "trap",
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EvaluationLabels {
    policy: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    policy: String,
}

fn evaluation_histogram() -> Histogram {
    // 0.5 ms to about 1 s: a call is dominated by creating its instance, and
    // the default deadline is 100 ms.
    Histogram::new(exponential_buckets(0.0005, 2.0, 12))
}

/// Evaluation counts and latencies; they count even when never registered.
#[derive(Debug, Clone)]
pub(super) struct EvaluationMetrics {
    evaluations: Family<EvaluationLabels, Counter>,
    duration: Family<PolicyLabels, Histogram>,
}

impl Default for EvaluationMetrics {
    fn default() -> Self {
        Self {
            evaluations: Family::default(),
            duration: Family::new_with_constructor(evaluation_histogram),
        }
    }
}

impl EvaluationMetrics {
    /// Exports the counts and latencies under `policy_`.
    pub(super) fn register(&self, registry: &mut MetricRegistry) {
        let policy = registry.sub_registry_with_prefix("policy");
        policy.register(
            "evaluations",
            "Policy decide calls by policy and outcome (ok, declined, invalid, timeout, out_of_memory, output_too_large, busy, trap)",
            self.evaluations.clone(),
        );
        policy.register(
            "evaluation_duration_seconds",
            "Time to run a policy's decide call and check its decision, by policy",
            self.duration.clone(),
        );
    }

    pub(super) fn record(&self, policy: &str, outcome: Outcome, elapsed: Duration) {
        self.evaluations
            .get_or_create(&EvaluationLabels {
                policy: policy.to_string(),
                outcome: outcome.as_str(),
            })
            .inc();
        self.duration
            .get_or_create(&PolicyLabels {
                policy: policy.to_string(),
            })
            .observe(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(cause: CallError) -> Result<Decision, EvalError> {
        Err(EvalError::Call {
            policy: "p".into(),
            cause,
        })
    }

    #[test]
    fn every_failure_has_its_own_outcome_label() {
        let cases = [
            (
                Err(EvalError::InvalidDecision {
                    policy: "p".into(),
                    problem: "port 80 twice".into(),
                }),
                "invalid",
            ),
            (
                call(CallError::Timeout(Duration::from_millis(5))),
                "timeout",
            ),
            (
                call(CallError::OutOfMemory { limit_bytes: 1 }),
                "out_of_memory",
            ),
            (
                call(CallError::Trap {
                    trap: "unreachable".into(),
                    stderr: String::new(),
                }),
                "trap",
            ),
        ];
        for (result, label) in cases {
            assert_eq!(Outcome::of(&result).as_str(), label, "{result:?}");
        }
    }

    #[test]
    fn recorded_evaluations_appear_with_their_labels() {
        let metrics = EvaluationMetrics::default();
        let mut registry = MetricRegistry::default();
        registry.register("evaluations", "", metrics.evaluations.clone());
        metrics.record("tenant-a", Outcome::Declined, Duration::from_millis(2));
        metrics.record("tenant-a", Outcome::Declined, Duration::from_millis(3));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"evaluations_total{policy="tenant-a",outcome="declined"} 2"#),
            "{text}"
        );
    }
}

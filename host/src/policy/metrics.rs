//! Prometheus metrics of the policy host, under the `policy_` prefix.
//!
//! The engine, shared by every policy, counts evaluations and times them
//! ([`PolicyEngine::register_metrics`]). What is loaded and what reloads did
//! is read from the [`Registry`] at scrape time ([`register_policy_set`]), so
//! a reload needs no bookkeeping of its own.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry as MetricRegistry;

use super::engine::PolicyEngine;
use super::errors::{CallError, EvalError};
use super::model::Decision;
use super::registry::{PolicyState, Registry};

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

impl PolicyEngine {
    /// Exports the evaluation metrics of every policy this engine runs.
    pub fn register_metrics(&self, registry: &mut MetricRegistry) {
        let policy = registry.sub_registry_with_prefix("policy");
        policy.register(
            "evaluations",
            "Policy decide calls by policy and outcome (ok, declined, invalid, timeout, out_of_memory, output_too_large, busy, trap)",
            self.metrics.evaluations.clone(),
        );
        policy.register(
            "evaluation_duration_seconds",
            "Time to run a policy's decide call and check its decision, by policy",
            self.metrics.duration.clone(),
        );
    }
}

/// Exports the loaded policies and the reload counters of `policies`.
/// Also registers the shadow policies' counter.
pub fn register_policy_set(registry: &mut MetricRegistry, policies: Arc<Registry>) {
    let registry = registry.sub_registry_with_prefix("policy");
    policies.shadows().register(registry);
    registry.register_collector(Box::new(PolicySetCollector { policies }));
}

struct PolicySetCollector {
    policies: Arc<Registry>,
}

impl fmt::Debug for PolicySetCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicySetCollector").finish_non_exhaustive()
    }
}

impl Collector for PolicySetCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let set = self.policies.current();
        let ready = set
            .providers
            .iter()
            .filter_map(|provider| match &provider.state {
                PolicyState::Ready(policy) => Some(policy),
                PolicyState::Failed(_) => None,
            });
        let mut loaded = encoder.encode_descriptor(
            "loaded",
            "Policies serving decisions, by name, sha256 of the component and contract version",
            None,
            MetricType::Info,
        )?;
        for policy in std::iter::once(&set.default).chain(ready) {
            loaded.encode_info(&[
                ("policy", policy.name()),
                ("sha256", policy.digest()),
                ("contract", policy.contract().version()),
            ])?;
        }
        let status = self.policies.status();
        ConstCounter::new(status.reloads).encode(encoder.encode_descriptor(
            "reloads",
            "Reloads of the policy directory attempted after the first load",
            None,
            MetricType::Counter,
        )?)?;
        ConstCounter::new(status.refusals).encode(encoder.encode_descriptor(
            "reload_refusals",
            "Policies (or manifests) refused by reloads; the last good version keeps serving",
            None,
            MetricType::Counter,
        )?)?;
        ConstCounter::new(status.pull_failures).encode(encoder.encode_descriptor(
            "image_pull_failures",
            "Pulls of image policies that failed (registry unreachable, access refused, a digest, layer or size that does not check out); the last good version keeps serving",
            None,
            MetricType::Counter,
        )?)
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

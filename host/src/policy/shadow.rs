//! Shadow policies: a candidate runs beside the policy that governs a
//! Service, on the same input, and only the governing decision is applied.
//! What differs is published as a [`ShadowReport`] (the service controller
//! turns it into an Event) and counted; a shadow that fails or runs over its
//! budgets is counted and logged, and never touches the Service.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::broadcast;

use super::errors::EvalError;
use super::model::{Decision, DecisionInput};
use super::yaml;
use crate::text::{EVENT_MESSAGE_BYTES, sanitize};

/// Reports a slow listener may fall behind by before it loses the oldest.
const REPORT_BACKLOG: usize = 256;
/// Changed lines a report quotes; the rest are counted.
const QUOTED_LINES: usize = 6;

/// A shadow policy that would have decided otherwise for one Service.
#[derive(Clone, Debug)]
pub struct ShadowReport {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The Service's uid.
    pub uid: String,
    /// What differs, in one line: both policies named, then the changed lines.
    pub message: String,
}

/// How one shadow evaluation compared, as the `result` label spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Comparison {
    Same,
    Different,
    Failed,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ShadowLabels {
    policy: String,
    shadows: String,
    result: &'static str,
}

/// Where shadow evaluations are reported: a broadcast of differences and
/// the `policy_shadow_decisions_total` counter.
pub struct ShadowFeed {
    reports: broadcast::Sender<ShadowReport>,
    decisions: Family<ShadowLabels, Counter>,
}

impl Default for ShadowFeed {
    fn default() -> Self {
        ShadowFeed {
            reports: broadcast::Sender::new(REPORT_BACKLOG),
            decisions: Family::default(),
        }
    }
}

impl ShadowFeed {
    /// Differences from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ShadowReport> {
        self.reports.subscribe()
    }

    /// Registers the counter under `policy_shadow_decisions`.
    pub fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "shadow_decisions",
            "Shadow policy evaluations by shadow policy, the policy it shadows, and result (same, different, failed)",
            self.decisions.clone(),
        );
    }

    /// Compares what `shadow` decided with what `active` decided for `input`,
    /// counts it, and publishes a difference.
    pub(super) fn record(
        &self,
        input: &DecisionInput,
        (active, governing): (&str, &Result<Decision, EvalError>),
        (shadow, shadowing): (&str, &Result<Decision, EvalError>),
    ) {
        let service = format!("{}/{}", input.service.namespace, input.service.name);
        let comparison = match (outcome(governing), outcome(shadowing)) {
            (_, Outcome::Failed(error)) => {
                tracing::warn!(%service, policy = shadow, %error, "shadow policy failed; the Service is unaffected");
                Comparison::Failed
            }
            (a, s) if a == s => Comparison::Same,
            (a, s) => {
                let difference = match (&a, &s) {
                    (Outcome::Decided(a), Outcome::Decided(s)) => changed_lines(a, s),
                    _ => format!("{active} {}; {shadow} {}", a.describe(), s.describe()),
                };
                // Policy output, already escaped: bounded here as the Event will be.
                let message = sanitize(
                    &format!(
                        "shadow policy {shadow} would decide otherwise than {active}: {difference}"
                    ),
                    EVENT_MESSAGE_BYTES,
                );
                tracing::info!(%service, policy = shadow, %message, "shadow policy differs");
                // No listener (the service controller is not running) is fine.
                let _ = self.reports.send(ShadowReport {
                    namespace: input.service.namespace.clone(),
                    name: input.service.name.clone(),
                    uid: input.service.uid.clone(),
                    message,
                });
                Comparison::Different
            }
        };
        self.decisions
            .get_or_create(&ShadowLabels {
                policy: shadow.to_string(),
                shadows: active.to_string(),
                result: match comparison {
                    Comparison::Same => "same",
                    Comparison::Different => "different",
                    Comparison::Failed => "failed",
                },
            })
            .inc();
    }
}

/// One policy's outcome in comparable form.
#[derive(PartialEq)]
enum Outcome {
    /// The decision as YAML, the way suites spell it.
    Decided(String),
    /// The policy's decision-error, on one line.
    Declined(String),
    /// The call failed, or its decision broke the contract.
    Failed(String),
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Decided(_) => "decides".to_string(),
            Outcome::Declined(error) => format!("declines: {error}"),
            Outcome::Failed(error) => format!("fails: {error}"),
        }
    }
}

fn outcome(result: &Result<Decision, EvalError>) -> Outcome {
    match result {
        Ok(decision) => Outcome::Decided(yaml::to_string(decision)),
        Err(EvalError::Declined { error, .. }) => {
            Outcome::Declined(serde_json::to_string(error).unwrap_or_default())
        }
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// The lines that differ, `-` for the governing policy's and `+` for the
/// shadow's, joined on one line.
fn changed_lines(active: &str, shadow: &str) -> String {
    let diff = similar::TextDiff::from_lines(active, shadow);
    let changed: Vec<String> = diff
        .iter_all_changes()
        .filter_map(|change| {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => return None,
            };
            Some(format!("{sign} {}", change.value().trim()))
        })
        .collect();
    let mut text = changed
        .iter()
        .take(QUOTED_LINES)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if changed.len() > QUOTED_LINES {
        text += &format!("; and {} more changed lines", changed.len() - QUOTED_LINES);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_quote_both_sides_and_count_the_rest() {
        let a = "address: a\nalgorithm: round-robin\n";
        let s = "address: a\nalgorithm: least-connections\n";
        assert_eq!(
            changed_lines(a, s),
            "- algorithm: round-robin; + algorithm: least-connections"
        );
        let many_a: String = (0..10).map(|i| format!("k{i}: a\n")).collect();
        let many_s: String = (0..10).map(|i| format!("k{i}: b\n")).collect();
        assert!(changed_lines(&many_a, &many_s).ends_with("; and 14 more changed lines"));
    }
}

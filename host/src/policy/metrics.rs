//! Prometheus metrics of the policy host, under the `policy_` prefix.
//!
//! The engine, shared by every policy, counts evaluations and times them
//! (`evaluation_metrics.rs`, registered by `PolicyEngine::register_metrics`).
//! What is loaded and what reloads did
//! is read from the [`Registry`] at scrape time ([`register_policy_set`]), so
//! a reload needs no bookkeeping of its own.

use std::fmt;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::registry::Registry as MetricRegistry;

use super::registry::{PolicyState, Registry};

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

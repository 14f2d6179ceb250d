//! Our conditions on a Service. `vcd-ccm.io/LoadBalancerReady`: whether its
//! load balancer matches it and, if not, why, in the words of the Event
//! that said so (Events expire; the condition stays).
//! `vcd-ccm.io/LoadBalancerHealthy`: whether VCD finds members up behind
//! it. Each is written only when it changes: status, reason, message or
//! the generation it speaks of.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Value, json};

use crate::text::{EVENT_MESSAGE_BYTES, sanitize};

/// The readiness condition's `type`.
pub const READY_CONDITION: &str = "vcd-ccm.io/LoadBalancerReady";
/// The health condition's `type`.
pub const HEALTHY_CONDITION: &str = "vcd-ccm.io/LoadBalancerHealthy";

/// What one of our conditions should say.
pub(super) struct Readiness {
    kind: &'static str,
    status: &'static str,
    reason: &'static str,
    message: String,
}

impl Readiness {
    /// The load balancer matches the Service.
    pub fn ready(reason: &'static str, message: &str) -> Readiness {
        Readiness::new(READY_CONDITION, Some(true), reason, message)
    }

    /// It does not, for the reason an Event with `reason` gave.
    pub fn not_ready(reason: &'static str, message: &str) -> Readiness {
        Readiness::new(READY_CONDITION, Some(false), reason, message)
    }

    /// Whether members are up behind it; `None`: VCD does not know.
    pub fn healthy(healthy: Option<bool>, reason: &'static str, message: &str) -> Readiness {
        Readiness::new(HEALTHY_CONDITION, healthy, reason, message)
    }

    fn new(
        kind: &'static str,
        status: Option<bool>,
        reason: &'static str,
        message: &str,
    ) -> Readiness {
        Readiness {
            kind,
            status: match status {
                Some(true) => "True",
                Some(false) => "False",
                None => "Unknown",
            },
            reason,
            message: sanitize(message, EVENT_MESSAGE_BYTES),
        }
    }

    /// The condition to write onto `service`, or `None` when it says this
    /// already for the Service's current generation. The transition time
    /// moves only when the status does.
    pub fn change(&self, service: &Service) -> Option<Condition> {
        let status = self.status;
        let generation = service.metadata.generation;
        let existing = condition_of(service, self.kind);
        if let Some(c) = existing
            && c.status == status
            && c.reason == self.reason
            && c.message == self.message
            && c.observed_generation == generation
        {
            return None;
        }
        let since = existing
            .filter(|c| c.status == status)
            .map(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| Time(Timestamp::now()));
        Some(Condition {
            type_: self.kind.to_string(),
            status: status.to_string(),
            reason: self.reason.to_string(),
            message: self.message.clone(),
            observed_generation: generation,
            last_transition_time: since,
        })
    }
}

/// A condition as the entry of a `status.conditions` patch.
pub(super) fn entry(condition: Condition) -> Value {
    serde_json::to_value(condition).unwrap_or(Value::Null)
}

/// The Service's condition of type `kind`, if it carries one.
pub fn condition_of<'a>(service: &'a Service, kind: &str) -> Option<&'a Condition> {
    service
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

/// The strategic-merge-patch list entries that remove our conditions the
/// Service carries (it no longer asks for a load balancer).
pub(super) fn removals(service: &Service) -> Vec<Value> {
    [READY_CONDITION, HEALTHY_CONDITION]
        .into_iter()
        .filter(|kind| condition_of(service, kind).is_some())
        .map(|kind| json!({"type": kind, "$patch": "delete"}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service_with(condition: Option<Condition>, generation: i64) -> Service {
        let mut service = Service::default();
        service.metadata.generation = Some(generation);
        service.status = Some(k8s_openapi::api::core::v1::ServiceStatus {
            conditions: condition.map(|c| vec![c]),
            ..Default::default()
        });
        service
    }

    #[test]
    fn written_only_when_something_changes() {
        let ready = Readiness::ready("EnsuredLoadBalancer", "Ensured load balancer");
        let first = ready.change(&service_with(None, 1)).expect("new");
        assert_eq!(first.observed_generation, Some(1));
        assert!(
            ready
                .change(&service_with(Some(first.clone()), 1))
                .is_none()
        );
        let newer = ready
            .change(&service_with(Some(first.clone()), 2))
            .expect("generation");
        assert_eq!(newer.last_transition_time, first.last_transition_time);
        let failed = Readiness::not_ready("SyncLoadBalancerFailed", "Error\nsyncing")
            .change(&service_with(Some(first.clone()), 2))
            .expect("status");
        assert_eq!(failed.status, "False");
        assert_eq!(failed.message, "Error\\nsyncing");
        assert_ne!(failed.last_transition_time, first.last_transition_time);
    }
}

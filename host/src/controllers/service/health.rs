//! Health in the Service: every period, one paged list of the gateway's
//! pool summaries says how many members VCD finds up behind each Service.
//! It becomes the `vcd-ccm.io/LoadBalancerHealthy` condition (written only
//! when it changes), gauges per Service, and one Event per transition: a
//! Warning when a load balancer goes down, a Normal one when it is back.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;

use super::Shared;
use super::condition::{HEALTHY_CONDITION, Readiness, condition_of};
use super::metrics::ServiceLabels;
use super::predicates::{has_finalizer, needs_cleanup};
use super::sync::object_ref;
use crate::controllers::EventType::{Normal, Warning};
use crate::lb::PoolHealth;

/// The Event reason of a load balancer going down.
pub const UNHEALTHY: &str = "LoadBalancerUnhealthy";
/// The Event (and condition) reason of one that is up.
pub const HEALTHY: &str = "LoadBalancerHealthy";
/// The condition reason while VCD does not know.
const HEALTH_UNKNOWN: &str = "HealthUnknown";

pub(super) async fn health_loop(shared: Arc<Shared>, period: Duration) {
    let mut reported = HashSet::new();
    loop {
        tokio::time::sleep(period).await;
        match shared.lb.health().await {
            Ok(health) => reported = report(&shared, &health, reported).await,
            Err(error) => {
                shared.metrics.health_read_failures.inc();
                tracing::warn!(%error, "health check skipped: the gateway's pools could not be read; trying again next period");
            }
        }
    }
}

/// Reports every served Service; returns the label sets of the gauges set,
/// so those of Services gone since `before` are removed.
async fn report(
    shared: &Shared,
    health: &HashMap<String, PoolHealth>,
    before: HashSet<ServiceLabels>,
) -> HashSet<ServiceLabels> {
    let mut now = HashSet::new();
    let served =
        shared.services.state().into_iter().filter(|s| {
            shared.class.wants_load_balancer(s) && has_finalizer(s) && !needs_cleanup(s)
        });
    for service in served {
        let Some(uid) = service.metadata.uid.as_deref() else {
            continue;
        };
        let pools = health.get(uid);
        let labels = ServiceLabels::of(&service);
        let metrics = &shared.metrics;
        match pools {
            Some(p) => {
                metrics
                    .members_up
                    .get_or_create(&labels)
                    .set(i64::from(p.up));
                metrics
                    .members_enabled
                    .get_or_create(&labels)
                    .set(i64::from(p.enabled));
            }
            None => {
                metrics.members_up.remove(&labels);
                metrics.members_enabled.remove(&labels);
            }
        }
        let (healthy, reason, message) = verdict(pools);
        if let Some(up) = healthy {
            metrics.healthy.get_or_create(&labels).set(i64::from(up));
        } else {
            metrics.healthy.remove(&labels);
        }
        now.insert(labels);
        transition(shared, &service, healthy, &message).await;
        let wanted = Readiness::healthy(healthy, reason, &message);
        shared.writes.set_condition(&service, &wanted).await;
    }
    for gone in before.difference(&now) {
        shared.metrics.members_up.remove(gone);
        shared.metrics.members_enabled.remove(gone);
        shared.metrics.healthy.remove(gone);
    }
    now
}

/// Whether members are up behind the Service, and how to say so.
fn verdict(pools: Option<&PoolHealth>) -> (Option<bool>, &'static str, String) {
    let Some(p) = pools else {
        return (
            None,
            HEALTH_UNKNOWN,
            "VCD lists no pool of this load balancer yet".into(),
        );
    };
    let counted = format!("{} of {} members up", p.up, p.enabled);
    let with_vcd = |text: String| match &p.message {
        Some(message) => format!("{text}; VCD: {message}"),
        None => text,
    };
    match () {
        _ if p.unknown == p.pools => (
            None,
            HEALTH_UNKNOWN,
            "VCD does not know the members' health yet".into(),
        ),
        _ if p.up == 0 => (Some(false), UNHEALTHY, with_vcd(counted)),
        _ => (Some(true), HEALTHY, counted),
    }
}

/// One Event when the status changes between True and False: the
/// condition the Service carries is the memory, across restarts too.
async fn transition(shared: &Shared, service: &Service, healthy: Option<bool>, message: &str) {
    let before = condition_of(service, HEALTHY_CONDITION).map(|c| c.status.as_str());
    let reference = object_ref(service);
    match (before, healthy) {
        (Some("True") | Some("Unknown") | None, Some(false)) => {
            tracing::warn!(service = ?service.metadata.name, namespace = ?service.metadata.namespace, %message, "load balancer down");
            shared.event(&reference, Warning, UNHEALTHY, message).await;
        }
        (Some("False"), Some(true)) => {
            shared.event(&reference, Normal, HEALTHY, message).await;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_count_members_and_quote_vcd_when_down() {
        let down = PoolHealth {
            pools: 1,
            enabled: 3,
            up: 0,
            unknown: 0,
            message: Some("all members failed".into()),
        };
        assert_eq!(
            verdict(Some(&down)),
            (
                Some(false),
                UNHEALTHY,
                "0 of 3 members up; VCD: all members failed".into()
            )
        );
        let up = PoolHealth {
            up: 2,
            message: None,
            ..down.clone()
        };
        assert_eq!(verdict(Some(&up)).0, Some(true));
        assert_eq!(verdict(Some(&up)).2, "2 of 3 members up");
        let unknown = PoolHealth { unknown: 1, ..down };
        assert_eq!(verdict(Some(&unknown)).0, None);
        assert_eq!(verdict(None).0, None);
    }
}

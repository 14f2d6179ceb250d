//! Drift repair: every period the gateway's load-balancer objects are read
//! again (one read per object family, whatever the number of Services) and
//! every served Service is queued, so its reconcile compares the Service
//! with what VCD now holds at no per-Service read. An object deleted or
//! changed by hand (as the gateway's summaries show it: existence, VIP,
//! ownership tag, pool member count) is written back, and the Service gets
//! a Warning Event naming what was repaired.

use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use super::predicates::needs_cleanup;
use super::spec::service_key;
use crate::text::sanitize;

/// The Event reason of a repair.
pub const REPAIRED: &str = "LoadBalancerRepaired";
/// Room for the list of repaired objects in one Event.
const CHANGES_BYTES: usize = 768;

pub(super) async fn drift_loop(shared: Arc<Shared>, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        // Marked before the read as well as after it: a sync that runs, or
        // is still running, while fresh objects arrive is the check that
        // finds their drift, and says so.
        let keys = served_keys(&shared);
        shared.drift_marks.replace(&keys);
        if let Err(error) = shared.lb.refresh_gateway().await {
            shared.drift_marks.replace(&[]);
            tracing::warn!(%error, "drift check skipped: the gateway could not be read; trying again next period");
            continue;
        }
        let keys = served_keys(&shared);
        tracing::debug!(
            services = keys.len(),
            "checking every load balancer against VCD"
        );
        shared.drift_marks.replace(&keys);
        shared.metrics.drift_checks.inc();
        for key in keys {
            shared.queue.add(key);
        }
    }
}

fn served_keys(shared: &Shared) -> Vec<String> {
    shared
        .services
        .state()
        .iter()
        .filter(|s| shared.class.wants_load_balancer(s) && !needs_cleanup(s))
        .map(|s| service_key(s))
        .collect()
}

/// The Warning of a drift check that wrote something.
pub(super) async fn report_repair(
    shared: &Shared,
    reference: &k8s_openapi::api::core::v1::ObjectReference,
    changes: &[String],
) {
    let list = sanitize(&changes.join(", "), CHANGES_BYTES);
    let message = format!(
        "The load balancer in VCD no longer matched the Service (changed or deleted outside the CCM) and was repaired: {list}"
    );
    tracing::warn!(service = ?reference.name, namespace = ?reference.namespace, %list, "repaired load balancer drift");
    shared.metrics.drift_repairs.inc();
    shared
        .event(
            reference,
            crate::controllers::EventType::Warning,
            REPAIRED,
            &message,
        )
        .await;
}

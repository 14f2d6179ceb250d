//! The sweep at start: deletes VCD objects of Services that no longer exist,
//! and reports what it found tagged like this cluster's but left alone.

use std::collections::HashSet;

use super::Shared;
use super::metrics::{KindLabels, LeftAloneLabels};
use super::predicates::has_finalizer;
use crate::controllers::EventType;
use crate::lb::SweepReport;
use crate::text::sanitize;

/// Room for a few identities or cluster ids in one message.
const LIST_BYTES: usize = 512;

/// Deletes objects tagged for Services that no longer exist (crash
/// leftovers). Runs before any sync, so it cannot race one.
pub(super) async fn sweep(shared: &Shared) {
    let _permit = shared.gate.enter().await;
    let live: HashSet<String> = shared
        .services
        .state()
        .iter()
        .filter(|s| shared.class.wants_load_balancer(s) || has_finalizer(s))
        .filter_map(|s| s.metadata.uid.clone())
        .collect();
    match shared.lb.sweep(&live).await {
        Ok(report) => report_sweep(shared, &report).await,
        Err(error) => {
            tracing::warn!(%error, "the sweep of deleted Services' objects failed; it runs again at the next start")
        }
    }
}

async fn report_sweep(shared: &Shared, report: &SweepReport) {
    let counts = [
        ("other_cluster", report.other_clusters.len()),
        ("former_cluster_id", report.former_cluster_ids.len()),
        ("unattributed", report.unattributed),
    ];
    if report.retained > 0 {
        tracing::info!(
            allocations = report.retained,
            "IP Space allocations kept for deleted Services (vcd-ccm.io/retain-address) stay until a Service of the same namespace and name takes them back or someone releases them in VCD"
        );
    }
    for (reason, count) in counts {
        shared
            .metrics
            .sweep_left_alone
            .get_or_create(&LeftAloneLabels { reason })
            .set(count as i64);
    }
    for (kind, count) in report.newer_format_by_kind() {
        shared
            .metrics
            .newer_format_objects
            .get_or_create(&KindLabels { kind })
            .set(count as i64);
    }
    let on = &shared.events_on;
    if !report.other_clusters.is_empty() {
        let message = format!(
            "Another Kubernetes cluster (kube-system uid {}) writes VCD objects with this cluster's clusterid on the same edge gateway, typically from a copied cloud config. Neither deletes the other's objects, but give each cluster its own clusterid.",
            joined(&report.other_clusters)
        );
        tracing::warn!(%message, "clusterid shared with another cluster");
        shared
            .event(on, EventType::Warning, "ClusterIdShared", &message)
            .await;
    }
    if !report.former_cluster_ids.is_empty() {
        let message = format!(
            "VCD objects of this cluster still carry the former clusterid {}. They are not deleted automatically: set clusterid back to migrate them, or delete them in VCD once the Services serve under the new id.",
            joined(&report.former_cluster_ids)
        );
        tracing::warn!(%message, "clusterid changed");
        shared
            .event(on, EventType::Warning, "ClusterIdChanged", &message)
            .await;
    }
    if report.unattributed > 0 {
        tracing::warn!(
            objects = report.unattributed,
            "objects tagged with this clusterid but no cluster identity belong to no live Service; they predate identities and may be another cluster's, so they are left for an operator to delete"
        );
    }
    if !report.services.is_empty() {
        tracing::info!(?report, "swept load-balancer objects of deleted Services");
    }
}

/// The values as one list. They come from VCD descriptions, so the list is
/// escaped and capped before it reaches a log line or an Event.
fn joined(items: &std::collections::BTreeSet<String>) -> String {
    let list = items.iter().cloned().collect::<Vec<_>>().join(", ");
    sanitize(&list, LIST_BYTES)
}

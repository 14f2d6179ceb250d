//! One Service sync, as upstream's `syncService`: ensure (finalizer first)
//! or clean up (finalizer last), Events with the upstream reasons, and a
//! status patch only when the ingress changed.

use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::{ObjectReference, Service};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::Shared;
use super::condition::{self, Readiness};
use super::metrics::ReconcileLabels;
use super::predicates::{has_finalizer, needs_cleanup};
use super::spec::{NodeKey, NodeSetDigest, current_ingress, ingress_of, service_key, service_spec};
use crate::controllers::EventType::{Normal, Warning};
use crate::controllers::service::drift;
use crate::controllers::service::rotation;
use crate::lb::{LbError, SHARING_KEY_ANNOTATION, ServiceSpec};

/// The Event (and condition) reason of a Service whose load balancer matches it.
const ENSURED: &str = "EnsuredLoadBalancer";
/// The Service moved between an internal and an external address.
const ADDRESS_MOVED: &str = "LoadBalancerAddressMoved";
const ENSURED_MESSAGE: &str = "Ensured load balancer";
/// The Event (and condition) reason of a sync that failed.
const SYNC_FAILED: &str = "SyncLoadBalancerFailed";

/// Our reason for a warning the Service's policy returned with its decision.
pub const POLICY_WARNING: &str = "LoadBalancerPolicyWarning";
/// The Warning of a Service that prefers two IP families and gets one.
pub const DUAL_STACK_NOT_SERVED: &str = "DualStackNotServed";

/// The Warning for source ranges nothing enforces.
const SOURCE_RANGES_UNENFORCED: &str = "spec.loadBalancerSourceRanges (or the service.beta.kubernetes.io/load-balancer-source-ranges annotation) is not enforced: the CCM does not manage the edge gateway firewall, so the load balancer is reachable from anywhere the gateway firewall allows. Set loadbalancer.manageFirewall: true in the cloud config (the role then needs the gateway firewall rights) to enforce it, or restrict the gateway firewall yourself";

/// Why a sync failed, worded as upstream's error chain.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("unexpected key format: {0:?}")]
    Key(String),
    #[error("failed to check if load balancer exists before cleanup: {0}")]
    CheckBeforeCleanup(#[source] LbError),
    #[error("failed to delete load balancer: {0}")]
    Delete(#[source] LbError),
    #[error("failed to ensure load balancer: {0}")]
    Ensure(#[source] LbError),
    #[error("failed to add load balancer cleanup finalizer: {0}")]
    AddFinalizer(#[source] kube::Error),
    #[error("failed to remove load balancer cleanup finalizer: {0}")]
    RemoveFinalizer(#[source] kube::Error),
    #[error("failed to update load balancer status: {0}")]
    Status(#[source] kube::Error),
    #[error("the sync panicked (a bug: see the log); retried with backoff")]
    Panicked,
}

pub fn object_ref(service: &Service) -> ObjectReference {
    service.object_ref(&())
}

pub(super) async fn sync(shared: &Shared, key: &str) -> Result<(), SyncError> {
    let (namespace, name) = key
        .split_once('/')
        .ok_or_else(|| SyncError::Key(key.to_string()))?;
    let at = ObjectRef::new(name).within(namespace);
    let sharing_key = shared
        .services
        .get(&at)
        .or_else(|| shared.cached(key))
        .and_then(|service| service.annotations().get(SHARING_KEY_ANNOTATION).cloned());
    let _exclusive = shared.exclusive(key, sharing_key.as_deref()).await;
    let found = shared.services.get(&at);
    match found {
        None => process_deletion(shared, key).await,
        Some(service) => process_create_or_update(shared, key, service).await,
    }
}

/// The Service is gone without our finalizer having run (it was
/// removed by someone else): delete what the cache says it had.
async fn process_deletion(shared: &Shared, key: &str) -> Result<(), SyncError> {
    let Some(cached) = shared.cached(key) else {
        return Ok(());
    };
    if shared.class.wants_load_balancer(&cached) {
        legacy_delete(shared, &cached).await?;
    }
    shared.forget(key);
    Ok(())
}

async fn legacy_delete(shared: &Shared, service: &Service) -> Result<(), SyncError> {
    let reference = object_ref(service);
    shared
        .event(
            &reference,
            Normal,
            "DeletingLoadBalancer",
            "Deleting load balancer",
        )
        .await;
    let spec = service_spec(service, Default::default());
    if let Err(error) = timed(shared, "delete", shared.lb.delete(&spec)).await {
        let message = format!("Error deleting load balancer: {error}");
        shared
            .event(&reference, Warning, "DeleteLoadBalancerFailed", &message)
            .await;
        return Err(SyncError::Delete(error));
    }
    shared
        .event(
            &reference,
            Normal,
            "DeletedLoadBalancer",
            "Deleted load balancer",
        )
        .await;
    Ok(())
}

async fn process_create_or_update(
    shared: &Shared,
    key: &str,
    service: Arc<Service>,
) -> Result<(), SyncError> {
    if let Some(cached) = shared.cached(key)
        && cached.metadata.uid != service.metadata.uid
        && shared.class.wants_load_balancer(&cached)
    {
        // Deleted and created again under the same name.
        legacy_delete(shared, &cached).await?;
    }
    if shared.class.wants_load_balancer(&service)
        && !needs_cleanup(&service)
        && shared.caches.namespace_labels(&service).is_none()
    {
        // Ensuring now would pick a policy without the Namespace's
        // labels; its arrival in the cache queues the Service again.
        tracing::debug!(service = %key, "waiting for the Service's Namespace");
        return Ok(());
    }
    shared.remember(key, &service);
    let result = sync_load_balancer(shared, &service).await;
    match &result {
        Err(error) => {
            let message = format!("Error syncing load balancer: {error}");
            shared
                .event(&object_ref(&service), Warning, SYNC_FAILED, &message)
                .await;
            if shared.class.wants_load_balancer(&service) && !needs_cleanup(&service) {
                let failed = Readiness::not_ready(SYNC_FAILED, &message);
                shared.writes.set_condition(&service, &failed).await;
            }
        }
        Ok(Outcome::Deleted) => shared.forget(key),
        Ok(Outcome::Ensured) => {}
    }
    result.map(drop)
}

async fn sync_load_balancer(shared: &Shared, service: &Service) -> Result<Outcome, SyncError> {
    let previous = current_ingress(service);
    let (wanted, outcome, condition) =
        if !shared.class.wants_load_balancer(service) || needs_cleanup(service) {
            if !clean_up(shared, service).await? {
                return Ok(Outcome::Deleted);
            }
            (Vec::new(), Outcome::Deleted, condition::removals(service))
        } else {
            let wanted = ensure(shared, service).await?;
            let ready = Readiness::ready(ENSURED, ENSURED_MESSAGE).change(service);
            (
                wanted,
                Outcome::Ensured,
                ready.map(condition::entry).into_iter().collect(),
            )
        };
    let ingress = (previous != wanted).then_some(wanted.as_slice());
    shared
        .writes
        .set_status(service, ingress, condition)
        .await
        .map_err(SyncError::Status)?;
    Ok(outcome)
}

/// Deletes the Service's load balancer and removes the finalizer; `false`
/// when the Service is another implementation's (a class not served and
/// nothing of ours in VCD), which is left as it is.
async fn clean_up(shared: &Shared, service: &Service) -> Result<bool, SyncError> {
    let reference = object_ref(service);
    let spec = service_spec(service, Default::default());
    let exists = shared
        .lb
        .get(&spec)
        .await
        .map_err(SyncError::CheckBeforeCleanup)?
        .is_some();
    // The cleanup finalizer is shared by every implementation; a Service
    // whose class is not served is ours only if we hold something for it.
    let journaled = service
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(crate::lb::journal::ANNOTATION));
    if !(shared.class.serves_class_of(service) || exists || journaled) {
        tracing::debug!(service = %service_key(service), served = %shared.class.describe(), "left to the implementation that serves its class");
        return Ok(false);
    }
    if exists {
        shared
            .event(
                &reference,
                Normal,
                "DeletingLoadBalancer",
                "Deleting load balancer",
            )
            .await;
        timed(shared, "delete", shared.lb.delete(&spec))
            .await
            .map_err(SyncError::Delete)?;
    }
    if has_finalizer(service) {
        shared
            .writes
            .remove_finalizer(service)
            .await
            .map_err(SyncError::RemoveFinalizer)?;
    }
    shared
        .event(
            &reference,
            Normal,
            "DeletedLoadBalancer",
            "Deleted load balancer",
        )
        .await;
    Ok(true)
}

async fn ensure(
    shared: &Shared,
    service: &Service,
) -> Result<Vec<k8s_openapi::api::core::v1::LoadBalancerIngress>, SyncError> {
    let reference = object_ref(service);
    let drift_check = shared.drift_marks.take(&service_key(service));
    let rotation_check = shared.rotation_marks.take(&service_key(service));
    if !drift_check && !rotation_check {
        shared
            .event(
                &reference,
                Normal,
                "EnsuringLoadBalancer",
                "Ensuring load balancer",
            )
            .await;
    }
    shared
        .writes
        .add_finalizer(service)
        .await
        .map_err(SyncError::AddFinalizer)?;
    let nodes = shared
        .caches
        .members_of(service, shared.lb.probes_local_nodes());
    if let Some((reason, message)) = shared.no_members(service, &nodes) {
        shared.event(&reference, Warning, reason, message).await;
    }
    let key = service_key(service);
    shared
        .last_synced()
        .insert(key.clone(), NodeSetDigest::of(&nodes));
    let spec = ServiceSpec {
        read_unsummarised: drift_check,
        ..shared.caches.spec_of(service)
    };
    let node_specs: Vec<_> = nodes.iter().map(NodeKey::node_spec).collect();
    tracing::debug!(service = %service_key(service), "ensuring the load balancer");
    let status = match timed(shared, "ensure", shared.lb.ensure(&spec, &node_specs)).await {
        Ok(status) => status,
        Err(error) => {
            // The retry finishes what the check found: it is the repair
            // (or the certificate update) and says so.
            if drift_check {
                shared.drift_marks.restore(&key);
            }
            if rotation_check {
                shared.rotation_marks.restore(&key);
            }
            return Err(SyncError::Ensure(error));
        }
    };
    for warning in &status.warnings {
        shared
            .event(&reference, Warning, POLICY_WARNING, warning)
            .await;
    }
    if let Some(message) = &status.moved {
        shared
            .event(&reference, Normal, ADDRESS_MOVED, message)
            .await;
    }
    if let Some(message) = &status.dual_stack_not_served {
        shared
            .event(&reference, Warning, DUAL_STACK_NOT_SERVED, message)
            .await;
    }
    if status.source_ranges_unenforced {
        shared
            .event(
                &reference,
                Warning,
                "SourceRangesNotEnforced",
                SOURCE_RANGES_UNENFORCED,
            )
            .await;
    }
    if let Some(after) = status.recheck_after {
        tracing::debug!(service = %service_key(service), after_s = after.as_secs(), "a drain is under way; reconciling again when it ends");
        shared.queue.add_after(service_key(service), after);
    }
    // A sync that was already running when a drift check read fresh
    // objects may be the one that repaired them.
    let drift_check = drift_check || shared.drift_marks.contains(&key);
    match (drift_check, rotation_check, status.changes.is_empty()) {
        (true, _, true) | (false, true, true) => {}
        (true, _, false) => drift::report_repair(shared, &reference, &status.changes).await,
        (false, true, false) => {
            rotation::report_certificate_update(shared, &reference, &status.changes).await
        }
        (false, false, _) => {
            shared
                .event(&reference, Normal, ENSURED, ENSURED_MESSAGE)
                .await
        }
    }
    Ok(ingress_of(&status))
}

pub(super) async fn timed<T>(
    shared: &Shared,
    operation: &'static str,
    call: impl Future<Output = Result<T, LbError>>,
) -> Result<T, LbError> {
    let started = Instant::now();
    let result = call.await;
    let outcome = if result.is_ok() { "success" } else { "error" };
    shared
        .metrics
        .reconcile_duration
        .get_or_create(&ReconcileLabels { operation, outcome })
        .observe(started.elapsed().as_secs_f64());
    result
}

enum Outcome {
    Ensured,
    Deleted,
}

//! Certificate rotation: a Secret named by `vcd-ccm.io/tls-secret` may
//! change at any time (cert-manager renews it) and no watch tells the CCM,
//! whose role may only `get` Secrets. So every period each served Service
//! with the annotation is queued: its reconcile reads its Secrets again
//! (one GET each) and writes nothing in VCD unless a certificate changed,
//! in which case the new one is uploaded, the virtual services switch to
//! it and the older upload is deleted. Such a sync makes no Event unless it
//! changed something.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;

use super::Shared;
use super::predicates::needs_cleanup;
use super::spec::service_key;
use crate::controllers::EventType;
use crate::lb::tls::TLS_SECRET_ANNOTATION;
use crate::text::sanitize;

/// The default period of the check.
pub const DEFAULT_TLS_SECRET_PERIOD: Duration = Duration::from_secs(60);
/// The Event reason of a check that changed the load balancer.
pub const CERTIFICATE_UPDATED: &str = "CertificateUpdated";
/// Room for the list of changed objects in one Event.
const CHANGES_BYTES: usize = 768;

pub(super) async fn rotation_loop(shared: Arc<Shared>, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        let keys: Vec<String> = shared
            .services
            .state()
            .iter()
            .filter(|s| shared.class.wants_load_balancer(s) && !needs_cleanup(s))
            .filter(|s| {
                s.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(TLS_SECRET_ANNOTATION))
                    .is_some_and(|v| !v.trim().is_empty())
            })
            .map(|s| service_key(s))
            .collect();
        tracing::debug!(
            services = keys.len(),
            "checking the TLS Secrets of Services"
        );
        shared.rotation_marks.replace(&keys);
        for key in keys {
            shared.queue.add(key);
        }
    }
}

/// The Event of a rotation check that wrote something.
pub(super) async fn report_certificate_update(
    shared: &Shared,
    reference: &ObjectReference,
    changes: &[String],
) {
    let list = sanitize(&changes.join(", "), CHANGES_BYTES);
    let message = format!(
        "The Service's TLS Secrets were read again and the load balancer now matches them: {list}"
    );
    shared
        .event(reference, EventType::Normal, CERTIFICATE_UPDATED, &message)
        .await;
}

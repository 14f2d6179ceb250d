//! `externalTrafficPolicy: Local`: a load balancer's members are the nodes
//! that run a ready endpoint of the Service, read from its EndpointSlices.
//! Endpoint churn is coalesced per Service, and a Service's members are
//! written only when that node set changes: a rollout that moves pods
//! between the same nodes writes nothing.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::Store;
use tokio::sync::Notify;

use super::Shared;
use crate::controllers::informer::Change;
use crate::controllers::service::nodesync;

/// The label an EndpointSlice names its Service with.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// Endpoint changes arriving within this window after the first one are
/// handled together.
pub const COALESCE: Duration = Duration::from_secs(1);

/// What a Service's EndpointSlices say is ready.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadyEndpoints {
    /// Ready endpoints, across all slices and address families.
    pub count: u32,
    /// The nodes those endpoints run on.
    pub nodes: BTreeSet<String>,
}

/// The ready endpoints of `namespace/name`. An endpoint whose `ready`
/// condition is unset counts as ready, as the API defines it.
pub fn ready_endpoints(
    slices: &Store<EndpointSlice>,
    namespace: &str,
    name: &str,
) -> ReadyEndpoints {
    let mut ready = ReadyEndpoints::default();
    for slice in slices.state() {
        let of_service = slice.metadata.namespace.as_deref() == Some(namespace)
            && slice
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(SERVICE_NAME_LABEL))
                .is_some_and(|n| n == name);
        if !of_service {
            continue;
        }
        for endpoint in slice.endpoints.iter().flatten() {
            let is_ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !is_ready {
                continue;
            }
            ready.count = ready.count.saturating_add(1);
            if let Some(node) = &endpoint.node_name {
                ready.nodes.insert(node.clone());
            }
        }
    }
    ready
}

/// Whether the Service's members follow its endpoints.
pub fn is_local(service: &Service) -> bool {
    service
        .spec
        .as_ref()
        .and_then(|s| s.external_traffic_policy.as_deref())
        .is_some_and(|p| p == "Local")
}

/// Whether the Service has a `healthCheckNodePort` a load balancer can probe.
pub fn has_health_check_node_port(service: &Service) -> bool {
    service
        .spec
        .as_ref()
        .and_then(|s| s.health_check_node_port)
        .is_some_and(|p| p > 0)
}

/// Services whose endpoints changed since the last pass.
#[derive(Clone, Default)]
pub struct EndpointChanges {
    services: Arc<Mutex<HashSet<String>>>,
    notify: Arc<Notify>,
}

impl EndpointChanges {
    /// The informer handler: notes the Service of every changed slice.
    pub fn handler(&self) -> impl FnMut(&Change<EndpointSlice>) + Send + 'static {
        let changes = self.clone();
        move |change| {
            let slice = match change {
                Change::Added(slice) | Change::Deleted(slice) => slice,
                // Label and annotation changes do not move endpoints.
                Change::Updated { old, new } if old.endpoints == new.endpoints => return,
                Change::Updated { new, .. } => new,
            };
            let name = slice
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(SERVICE_NAME_LABEL));
            if let (Some(namespace), Some(name)) = (&slice.metadata.namespace, name) {
                changes
                    .services
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(format!("{namespace}/{name}"));
                changes.notify.notify_one();
            }
        }
    }

    async fn next_batch(&self) -> HashSet<String> {
        self.notify.notified().await;
        tokio::time::sleep(COALESCE).await;
        std::mem::take(&mut *self.services.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Gives each `Local` Service whose endpoints changed its new member set,
/// through the same path as node changes; not where the load balancer
/// probes the Service's `healthCheckNodePort` (API 39.0+).
pub async fn endpoint_sync_loop(shared: Arc<Shared>, changes: EndpointChanges) {
    loop {
        let keys = changes.next_batch().await;
        for key in keys {
            let Some(service) = shared.cached(&key) else {
                continue;
            };
            if !is_local(&service) || !shared.class.wants_load_balancer(&service) {
                continue;
            }
            // Its load balancer probes the Nodes: endpoints moving is no write.
            if shared.lb.probes_local_nodes() && has_health_check_node_port(&service) {
                shared.metrics.endpoint_changes_probed.inc();
                continue;
            }
            if let Some(retry) = nodesync::sync_service_nodes(&shared, &service).await {
                shared.queue.add(retry);
            }
        }
    }
}

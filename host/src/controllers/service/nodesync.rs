//! Node changes: every Service this controller has synced whose members
//! changed gets `update`, as upstream's `syncNodes` (endpoint changes of
//! `Local` Services take the same path). A failed update sends
//! the Service back to the service queue for a full ensure.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;

use super::Shared;
use super::predicates::needs_cleanup;
use super::spec::service_key;
use super::spec::{NodeKey, NodeSetDigest};
use super::sync::object_ref;
use crate::controllers::EventType::{Normal, Warning};
use crate::controllers::service::sync;

/// Upstream caps the node names in a failure message at this many.
const MAX_NODE_NAMES: usize = 20;

pub(super) async fn sync_nodes(shared: &Arc<Shared>) {
    let started = Instant::now();
    let services: Vec<Arc<Service>> = shared
        .cache()
        .values()
        .filter(|s| shared.class.wants_load_balancer(s))
        .cloned()
        .collect();
    let retries: Vec<String> = futures::stream::iter(services)
        .map(|service| {
            let shared = Arc::clone(shared);
            async move { sync_service_nodes(&shared, &service).await }
        })
        .buffer_unordered(shared.workers)
        .filter_map(|retry| async move { retry })
        .collect()
        .await;
    for key in retries {
        shared.queue.add(key);
    }
    shared
        .metrics
        .nodesync_latency
        .observe(started.elapsed().as_secs_f64());
}

/// Returns the Service's key when it must be retried.
pub(super) async fn sync_service_nodes(shared: &Shared, service: &Service) -> Option<String> {
    let key = service_key(service);
    let _exclusive = shared.exclusive(&key, None).await;
    // As its last sync saw it, which may be newer than the pass's copy.
    let service = shared.cache().get(&key).cloned()?; // gone: deleted meanwhile
    if !shared.class.wants_load_balancer(&service) || needs_cleanup(&service) {
        // Its load balancer is being deleted: an update would rebuild it.
        return None;
    }
    // Read under the lock, not once per pass: a sync that ran meanwhile
    // may have given the load balancer a newer set (upstream's
    // TestSlowNodeSync).
    let nodes = shared
        .caches
        .members_of(&service, shared.lb.probes_local_nodes());
    {
        let mut synced = shared.last_synced();
        // Not ensured yet (its finalizer may not be set): its own sync
        // creates the load balancer, with the nodes of that moment.
        let previous = synced.get_mut(&key)?;
        let digest = NodeSetDigest::of(&nodes);
        if *previous == digest {
            return None;
        }
        *previous = digest;
    }
    shared.metrics.loadbalancer_sync.inc();
    let spec = shared.caches.spec_of(&service);
    let members: Vec<_> = nodes.iter().map(NodeKey::node_spec).collect();
    let started = Instant::now();
    tracing::debug!(service = %key, nodes = members.len(), "updating the load balancer's nodes");
    let result = sync::timed(shared, "update", shared.lb.update(&spec, &members)).await;
    tracing::debug!(service = %key, ok = result.is_ok(), "updated");
    shared
        .metrics
        .update_host_latency
        .observe(started.elapsed().as_secs_f64());
    let reference = object_ref(&service);
    if let Ok(status) = &result {
        if let Some(after) = status.recheck_after {
            shared.queue.add_after(key.clone(), after);
        }
        // Such as a node selector that no Node meets any more.
        for warning in &status.warnings {
            shared
                .event(&reference, Warning, sync::POLICY_WARNING, warning)
                .await;
        }
    }
    match result {
        Ok(_) if nodes.is_empty() => {
            if let Some((reason, message)) = shared.no_members(&service, &nodes) {
                shared.event(&reference, Warning, reason, message).await;
            }
            None
        }
        Ok(_) => {
            let message = "Updated load balancer with new hosts";
            shared
                .event(&reference, Normal, "UpdatedLoadBalancer", message)
                .await;
            None
        }
        Err(error) => {
            if let Ok(None) = shared.lb.get(&spec).await {
                return None;
            }
            shared.metrics.nodesync_error.inc();
            let message = format!(
                "Error updating load balancer with new hosts {} [node names limited, total number of nodes: {}], error: {error}",
                node_names(&nodes),
                nodes.len()
            );
            shared
                .event(&reference, Warning, "UpdateLoadBalancerFailed", &message)
                .await;
            Some(key)
        }
    }
}

/// Sorted names, at most [`MAX_NODE_NAMES`], as Go prints a slice.
fn node_names(nodes: &[NodeKey]) -> String {
    let mut names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    names.sort_unstable();
    let more = names.len().saturating_sub(MAX_NODE_NAMES);
    names.truncate(MAX_NODE_NAMES);
    let mut listed = names.join(" ");
    if more > 0 {
        listed.push_str(&format!(" <{more} more>"));
    }
    format!("[{listed}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_messages_list_at_most_twenty_sorted_names() {
        let nodes: Vec<NodeKey> = (0..23)
            .rev()
            .map(|i| NodeKey {
                name: format!("n{i:02}"),
                provider_id: None,
                internal_ip: None,
                labels: Default::default(),
            })
            .collect();
        let listed = node_names(&nodes);
        assert!(listed.starts_with("[n00 n01"), "{listed}");
        assert!(listed.ends_with("n19 <3 more>]"), "{listed}");
        assert_eq!(node_names(&nodes[..1]), "[n22]");
    }
}

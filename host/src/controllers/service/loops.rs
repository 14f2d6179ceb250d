//! The service controller's long-running tasks: the workers that sync
//! queued Services, the node-change loop and the cleanup resync.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use crate::controllers::service::nodesync;
use crate::controllers::service::sync;
use futures::FutureExt;
use tokio::sync::Notify;

use super::Shared;
use super::predicates::needs_cleanup;
use super::spec::service_key;
use super::sync::SyncError;

/// Services needing cleanup are queued again this often (upstream's
/// informer resync of the service handler).
const CLEANUP_RESYNC: Duration = Duration::from_secs(30);

pub(super) async fn worker(shared: Arc<Shared>) {
    loop {
        let key = shared.queue.next().await;
        shared.metrics.queue_depth.set(shared.queue.len() as i64);
        let started = std::time::Instant::now();
        // A panic in one sync fails that sync (retried with backoff), not
        // the worker: the key would otherwise stay taken for good.
        let result = AssertUnwindSafe(sync::sync(&shared, &key))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err(SyncError::Panicked));
        shared
            .metrics
            .work_duration
            .observe(started.elapsed().as_secs_f64());
        match result {
            Ok(()) => shared.backoff.forget(&key),
            Err(error) => {
                let delay = shared.backoff.next_delay(key.clone());
                tracing::warn!(service = %key, %error, retry_in = ?delay, "service sync failed");
                shared.metrics.queue_retries.inc();
                shared.queue.add_after(key.clone(), delay);
            }
        }
        shared.queue.done(&key);
        shared.drop_lock_if_unused(&key);
    }
}

pub(super) async fn node_sync_loop(shared: Arc<Shared>, changed: Arc<Notify>) {
    loop {
        changed.notified().await;
        nodesync::sync_nodes(&shared).await;
    }
}

pub(super) async fn cleanup_resync_loop(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(CLEANUP_RESYNC).await;
        for service in shared.services.state() {
            if needs_cleanup(&service) {
                shared.queue.add(service_key(&service));
            }
        }
    }
}

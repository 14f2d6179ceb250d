//! Per-gateway write serialisation. VCD answers `BUSY_ENTITY` to a second
//! write on a gateway while the first one's task runs; holding one lock per
//! gateway for the whole write (request and task) keeps this process from
//! tripping over itself. Other writers still cause `BUSY_ENTITY`, which the
//! retry layer absorbs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::client::{ApiRequest, VcdClient};
use super::errors::VcdError;
use super::tasks::Task;

#[derive(Debug, Default)]
pub struct GatewayLocks {
    locks: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
}

impl GatewayLocks {
    /// Waits for the gateway's write slot; the slot is free again when the
    /// guard drops.
    pub async fn acquire(&self, gateway_id: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            locks.entry(gateway_id.to_string()).or_default().clone()
        };
        lock.lock_owned().await
    }
}

impl VcdClient {
    /// A write scoped to a gateway (NAT, pool, virtual service): sent and
    /// its task awaited while holding the gateway's write slot.
    pub(in crate::vcd) async fn write_on_gateway(
        &self,
        gateway_id: &str,
        request: ApiRequest,
    ) -> Result<Option<Task>, VcdError> {
        let _slot = self.gateway_locks().acquire(gateway_id).await;
        self.write(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_writer_per_gateway_at_a_time() {
        let locks = Arc::new(GatewayLocks::default());
        let held = locks.acquire("gw1").await;
        let other_gateway =
            tokio::time::timeout(Duration::from_millis(50), locks.acquire("gw2")).await;
        assert!(other_gateway.is_ok());
        let same = tokio::time::timeout(Duration::from_millis(50), locks.acquire("gw1")).await;
        assert!(same.is_err());
        drop(held);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), locks.acquire("gw1"))
                .await
                .is_ok()
        );
    }
}

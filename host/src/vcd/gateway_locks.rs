//! One write slot per edge gateway (see `serialize.rs` for why): the lock
//! table the client holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

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

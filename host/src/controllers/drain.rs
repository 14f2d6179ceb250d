//! Stopping between syncs, not in the middle of one. Every unit of work
//! that writes (a Service's sync, a Node's sync, a lifecycle pass, the
//! sweep) holds a [`SyncPermit`] while it runs. On SIGTERM the manager
//! closes the gate: no new unit starts, the running ones finish (up to a
//! bound), and only then is the leader Lease released, so the next leader
//! never races a half-done write of this one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// Shared by every controller of one process; clones are the same gate.
#[derive(Clone, Debug, Default)]
pub struct SyncGate {
    lock: Arc<RwLock<()>>,
    /// Held once closed, so no permit is ever handed out again.
    closed: Arc<Mutex<Option<OwnedRwLockWriteGuard<()>>>>,
}

/// Held for the length of one unit of work.
pub struct SyncPermit {
    _held: OwnedRwLockReadGuard<()>,
}

/// How closing the gate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// Every running unit finished, within the time given.
    Finished(Duration),
    /// Units were still running when the bound passed; they are cut.
    TimedOut(Duration),
}

impl SyncGate {
    /// Waits for room to start a unit. Once [`SyncGate::close`] has begun it
    /// never resolves: the process is stopping, and the task is aborted.
    pub async fn enter(&self) -> SyncPermit {
        // tokio's lock is fair: a closing writer queues ahead of later
        // readers, so nothing new starts once `close` is called.
        SyncPermit {
            _held: self.lock.clone().read_owned().await,
        }
    }

    /// Stops new units and waits up to `limit` for the running ones.
    pub async fn close(&self, limit: Duration) -> Drained {
        let started = Instant::now();
        match tokio::time::timeout(limit, self.lock.clone().write_owned()).await {
            Ok(guard) => {
                *self.closed.lock().unwrap_or_else(|p| p.into_inner()) = Some(guard);
                Drained::Finished(started.elapsed())
            }
            Err(_) => Drained::TimedOut(started.elapsed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn closing_waits_for_running_units_and_starts_no_new_one() {
        let gate = SyncGate::default();
        let running = gate.enter().await;
        let closing = tokio::spawn({
            let gate = gate.clone();
            async move { gate.close(Duration::from_secs(5)).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let late = tokio::spawn({
            let gate = gate.clone();
            async move {
                let _permit = gate.enter().await;
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!closing.is_finished(), "closed while a unit still ran");
        drop(running);
        assert!(matches!(closing.await.unwrap(), Drained::Finished(_)));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!late.is_finished(), "a unit started after the gate closed");
        late.abort();
    }

    #[tokio::test]
    async fn closing_gives_up_after_its_bound() {
        let gate = SyncGate::default();
        let _stuck = gate.enter().await;
        let drained = gate.close(Duration::from_millis(50)).await;
        assert!(matches!(drained, Drained::TimedOut(_)), "{drained:?}");
    }
}

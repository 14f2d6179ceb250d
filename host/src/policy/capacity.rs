//! Fair shares of the instance pool: how many calls may run at once.
//!
//! The pooling allocator has [`POOL_SLOTS`] component instances (and, per
//! slot, room for one component's core instances, memories, tables and async
//! stack). The built-in `default` policy has [`DEFAULT_RESERVED`] slots no one
//! else can take; provider policies share the rest, each at most
//! [`PER_POLICY`] at a time. A call beyond its share waits for a slot, at most
//! [`SLOT_WAIT`], then fails with [`CallError::Busy`]: it never fails to
//! instantiate because another policy took the pool.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::errors::CallError;

/// Component instances the pool holds: every call needs one.
///
/// The service controller runs `--concurrent-service-syncs` reconciles (the
/// Go CCM's default is 1, large clusters use up to 10–20) and `policy test`
/// runs one call at a time, so 64 leaves ample room while keeping the pool's
/// reservation small (its address space is reserved up front).
pub const POOL_SLOTS: u32 = 64;
/// Slots only `default` may use, so a provider's policy can never starve the
/// Services that no provider policy governs.
pub const DEFAULT_RESERVED: u32 = 16;
/// The most calls one provider policy may run at once.
pub const PER_POLICY: u32 = 8;
/// How long a call waits for a slot before it fails.
pub const SLOT_WAIT: Duration = Duration::from_secs(2);

/// Which slots a policy draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The built-in default policy's reserved slots.
    Reserved,
    /// The slots provider policies share.
    Shared,
}

/// The engine-wide slot counters.
pub struct Capacity {
    reserved: Arc<Semaphore>,
    shared: Arc<Semaphore>,
}

impl Default for Capacity {
    fn default() -> Self {
        Capacity {
            reserved: Arc::new(Semaphore::new(DEFAULT_RESERVED as usize)),
            shared: Arc::new(Semaphore::new((POOL_SLOTS - DEFAULT_RESERVED) as usize)),
        }
    }
}

/// One policy's share: its own counter on top of its lane's.
pub struct Share {
    lane: Lane,
    own: Arc<Semaphore>,
}

impl Share {
    /// A share of `lane`: at most [`DEFAULT_RESERVED`] calls at once in the
    /// reserved lane, [`PER_POLICY`] in the shared one.
    pub(super) fn new(lane: Lane) -> Share {
        let own = match lane {
            Lane::Reserved => DEFAULT_RESERVED,
            Lane::Shared => PER_POLICY,
        };
        Share {
            lane,
            own: Arc::new(Semaphore::new(own as usize)),
        }
    }

    /// Waits (at most [`SLOT_WAIT`]) for a slot of this policy's share.
    pub async fn acquire(&self, capacity: &Capacity) -> Result<Slot, CallError> {
        let lane = match self.lane {
            Lane::Reserved => &capacity.reserved,
            Lane::Shared => &capacity.shared,
        };
        let busy = || CallError::Busy {
            share: match self.lane {
                Lane::Reserved => DEFAULT_RESERVED,
                Lane::Shared => PER_POLICY,
            },
            waited: SLOT_WAIT,
        };
        let both = async {
            let own = self.own.clone().acquire_owned().await;
            let pool = lane.clone().acquire_owned().await;
            (own, pool)
        };
        match tokio::time::timeout(SLOT_WAIT, both).await {
            // The semaphores are never closed.
            Ok((Ok(own), Ok(pool))) => Ok(Slot {
                _own: own,
                _pool: pool,
            }),
            _ => Err(busy()),
        }
    }
}

/// A held slot; dropping it frees the slot.
pub struct Slot {
    _own: OwnedSemaphorePermit,
    _pool: OwnedSemaphorePermit,
}

//! Fault hooks for reliability tests: failed writes, slow responses, dropped
//! and lagging watches.

use crate::error::ApiError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;

/// A write verb, as fault rules and the request log name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteVerb {
    Create,
    Update,
    Patch,
    Delete,
}

/// Fails the next `count` writes to one resource with a chosen status.
#[derive(Debug, Clone)]
pub struct WriteFault {
    /// The resource's plural name, e.g. `services`.
    pub resource: String,
    /// Only these verbs fail; `None` fails every write verb.
    pub verb: Option<WriteVerb>,
    pub count: u32,
    pub code: u16,
    pub reason: String,
    pub message: String,
}

impl WriteFault {
    /// A fault with the reason the real server uses for `code`.
    pub fn new(resource: &str, count: u32, code: u16) -> Self {
        let reason = match code {
            400 => "BadRequest",
            403 => "Forbidden",
            404 => "NotFound",
            409 => "Conflict",
            422 => "Invalid",
            429 => "TooManyRequests",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "InternalError",
        };
        Self {
            resource: resource.to_string(),
            verb: None,
            count,
            code,
            reason: reason.to_string(),
            message: format!("kubesim: injected {code} for {resource}"),
        }
    }

    /// Restricts the fault to one verb.
    pub fn on(mut self, verb: WriteVerb) -> Self {
        self.verb = Some(verb);
        self
    }
}

#[derive(Default)]
struct FaultState {
    write_faults: Vec<WriteFault>,
    /// Writes answered with an injected error since the last `clear`.
    writes_failed: u64,
    delay: Duration,
    /// Live watch events of these resources (by plural) arrive this late.
    watch_lag: HashMap<String, Duration>,
}

/// Shared fault settings; clones control the same server.
#[derive(Clone)]
pub struct Faults {
    state: Arc<Mutex<FaultState>>,
    /// Bumped to make every open watch drop its connection.
    watch_generation: Arc<watch::Sender<u64>>,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            state: Arc::default(),
            watch_generation: Arc::new(watch::channel(0).0),
        }
    }
}

impl Faults {
    fn lock(&self) -> MutexGuard<'_, FaultState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fails the next `count` writes to `resource` with `code`.
    pub fn fail_writes(&self, resource: &str, count: u32, code: u16) {
        self.add_write_fault(WriteFault::new(resource, count, code));
    }

    pub fn add_write_fault(&self, fault: WriteFault) {
        self.lock().write_faults.push(fault);
    }

    /// Delays every API response by `delay` (zero turns it off).
    pub fn set_delay(&self, delay: Duration) {
        self.lock().delay = delay;
    }

    /// Holds back each change of `resource` (its plural, e.g. `namespaces`)
    /// by `lag` on every watch, as a loaded server's watch cache does; other
    /// resources' watches stay current. Zero turns it off.
    pub fn lag_watches(&self, resource: &str, lag: Duration) {
        self.lock().watch_lag.insert(resource.to_string(), lag);
    }

    /// Cuts every open watch connection; clients must re-watch.
    pub fn drop_watches(&self) {
        self.watch_generation
            .send_modify(|generation| *generation += 1);
    }

    /// How many writes were answered with an injected error since the last
    /// [`Faults::clear`], so a test can show its fault fired.
    pub fn writes_failed(&self) -> u64 {
        self.lock().writes_failed
    }

    /// Removes all faults.
    pub fn clear(&self) {
        *self.lock() = FaultState::default();
    }

    pub(crate) fn delay(&self) -> Duration {
        self.lock().delay
    }

    pub(crate) fn watch_lag(&self, resource: &str) -> Duration {
        self.lock()
            .watch_lag
            .get(resource)
            .copied()
            .unwrap_or_default()
    }

    /// The error to answer a write with, consuming one use of a matching fault.
    pub(crate) fn take_write_fault(&self, resource: &str, verb: WriteVerb) -> Option<ApiError> {
        let mut state = self.lock();
        let fault = state
            .write_faults
            .iter_mut()
            .find(|f| f.count > 0 && f.resource == resource && f.verb.is_none_or(|v| v == verb))?;
        fault.count -= 1;
        let error = ApiError::Injected {
            code: fault.code,
            reason: fault.reason.clone(),
            message: fault.message.clone(),
        };
        state.writes_failed += 1;
        state.write_faults.retain(|f| f.count > 0);
        Some(error)
    }

    pub(crate) fn watch_drops(&self) -> watch::Receiver<u64> {
        self.watch_generation.subscribe()
    }
}

//! Services a periodic check (drift repair, TLS Secrets) queued and that
//! have not synced since: such a sync is quiet (no `EnsuringLoadBalancer` /
//! `EnsuredLoadBalancer` pair) unless it writes something.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

/// Keys of the Services one check queued.
#[derive(Debug, Default)]
pub(super) struct Marks(Mutex<HashSet<String>>);

impl Marks {
    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The check's marks are exactly `keys` (a Service deleted meanwhile
    /// keeps no mark past the next check).
    pub fn replace(&self, keys: &[String]) {
        *self.lock() = keys.iter().cloned().collect();
    }

    /// Whether this sync of `key` is the check's; the mark is used up.
    pub fn take(&self, key: &str) -> bool {
        self.lock().remove(key)
    }

    /// Marks `key` again: the check's sync failed, and its retry is the
    /// one that finishes the check's work.
    pub fn restore(&self, key: &str) {
        self.lock().insert(key.to_string());
    }

    /// Whether `key` is marked, leaving the mark in place.
    pub fn contains(&self, key: &str) -> bool {
        self.lock().contains(key)
    }
}

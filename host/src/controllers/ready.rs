//! Which controllers have synced their caches, for `/readyz`.

use std::sync::{Arc, Mutex};

/// The controllers' caches and whether each has its initial list.
#[derive(Clone, Default)]
pub struct CacheSync {
    caches: Arc<Mutex<Vec<(String, bool)>>>,
}

/// One cache's flag; set it once the cache has its initial list.
#[derive(Clone)]
pub struct SyncedFlag {
    owner: CacheSync,
    index: usize,
}

impl CacheSync {
    /// Adds a cache that is not yet synced.
    pub fn register(&self, name: &str) -> SyncedFlag {
        let mut caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
        caches.push((name.to_string(), false));
        SyncedFlag {
            owner: self.clone(),
            index: caches.len() - 1,
        }
    }

    /// A readiness check: fails, naming them, while caches wait for their
    /// initial list.
    pub fn check(&self) -> Result<(), String> {
        let pending = self.pending();
        if pending.is_empty() {
            Ok(())
        } else {
            Err(format!("caches not synced: {}", pending.join(", ")))
        }
    }

    /// The caches still waiting for their initial list.
    pub fn pending(&self) -> Vec<String> {
        let caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
        caches
            .iter()
            .filter(|(_, synced)| !synced)
            .map(|(name, _)| name.clone())
            .collect()
    }
}

impl SyncedFlag {
    /// Marks the cache synced.
    pub fn set(&self) {
        let mut caches = self.owner.caches.lock().unwrap_or_else(|p| p.into_inner());
        caches[self.index].1 = true;
    }
}

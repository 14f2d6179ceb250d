//! Pulled components by manifest digest, in memory, so a reload whose
//! entry is unchanged, or moves back to a digest still held, pulls nothing.
//! A reload keeps only the digests its manifest still names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::pull::Pulled;

/// Components pulled and verified, by manifest digest (lowercase hex).
#[derive(Default)]
pub struct PullCache {
    pulled: Mutex<HashMap<String, Arc<Pulled>>>,
}

impl PullCache {
    /// The component pinned by `manifest_digest`, if pulled before.
    pub fn get(&self, manifest_digest: &str) -> Option<Arc<Pulled>> {
        self.lock().get(manifest_digest).cloned()
    }

    /// Keeps `pulled` under its manifest digest.
    pub fn insert(&self, pulled: Arc<Pulled>) {
        self.lock().insert(pulled.manifest_digest.clone(), pulled);
    }

    /// Forgets every component whose digest is not in `in_use`.
    pub fn retain(&self, in_use: &[String]) {
        self.lock().retain(|digest, _| in_use.contains(digest));
    }

    /// How many components are held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Pulled>>> {
        self.pulled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

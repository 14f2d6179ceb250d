//! A small bounded cache of review answers: each entry expires after its
//! own TTL (refusals sooner than grants), and a full cache evicts the entry
//! closest to expiry, so a flood of distinct tokens or paths neither grows
//! memory nor stops good answers from being cached.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub(super) struct Cache<K, V> {
    capacity: usize,
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Hash + Eq + Clone, V: Clone> Cache<K, V> {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (value, expires) = entries.get(key)?;
        (Instant::now() < *expires).then(|| value.clone())
    }

    pub(super) fn put(&self, key: K, value: V, ttl: Duration) {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, (_, expires)| now < *expires);
            // Still full of live answers: the one due soonest goes. A linear
            // scan is cheap here, since inserts are paced by the access rate.
            if entries.len() >= self.capacity
                && let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, (_, expires))| *expires)
                    .map(|(key, _)| key.clone())
            {
                entries.remove(&soonest);
            }
        }
        entries.insert(key, (value, now + ttl));
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(10);

    #[test]
    fn a_full_cache_evicts_the_answer_due_soonest() {
        let cache: Cache<usize, bool> = Cache::new(3);
        cache.put(0, true, TTL);
        cache.put(1, false, Duration::from_secs(1));
        cache.put(2, true, TTL);
        cache.put(3, true, TTL);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&1), None, "the soonest to expire went");
        for key in [0, 2, 3] {
            assert_eq!(cache.get(&key), Some(true), "{key}");
        }
    }

    #[test]
    fn expired_answers_are_not_returned_and_make_room() {
        let cache: Cache<usize, bool> = Cache::new(2);
        cache.put(0, false, Duration::ZERO);
        cache.put(1, false, Duration::ZERO);
        assert_eq!(cache.get(&0), None, "expired");
        cache.put(2, true, TTL);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(&2), Some(true));
    }

    #[test]
    fn a_flood_of_distinct_keys_stays_within_the_capacity() {
        let cache: Cache<usize, bool> = Cache::new(64);
        for key in 0..10_000 {
            cache.put(key, false, TTL);
        }
        assert_eq!(cache.len(), 64);
        assert_eq!(cache.get(&9_999), Some(false), "the newest answer is kept");
    }
}

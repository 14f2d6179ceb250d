//! A work queue with client-go's guarantees: a key waits at most once, is
//! never handed to two workers at the same time, and a key added while it
//! is being processed is handed out again when its worker is done. Plus
//! client-go's per-key exponential failure backoff.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::sync::Notify;

struct State<K> {
    queue: VecDeque<K>,
    queued: HashSet<K>,
    processing: HashSet<K>,
    /// Added while processing: queued again by `done`.
    dirty: HashSet<K>,
}

pub struct WorkQueue<K> {
    state: Mutex<State<K>>,
    ready: Notify,
    /// client-go's `workqueue_adds_total`: keys that were not waiting yet.
    adds: Counter,
}

impl<K: Clone + Eq + Hash + Send + 'static> WorkQueue<K> {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                queued: HashSet::new(),
                processing: HashSet::new(),
                dirty: HashSet::new(),
            }),
            ready: Notify::new(),
            adds: Counter::default(),
        })
    }

    /// client-go's `workqueue_adds_total`, to register where wanted.
    pub fn adds(&self) -> Counter {
        self.adds.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn add(&self, key: K) {
        let mut state = self.lock();
        if state.processing.contains(&key) {
            if state.dirty.insert(key) {
                self.adds.inc();
            }
            return;
        }
        if state.queued.insert(key.clone()) {
            self.adds.inc();
            state.queue.push_back(key);
            drop(state);
            self.ready.notify_one();
        }
    }

    /// Adds `key` once `delay` has passed.
    pub fn add_after(self: &Arc<Self>, key: K, delay: Duration) {
        let queue = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(key);
        });
    }

    /// Waits for the next key; the caller must call `done` with it.
    pub async fn next(&self) -> K {
        loop {
            let notified = self.ready.notified();
            {
                let mut state = self.lock();
                if let Some(key) = state.queue.pop_front() {
                    state.queued.remove(&key);
                    state.processing.insert(key.clone());
                    if !state.queue.is_empty() {
                        self.ready.notify_one();
                    }
                    return key;
                }
            }
            notified.await;
        }
    }

    pub fn done(&self, key: &K) {
        let mut state = self.lock();
        state.processing.remove(key);
        if state.dirty.remove(key) && state.queued.insert(key.clone()) {
            state.queue.push_back(key.clone());
            drop(state);
            self.ready.notify_one();
        }
    }

    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }
}

/// `base × 2^failures`, at most `cap`; reset on success (client-go's
/// `ItemExponentialFailureRateLimiter`).
pub struct Backoff<K> {
    base: Duration,
    cap: Duration,
    failures: Mutex<HashMap<K, u32>>,
}

impl<K: Eq + Hash> Backoff<K> {
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// The delay before the next attempt; counts one more failure.
    pub fn next_delay(&self, key: K) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let count = failures.entry(key).or_insert(0);
        let delay = self
            .base
            .checked_mul(1u32.checked_shl(*count).unwrap_or(u32::MAX))
            .map_or(self.cap, |d| d.min(self.cap));
        *count = count.saturating_add(1);
        delay
    }

    pub fn forget(&self, key: &K) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// Drops the counts of keys `keep` rejects (objects that are gone).
    pub fn retain(&self, keep: impl Fn(&K) -> bool) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|key, _| keep(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_the_cap_and_resets() {
        let backoff = Backoff::new(Duration::from_secs(5), Duration::from_secs(300));
        let delays: Vec<u64> = (0..9).map(|_| backoff.next_delay("a").as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(backoff.next_delay("b").as_secs(), 5);
        backoff.forget(&"a");
        assert_eq!(backoff.next_delay("a").as_secs(), 5);
        backoff.retain(|key| *key != "b");
        assert_eq!(
            backoff.next_delay("b").as_secs(),
            5,
            "b's count was dropped"
        );
        let per_node = Backoff::new(Duration::from_millis(5), Duration::from_secs(1000));
        let delays: Vec<u128> = (0..5)
            .map(|_| per_node.next_delay("n").as_millis())
            .collect();
        assert_eq!(delays, [5, 10, 20, 40, 80]);
        for _ in 0..60 {
            per_node.next_delay("n");
        }
        assert_eq!(per_node.next_delay("n"), Duration::from_secs(1000));
    }

    #[tokio::test]
    async fn a_key_is_never_handed_out_twice_at_once() {
        let queue = WorkQueue::new();
        let adds = queue.adds();
        queue.add("a");
        queue.add("a");
        assert_eq!(queue.len(), 1);
        assert_eq!(adds.get(), 1, "a waiting key is not added twice");
        let key = queue.next().await;
        queue.add("a");
        assert_eq!(queue.len(), 0, "added while processing: held back");
        queue.done(&key);
        assert_eq!(queue.len(), 1, "queued again once done");
        assert_eq!(queue.next().await, "a");
    }
}

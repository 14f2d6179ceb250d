//! Per-node exponential backoff for failed syncs, as client-go's
//! `ItemExponentialFailureRateLimiter(5ms, 1000s)`: the n-th consecutive
//! failure of a node waits 5 ms · 2ⁿ⁻¹, at most 1000 s; a success resets it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

const BASE: Duration = Duration::from_millis(5);
const MAX: Duration = Duration::from_secs(1000);

#[derive(Default)]
pub(super) struct NodeBackoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl NodeBackoff {
    /// Counts a failure of `node` and returns how long to wait before the retry.
    pub(super) fn failed(&self, node: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let count = failures.entry(node.to_string()).or_default();
        let delay = BASE
            .checked_mul(2u32.saturating_pow(*count))
            .map_or(MAX, |d| d.min(MAX));
        *count = count.saturating_add(1);
        delay
    }

    pub(super) fn forget(&self, node: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.remove(node);
    }

    /// Drops the counts of nodes `keep` rejects (nodes that are gone).
    pub(super) fn retain(&self, keep: impl Fn(&str) -> bool) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.retain(|node, _| keep(node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_5ms_up_to_1000s_per_node() {
        let backoff = NodeBackoff::default();
        let delays: Vec<Duration> = (0..5).map(|_| backoff.failed("a")).collect();
        assert_eq!(
            delays,
            [5, 10, 20, 40, 80].map(Duration::from_millis).to_vec()
        );
        assert_eq!(backoff.failed("b"), BASE, "each node counts alone");
        for _ in 0..40 {
            backoff.failed("a");
        }
        assert_eq!(backoff.failed("a"), MAX);
        backoff.forget("a");
        assert_eq!(backoff.failed("a"), BASE, "a success resets the count");
        backoff.retain(|node| node != "b");
        assert_eq!(backoff.failed("b"), BASE, "a gone node's count is dropped");
    }
}

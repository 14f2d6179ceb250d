//! Behaviour knobs, settable from Rust and over `/_sim/knobs`. Durations are
//! milliseconds so they read the same in JSON, YAML and on the command line.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a second write on a busy gateway gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum BusyMode {
    /// `400 BUSY_ENTITY`, as a real VCD answers.
    #[default]
    Reject,
    /// Wait until the gateway is free (up to `queueTimeoutMs`).
    Queue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Knobs {
    /// Added to every call.
    pub latency_ms: u64,
    /// A uniformly random extra of up to this much per call.
    pub latency_jitter_ms: u64,
    /// Task duration for operations not named in `taskDurationsMs`; 0 means a
    /// task is already `success` when its 202 returns.
    pub task_duration_ms: u64,
    /// Per operation name, e.g. `{"createVirtualService": 2000}`.
    pub task_durations_ms: BTreeMap<String, u64>,
    pub busy_mode: BusyMode,
    /// How long a gateway stays busy after its task ends.
    pub busy_cooldown_ms: u64,
    pub queue_timeout_ms: u64,
    /// Lifetime of access tokens (`expires_in`).
    pub token_ttl_ms: u64,
    /// Idle timeout of access tokens.
    pub idle_timeout_ms: u64,
    /// A new virtual service reports `PENDING` health for this long.
    pub vs_pending_ms: u64,
    /// Require external VIPs and DNAT external IPs inside the gateway's IPs.
    pub strict_external_ips: bool,
    /// How far VCD's clock is ahead of the real one (negative: behind), as
    /// the `Date` header of every answer shows it.
    pub clock_skew_ms: i64,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            latency_ms: 0,
            latency_jitter_ms: 0,
            task_duration_ms: 0,
            task_durations_ms: BTreeMap::new(),
            busy_mode: BusyMode::Reject,
            busy_cooldown_ms: 0,
            queue_timeout_ms: 60_000,
            token_ttl_ms: 30 * 24 * 3600 * 1000,
            idle_timeout_ms: 30 * 60 * 1000,
            vs_pending_ms: 0,
            strict_external_ips: true,
            clock_skew_ms: 0,
        }
    }
}

impl Knobs {
    pub fn task_duration(&self, operation: &str) -> Duration {
        Duration::from_millis(
            self.task_durations_ms
                .get(operation)
                .copied()
                .unwrap_or(self.task_duration_ms),
        )
    }

    pub fn latency(&self) -> Duration {
        let jitter = if self.latency_jitter_ms == 0 {
            0
        } else {
            fastrand::u64(0..=self.latency_jitter_ms)
        };
        Duration::from_millis(self.latency_ms + jitter)
    }

    pub fn token_ttl(&self) -> Duration {
        Duration::from_millis(self.token_ttl_ms)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }
}

//! Whether this process can still reach VCD, and what follows when it
//! cannot: `/readyz` fails once VCD has not answered for the configured
//! time, and the leader gives up its Lease then, so a standby that reaches
//! VCD takes over (a node-local network fault must not leave the cluster
//! with a leader that can do nothing). Quiet periods are filled with a
//! cheap probe, so the verdict is about now, not about the last reconcile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::serve::Check;
use crate::vcd::{Reachability, VcdClient};

/// How often an unanswered state is looked at.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The `vcd` readiness check: failing until VCD was first reached, and
/// while it has not answered for `timeout`.
pub fn readiness(reached: Arc<AtomicBool>, reach: Reachability, timeout: Duration) -> Check {
    Check::new("vcd", move || {
        if !reached.load(Ordering::Relaxed) {
            return Err("VCD has not been reached yet".to_string());
        }
        match reach.unanswered_for() {
            Some((silent, error)) if silent >= timeout => Err(format!(
                "VCD has not answered for {}s (--vcd-unreachable-timeout {}s): {error}",
                silent.as_secs(),
                timeout.as_secs()
            )),
            _ => Ok(()),
        }
    })
}

/// How often VCD is probed when nothing else asked it anything: often
/// enough that a fault shows within the timeout.
pub fn probe_period(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(250), Duration::from_secs(10))
}

/// Pings VCD whenever no answer came for a probe period.
pub async fn probe(client: VcdClient, reach: Reachability, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let quiet = reach.since_last_answer().is_none_or(|since| since >= every);
        if quiet && let Err(error) = client.ping().await {
            tracing::debug!(%error, "VCD did not answer the reachability probe");
        }
    }
}

/// Resolves with the reason once VCD has not answered for `timeout`.
pub async fn unanswered_too_long(reach: Reachability, timeout: Duration) -> String {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        if let Some((silent, error)) = reach.unanswered_for()
            && silent >= timeout
        {
            return format!(
                "VCD has not answered for {}s (--vcd-unreachable-timeout): {error}; a standby that reaches it takes over",
                silent.as_secs()
            );
        }
    }
}

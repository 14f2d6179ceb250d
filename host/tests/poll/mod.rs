//! Waiting in tests: poll a condition until it holds, with a deadline and a
//! message naming what was awaited. No fixed sleeps anywhere else.

#![allow(dead_code)] // each test binary uses its own subset

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How long any wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);
const INTERVAL: Duration = Duration::from_millis(20);

/// Polls `probe` until it yields a value.
pub async fn wait_for<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(INTERVAL).await;
    }
}

/// [`wait_for`] with a probe that needs no awaiting.
pub async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    wait_for(what, || std::future::ready(check())).await
}

/// Asserts `check` stays true for `period`.
pub async fn holds_for(what: &str, period: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < period {
        assert!(check(), "no longer true: {what}");
        tokio::time::sleep(INTERVAL).await;
    }
}

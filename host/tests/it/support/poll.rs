//! Waiting in tests: poll a condition until it holds, with a deadline and a
//! message naming what was awaited, or hold a claim across passes of a
//! loop. No fixed sleeps anywhere else.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How long any wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);
const INTERVAL: Duration = Duration::from_millis(20);

/// Polls `probe` until it yields a value, at most [`DEADLINE`].
pub async fn wait_for<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let not_yet = || "not yet".to_string();
    let (value, _) = wait_until(what, DEADLINE, || {
        let probe = probe();
        async { probe.await.ok_or_else(not_yet) }
    })
    .await;
    value
}

/// Polls `probe` until it succeeds; after `limit` the test fails with
/// `what` and the probe's last reason. Returns the value and how long it
/// took.
pub async fn wait_until<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> (T, Duration)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let last = match probe().await {
            Ok(value) => return (value, started.elapsed()),
            Err(reason) => reason,
        };
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}; last seen: {last}"
        );
        tokio::time::sleep(INTERVAL).await;
    }
}

/// [`wait_for`] with a probe that needs no awaiting.
pub async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    wait_for(what, || std::future::ready(check())).await
}

/// Asserts `check` stays true until `progress` (a count of a loop's
/// passes: syncs, monitor passes, requests) has moved `passes` past its
/// value now. A claim that nothing happens is only worth something over
/// passes that ran, so a loop that never runs fails the test instead of
/// passing it; and no pass count depends on how fast the machine is.
pub async fn holds_across(
    what: &str,
    passes: u64,
    mut progress: impl FnMut() -> u64,
    mut check: impl FnMut() -> bool,
) {
    let start = progress();
    let started = Instant::now();
    loop {
        // Read the count before the check, so the last pass counted is
        // one the check saw the effects of.
        let ran = progress().saturating_sub(start);
        assert!(check(), "no longer true: {what}");
        if ran >= passes {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "{what}: the loop ran {ran} of {passes} passes in {DEADLINE:?}, so the claim was never tested"
        );
        tokio::time::sleep(INTERVAL).await;
    }
}

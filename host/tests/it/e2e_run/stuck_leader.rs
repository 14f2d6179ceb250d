//! The `leaderElection` health check through the real binary: a leader
//! whose renewals fail gives up and exits, so only a renewer that is itself
//! stuck leaves a process that believes it leads and renews nothing. The
//! `fault-injection` failpoint `VCD_CCM_STALL_RENEWALS=1` stalls it; then
//! `/healthz` fails once the Lease has gone unrenewed for the lease
//! duration plus 20 s, as client-go's health adaptor does, so the kubelet
//! restarts the process; before that it passes.

use std::time::{Duration, Instant};

use super::{START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;

/// client-go's tolerance past the lease duration.
const TOLERANCE: Duration = Duration::from_secs(20);
const LEASE: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_renewer_is_stuck_fails_healthz() {
    let world = World::start().await;
    let ccm = world.spawn_with_env(
        "stuck",
        &[
            "--leader-elect-lease-duration=2s",
            "--leader-elect-renew-deadline=1500ms",
            "--leader-elect-retry-period=500ms",
        ],
        &[("VCD_CCM_STALL_RENEWALS", "1")],
    );
    wait_until("the process to lead", START, || leading(&ccm)).await;
    // Acquired at most now: the Lease is not renewed from here on.
    let acquired = Instant::now();
    assert_eq!(ccm.get("/healthz").await, Ok((200, "ok".to_string())));
    let (body, _) = wait_until("/healthz to fail", LEASE + TOLERANCE + START, || async {
        match ccm.get("/healthz").await? {
            (200, _) => Err("still healthy".to_string()),
            (_, body) => Ok(body),
        }
    })
    .await;
    let failed = acquired.elapsed();
    assert!(
        body.contains("[-]leaderElection failed: failed election to renew leadership on lease kube-system/cloud-controller-manager"),
        "{body}"
    );
    // Never before the lease duration plus 20 s without a renewal.
    assert!(failed >= TOLERANCE, "failed after only {failed:?}");
    assert_eq!(ccm.master_status().await, Ok(1.0), "it still leads");
}

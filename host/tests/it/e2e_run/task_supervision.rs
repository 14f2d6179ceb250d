//! Task supervision through the real binary, two replicas on kubesim and
//! vcdsim: a controller task that dies is started again with backoff and
//! counted in `vcd_ccm_controller_task_restarts_total`; `/healthz` fails
//! once it keeps dying, so the kubelet restarts the process and the standby
//! takes over; a task that dies a few times leaves the process healthy.
//!
//! No real input makes a task die, so the binary the tests run is built
//! with the `fault-injection` feature, whose failpoint
//! (`VCD_CCM_FAIL_TASK=<controller>/<task>[:<starts>]`) makes the named
//! task panic as it starts. The failing task is the service controller's
//! only worker: while it dies, the leader converges nothing, the case the
//! health check is there for.
//!
//! The pace is the supervisor's own (1 s doubling, more than 5 restarts in
//! 300 s fail `/healthz`), with no knob to shorten it: a backoff or limit
//! would mean nothing to an operator, and a pace set by the failpoint would
//! bypass the very backoff under test. So the first test waits the real
//! 1 + 2 + 4 + 8 + 16 = 31 s and checks that `/healthz` fails no sooner.

use std::time::Duration;

use tokio::time::Instant;

use super::{FAST_ELECTION, HANDOVER_LATEST, START, converged, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::process::CcmProcess;

const FAILPOINT: &str = "VCD_CCM_FAIL_TASK";
/// The waits before the second to the sixth start: the sixth restart is the
/// first above the limit of 5.
const BACKOFF_TO_SIXTH: Duration = Duration::from_secs(1 + 2 + 4 + 8 + 16);
/// The same before the fourth start.
const BACKOFF_TO_FOURTH: Duration = Duration::from_secs(1 + 2 + 4);
/// How long before it was seen leading replica-a may have started its
/// controllers: one poll of its metrics.
const POLL_SLACK: Duration = Duration::from_millis(500);
/// From replica-a leading to the last restart awaited, on a busy machine.
const RESTARTS: Duration = Duration::from_secs(60);

/// `vcd_ccm_controller_task_restarts_total` of the service worker: 0
/// before its first restart (an empty family is not served).
async fn worker_restarts(replica: &CcmProcess) -> Result<u64, String> {
    let (_, metrics) = replica.get("/metrics").await?;
    let sample = r#"vcd_ccm_controller_task_restarts_total{controller="service",task="worker"} "#;
    match metrics.lines().find_map(|line| line.strip_prefix(sample)) {
        None => Ok(0),
        Some(value) => value
            .parse()
            .map_err(|_| format!("{} /metrics: {value:?} is no count", replica.name)),
    }
}

/// `/healthz`: `Ok` on 200, else the status and body.
async fn healthz(replica: &CcmProcess) -> Result<Result<(), String>, String> {
    Ok(match replica.get("/healthz").await? {
        (200, _) => Ok(()),
        (status, body) => Err(format!("{status}: {body}")),
    })
}

/// Starts `replica-a` with the failpoint and waits until it leads, then
/// starts `replica-b`, which waits for the Lease. Returns them and when
/// `replica-a` was seen leading: its controllers, and so the first death of
/// the failing task, start just before or after.
async fn leader_and_standby(world: &World, failpoint: &str) -> (CcmProcess, CcmProcess, Instant) {
    let failing = world.spawn_with_env("replica-a", &FAST_ELECTION, &[(FAILPOINT, failpoint)]);
    wait_until("replica-a to lead", START, || leading(&failing)).await;
    let led = Instant::now();
    let standby = world.spawn("replica-b", &FAST_ELECTION);
    wait_until("replica-b to be ready", START, || standby.ready()).await;
    assert_eq!(standby.master_status().await, Ok(0.0));
    (failing, standby, led)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_worker_keeps_dying_fails_healthz_and_the_standby_takes_over() {
    let world = World::start().await;
    world.add_nodes().await;
    let (mut failing, standby, led) = leader_and_standby(&world, "service/worker").await;
    let holder = world
        .lease_holder()
        .await
        .expect("replica-a holds the Lease");
    let service = world.create_service("alpha", &[80]).await;

    let most_while_healthy = std::cell::Cell::new(0);
    let (body, _) = wait_until("replica-a's /healthz to fail", RESTARTS, || async {
        let before = worker_restarts(&failing).await?;
        let health = healthz(&failing).await?;
        let after = worker_restarts(&failing).await?;
        match health {
            Ok(()) => {
                assert!(before <= 5, "/healthz is ok after {before} restarts");
                most_while_healthy.set(before);
                Err(format!("healthy after {before} restarts"))
            }
            Err(body) => {
                assert!(after > 5, "/healthz fails after {after} restarts: {body}");
                Ok(body)
            }
        }
    })
    .await;
    let failed_after = led.elapsed();
    println!(
        "replica-a's /healthz failed {:.1} s after it was seen leading",
        failed_after.as_secs_f64()
    );
    assert_eq!(most_while_healthy.get(), 5, "healthy up to the limit");
    assert!(
        failed_after + POLL_SLACK >= BACKOFF_TO_SIXTH,
        "/healthz failed {failed_after:?} after replica-a led: no backoff"
    );
    assert!(body.contains("[-]controller-tasks failed"), "{body}");
    assert!(body.contains("service/worker panicked"), "{body}");
    assert!(
        world.external_ip("alpha").await.is_err(),
        "a leader whose worker dies converged a Service"
    );
    assert_eq!(healthz(&standby).await, Ok(Ok(())));
    assert_eq!(worker_restarts(&standby).await, Ok(0));

    // The kubelet's liveness probe fails: it kills the container.
    failing.kill();
    let killed = Instant::now();
    let (_, handover) = wait_until("replica-b to take the Lease", HANDOVER_LATEST, || async {
        match world.lease_holder().await? {
            same if same == holder => Err(format!("the killed {holder} still holds it")),
            _ => Ok(()),
        }
    })
    .await;
    wait_until("replica-b to report leading", START, || leading(&standby)).await;
    converged(&world, &[service]).await;
    println!(
        "replica-b took the Lease {:.1} s after the kill; the Service converged {:.1} s after the kill",
        handover.as_secs_f64(),
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(healthz(&standby).await, Ok(Ok(())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_dies_three_times_is_restarted_and_the_leader_stays_healthy() {
    let world = World::start().await;
    world.add_nodes().await;
    let (failing, standby, led) = leader_and_standby(&world, "service/worker:3").await;
    let service = world.create_service("alpha", &[80]).await;

    wait_until(
        "the Service's address from the restarted worker",
        RESTARTS,
        || async {
            let health = healthz(&failing).await?;
            assert_eq!(health, Ok(()), "three restarts fail /healthz");
            let restarts = worker_restarts(&failing).await?;
            assert!(
                restarts <= 3,
                "{restarts} restarts of a worker that dies three times"
            );
            world.external_ip("alpha").await?;
            Ok(())
        },
    )
    .await;
    let served_after = led.elapsed();
    converged(&world, &[service]).await;
    println!(
        "the Service converged {:.1} s after replica-a was seen leading",
        served_after.as_secs_f64()
    );
    assert!(
        served_after + POLL_SLACK >= BACKOFF_TO_FOURTH,
        "the worker ran again {served_after:?} after replica-a led: no backoff"
    );
    assert_eq!(worker_restarts(&failing).await, Ok(3));
    assert_eq!(healthz(&failing).await, Ok(Ok(())));
    assert_eq!(failing.master_status().await, Ok(1.0));
    assert_eq!(standby.master_status().await, Ok(0.0));
}

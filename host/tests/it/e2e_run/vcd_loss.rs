//! Readiness reflects the present: a replica that can no longer reach VCD
//! fails `/readyz` once `--vcd-unreachable-timeout` has passed and says so,
//! recovers when VCD answers again, and, when it leads, gives up the Lease
//! so a standby that reaches VCD takes over.

use std::time::Duration;

use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::proxy::CutProxy;

const START: Duration = Duration::from_secs(30);
/// The timeout the tests run with, and how long its effects may take.
const TIMEOUT: &str = "--vcd-unreachable-timeout=3s";
const NOTICED: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_while_vcd_does_not_answer_and_recovers() {
    let world = World::start().await;
    let proxy = CutProxy::start(world.vcd.addr()).await;
    let replica = world.spawn_behind("alone", &proxy, &[TIMEOUT, "--leader-elect=false"]);
    wait_until("ready", START, || replica.ready()).await;

    proxy.cut();
    let (body, took) = wait_until("/readyz to fail on VCD", NOTICED, || async {
        match replica.get("/readyz?verbose").await? {
            (500, body) if body.contains("VCD has not answered") => Ok(body),
            (status, body) => Err(format!("{status}: {body}")),
        }
    })
    .await;
    println!(
        "readiness failed {:.1} s after VCD was cut off (timeout 3 s)",
        took.as_secs_f64()
    );
    assert!(body.contains("--vcd-unreachable-timeout"), "{body}");

    proxy.restore();
    wait_until("ready again", NOTICED, || replica.ready()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_vcd_gives_the_lease_to_a_standby_that_reaches_it() {
    let world = World::start().await;
    world.add_nodes().await;
    let proxy = CutProxy::start(world.vcd.addr()).await;
    let mut cut_off = world.spawn_behind("cut-off", &proxy, &[TIMEOUT]);
    wait_until("the first replica to lead", START, || async {
        cut_off.ready().await?;
        match cut_off.master_status().await? {
            1.0 => Ok(()),
            other => Err(format!("master status {other}")),
        }
    })
    .await;
    let healthy = world.spawn("healthy", &[TIMEOUT]);
    wait_until("the standby to be ready", START, || healthy.ready()).await;
    let holder = world.lease_holder().await.expect("a holder");

    proxy.cut();
    let (_, took) = wait_until("the standby to lead", NOTICED, || async {
        match healthy.master_status().await? {
            1.0 => Ok(()),
            other => Err(format!("master status {other}")),
        }
    })
    .await;
    println!(
        "standby leads {:.1} s after the leader lost VCD (timeout 3 s, lease 15 s)",
        took.as_secs_f64()
    );
    assert_ne!(world.lease_holder().await.expect("a holder"), holder);
    assert!(
        cut_off.stderr().contains("gave up lease"),
        "{}",
        cut_off.stderr()
    );
    let exited = std::time::Instant::now();
    while cut_off.exited().is_none() {
        assert!(exited.elapsed() < NOTICED, "the cut-off leader still runs");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The new leader serves.
    let service = world.create_service("alpha", &[80]).await;
    wait_until("the Service's address", Duration::from_secs(60), || async {
        world.external_ip(&service.name).await
    })
    .await;
}

//! Draining (contract 0.3.0) through the service controller: with the
//! default policy's `vcd-ccm.io/drain-period`, a Node that leaves stays in
//! the pools, disabled, for the period (NSX ALB finishes its connections
//! within the pool's graceful timeout), then goes; a restart in the
//! middle keeps the deadline it had.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::poll::holds_for;

/// The pool's members as `(address, enabled)`, and its graceful timeout.
fn pool(cluster: &Cluster) -> (Vec<(String, bool)>, Option<i64>) {
    cluster.vcd.with_world(|w| {
        let pool = &w.pools[0];
        let mut members: Vec<_> = pool
            .members
            .iter()
            .map(|m| (m.ip_address.clone(), m.enabled))
            .collect();
        members.sort();
        (members, pool.graceful_timeout_period)
    })
}

fn member(ip: &str, enabled: bool) -> (String, bool) {
    (ip.to_string(), enabled)
}

async fn draining_cluster(period: &str) -> Cluster {
    let cluster = Cluster::start_with(fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({"vcd-ccm.io/drain-period": period});
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    wait_for("both Nodes listed", || async {
        (pool(&cluster).0 == [member("10.0.0.11", true), member("10.0.0.12", true)]).then_some(())
    })
    .await;
    cluster
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaving_node_is_disabled_for_the_drain_period_then_removed() {
    let cluster = draining_cluster("3s").await;
    // The pool lets disabled members' connections run a whole minute.
    assert_eq!(pool(&cluster).1, Some(1));
    let left = Instant::now();
    cluster.delete_node("worker-1").await;
    wait_for("worker-1 disabled", || async {
        (pool(&cluster).0 == [member("10.0.0.11", true), member("10.0.0.12", false)]).then_some(())
    })
    .await;
    wait_for("worker-1 removed", || async {
        (pool(&cluster).0 == [member("10.0.0.11", true)]).then_some(())
    })
    .await;
    let drained = left.elapsed();
    assert!(
        drained >= Duration::from_secs(2),
        "removed after {drained:?}, before the 3 s drain period"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_during_a_drain_keeps_its_deadline() {
    let mut cluster = draining_cluster("6s").await;
    cluster.delete_node("worker-1").await;
    wait_for("worker-1 disabled", || async {
        (pool(&cluster).0 == [member("10.0.0.11", true), member("10.0.0.12", false)]).then_some(())
    })
    .await;
    let disabled = Instant::now();
    let draining = || pool(&cluster).0 == [member("10.0.0.11", true), member("10.0.0.12", false)];
    holds_for(
        "draining before the restart",
        Duration::from_secs(3),
        draining,
    )
    .await;
    // A new process: it neither cuts the drain short nor starts it again.
    cluster.start_controller(fast_config()).await;
    let restarted = Instant::now();
    wait_for("worker-1 removed", || async {
        (pool(&cluster).0 == [member("10.0.0.11", true)]).then_some(())
    })
    .await;
    assert!(
        disabled.elapsed() >= Duration::from_secs(5),
        "removed {:?} after it was disabled, before the 6 s period",
        disabled.elapsed()
    );
    // A drain started again at the restart would end 6 s after it.
    assert!(
        restarted.elapsed() < Duration::from_secs(5),
        "removed {:?} after the restart: the deadline set before it was not kept",
        restarted.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_drain_period_is_refused_before_any_write() {
    let cluster = Cluster::start_with(fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({"vcd-ccm.io/drain-period": "2h"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("vcd-ccm.io/drain-period") && message.contains("up to 3600s"),
        "{message}"
    );
    holds_for("nothing written", Duration::from_secs(1), || {
        cluster.vcd.with_world(|w| w.pools.is_empty())
    })
    .await;
}

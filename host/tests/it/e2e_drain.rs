//! Draining (contract 0.3.0) through the service controller: with the
//! default policy's `vcd-ccm.io/drain-period`, a Node that leaves stays in
//! the pools, disabled, until the deadline recorded in the pool's tag, then
//! goes; a restart keeps that deadline; a Node that comes back is enabled
//! again; Nodes leaving during a drain go with it at the later deadline;
//! `0` ends a drain at once. Deadlines are read from VCD and compared with
//! the clock only as lower bounds, which no slowdown can break.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::objects::ServiceEdits;
use crate::support::poll::{DEADLINE, wait_until};

const POOL_WRITE: &str = "/cloudapi/1.0.0/loadBalancer/pools/{id}";

/// A pool's members as `(address, enabled)`, sorted.
type Members = Vec<(String, bool)>;

/// The pool's members as `(address, enabled)`, and its graceful timeout.
/// Without a drain the pool takes its members from an IP set, whose
/// addresses are all enabled.
fn pool(cluster: &Cluster) -> (Members, Option<i64>) {
    cluster.vcd.with_world(|w| {
        let pool = &w.pools[0];
        let mut members: Vec<_> = match pool.member_group_ref {
            Some(_) => w
                .pool_member_ips(pool)
                .into_iter()
                .map(|ip| (ip, true))
                .collect(),
            None => pool
                .members
                .iter()
                .map(|m| (m.ip_address.clone(), m.enabled))
                .collect(),
        };
        members.sort();
        (members, pool.graceful_timeout_period)
    })
}

/// The drain deadline (Unix seconds) a pool description records, if any.
fn deadline_in(description: &str) -> Option<u64> {
    let spec = description.rsplit_once(" spec=")?.1;
    spec.split_once('.')?.1.parse().ok()
}

/// The deadline the pool's tag records now.
fn deadline(cluster: &Cluster) -> Option<u64> {
    cluster.vcd.with_world(|w| {
        let description = w.pools[0].description.clone().unwrap_or_default();
        deadline_in(&description)
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// Waits until the clock's second has passed `second`, so a deadline set
/// from now on is later than one set before.
async fn past(second: u64) {
    wait_for("the next second", || async {
        (unix_now() > second).then_some(())
    })
    .await;
}

/// Every pool body written, in order: the members as `(address, enabled)`
/// and the deadline its description records.
fn pool_writes(cluster: &Cluster) -> Vec<(Members, Option<u64>)> {
    cluster
        .vcd
        .requests()
        .into_iter()
        .filter(|r| r.method == "PUT" && r.template == POOL_WRITE)
        .map(|r| {
            let body: &Value = &r.request_body;
            let mut members: Members = body["members"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let ip = m["ipAddress"].as_str().unwrap_or_default().to_string();
                    (ip, m["enabled"].as_bool().unwrap_or(true))
                })
                .collect();
            members.sort();
            (
                members,
                deadline_in(body["description"].as_str().unwrap_or_default()),
            )
        })
        .collect()
}

fn member(ip: &str, enabled: bool) -> (String, bool) {
    (ip.to_string(), enabled)
}

async fn members_are(cluster: &Cluster, what: &str, wanted: &[(String, bool)]) {
    wait_until(what, DEADLINE, || async {
        let (members, _) = pool(cluster);
        let description = cluster.vcd.with_world(|w| w.pools[0].description.clone());
        (members == wanted)
            .then_some(())
            .ok_or_else(|| format!("{members:?}, {description:?}"))
    })
    .await;
}

async fn draining_cluster(period: &str, workers: usize) -> Cluster {
    let cluster = Cluster::start_with(fast_config(), |_| {}).await;
    for n in 0..workers {
        let ip = format!("10.0.0.{}", 11 + n);
        cluster.add_node(&format!("worker-{n}"), &ip).await;
    }
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({"vcd-ccm.io/drain-period": period});
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    let all: Vec<_> = (0..workers)
        .map(|n| member(&format!("10.0.0.{}", 11 + n), true))
        .collect();
    members_are(&cluster, "every Node listed", &all).await;
    cluster
}

async fn set_period(cluster: &Cluster, period: &str) {
    let patch = json!({"metadata": {"annotations": {"vcd-ccm.io/drain-period": period}}});
    cluster.patch_service("default", "web", patch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaving_node_is_disabled_until_its_deadline_then_removed() {
    let cluster = draining_cluster("2s", 2).await;
    // The pool lets disabled members' connections run a whole minute.
    assert_eq!(pool(&cluster).1, Some(1));
    let left = unix_now();
    cluster.delete_node("worker-1").await;
    let draining = [member("10.0.0.11", true), member("10.0.0.12", false)];
    members_are(&cluster, "worker-1 disabled", &draining).await;
    let until = deadline(&cluster).expect("a deadline in the pool's tag");
    assert!(until >= left + 2, "deadline {until}, left at {left}");
    members_are(&cluster, "worker-1 removed", &[member("10.0.0.11", true)]).await;
    assert!(unix_now() >= until, "removed before its deadline {until}");
    assert_eq!(deadline(&cluster), None, "the drain is over");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_during_a_drain_keeps_its_deadline() {
    let mut cluster = draining_cluster("3s", 2).await;
    cluster.delete_node("worker-1").await;
    let draining = [member("10.0.0.11", true), member("10.0.0.12", false)];
    members_are(&cluster, "worker-1 disabled", &draining).await;
    let until = deadline(&cluster).expect("a deadline in the pool's tag");
    // A drain started again after this second would record a later deadline.
    past(until - 3).await;
    cluster.start_controller(fast_config()).await;
    members_are(&cluster, "worker-1 removed", &[member("10.0.0.11", true)]).await;
    assert!(unix_now() >= until, "removed before its deadline {until}");
    let deadlines: Vec<u64> = pool_writes(&cluster)
        .into_iter()
        .filter_map(|(_, deadline)| deadline)
        .collect();
    assert!(
        deadlines.iter().all(|d| *d == until),
        "a deadline other than {until} was written: {deadlines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_back_during_its_drain_is_enabled_again() {
    let cluster = draining_cluster("60m", 2).await;
    cluster.delete_node("worker-1").await;
    let draining = [member("10.0.0.11", true), member("10.0.0.12", false)];
    members_are(&cluster, "worker-1 disabled", &draining).await;
    assert!(deadline(&cluster).is_some());
    cluster.add_node("worker-1", "10.0.0.12").await;
    let back = [member("10.0.0.11", true), member("10.0.0.12", true)];
    members_are(&cluster, "worker-1 enabled again", &back).await;
    assert_eq!(deadline(&cluster), None, "no drain left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_leaving_during_a_drain_go_with_it_at_the_later_deadline() {
    let cluster = draining_cluster("2s", 3).await;
    cluster.delete_node("worker-1").await;
    let first = [
        member("10.0.0.11", true),
        member("10.0.0.12", false),
        member("10.0.0.13", true),
    ];
    members_are(&cluster, "worker-1 disabled", &first).await;
    let earlier = deadline(&cluster).expect("worker-1's deadline");
    past(earlier - 2).await;
    cluster.delete_node("worker-2").await;
    let both = [
        member("10.0.0.11", true),
        member("10.0.0.12", false),
        member("10.0.0.13", false),
    ];
    members_are(&cluster, "worker-2 disabled too", &both).await;
    let later = deadline(&cluster).expect("the drain's deadline");
    assert!(later > earlier, "{later} is not after {earlier}");
    members_are(&cluster, "both removed", &[member("10.0.0.11", true)]).await;
    assert!(
        unix_now() >= later,
        "removed before the later deadline {later}"
    );
    // No write removed worker-1 while worker-2 was still draining.
    for (members, _) in pool_writes(&cluster) {
        let has = |ip: &str| members.iter().any(|(m, _)| m == ip);
        assert!(has("10.0.0.12") || !has("10.0.0.13"), "{members:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_period_of_0_during_a_drain_removes_the_drained_node_at_once() {
    let cluster = draining_cluster("60m", 2).await;
    cluster.delete_node("worker-1").await;
    let draining = [member("10.0.0.11", true), member("10.0.0.12", false)];
    members_are(&cluster, "worker-1 disabled", &draining).await;
    set_period(&cluster, "0").await;
    // An hour-long deadline is never reached here: only `0` removes it.
    members_are(&cluster, "worker-1 removed", &[member("10.0.0.11", true)]).await;
    assert_eq!(deadline(&cluster), None);
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
    cluster.holds_no_load_balancer().await;
}

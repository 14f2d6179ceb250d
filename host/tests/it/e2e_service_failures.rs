//! The service controller's failure paths end to end: VCD faults, API
//! server faults, deletions that cannot finish yet, no nodes.

use crate::support::objects::ServiceEdits;
use crate::support::poll::DEADLINE;
use crate::support::{lb, vcd};
use std::time::{Duration, Instant};

use crate::support::cluster::{Cluster, lb_service, wait_for};
use crate::support::faults::assert_fired;
use crate::support::poll::holds_across;
use kubesim::{WriteFault, WriteVerb};
use serde_json::json;
use vcd_ccm::controllers::service::CLEANUP_FINALIZER;
use vcdsim::{FaultAction, FaultRule};

fn injected(status: u16) -> FaultAction {
    FaultAction::Error {
        status,
        minor_error_code: "INJECTED_FAULT".into(),
        message: "injected by the test".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vcd_failure_is_reported_and_retried_with_nothing_left_over() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.vcd.add_fault(
        FaultRule::new(
            Some("POST"),
            "/cloudapi/1.0.0/loadBalancer/virtualServices",
            injected(400),
        )
        .times(2),
    );
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080), (443, 30443)]))
        .await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("injected by the test"),
        "VCD's words reach the Event: {message}"
    );
    cluster.wait_for_ip("default", "web").await;
    let objects = lb::objects_of(&cluster.vcd, &uid);
    let count = |kind: &str| objects.iter().filter(|o| o.kind == kind).count();
    assert_eq!(
        (count("pool"), count("virtual service")),
        (2, 2),
        "{objects:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_finalizer_nothing_is_created_in_vcd() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    // Every finalizer patch fails until the faults are cleared.
    cluster
        .kube
        .faults()
        .add_write_fault(WriteFault::new("services", u32::MAX, 500).on(WriteVerb::Patch));
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.starts_with(
            "Error syncing load balancer: failed to add load balancer cleanup finalizer: "
        ),
        "{message}"
    );
    wait_for("a retry, refused too", || async {
        let events = cluster.events_with_counts("default", "web").await;
        events
            .iter()
            .any(|(reason, count)| reason == "SyncLoadBalancerFailed" && *count >= 2)
            .then_some(())
    })
    .await;
    assert!(
        lb::objects_of(&cluster.vcd, &uid).is_empty(),
        "the finalizer comes first"
    );
    assert!(
        cluster.kube.faults().writes_failed() > 0,
        "a patch was refused"
    );
    cluster.kube.faults().clear();
    cluster.wait_for_ip("default", "web").await;
    let service = cluster.service("default", "web").await.unwrap();
    assert_eq!(
        service.metadata.finalizers.unwrap_or_default(),
        [CLEANUP_FINALIZER]
    );
}

/// `default/web` with an external IP, then deleted while every VCD DELETE
/// of `route` fails (until the test clears the fault); returns the cluster,
/// the Service's uid and the message of its SyncLoadBalancerFailed Event.
async fn deletion_held_at(route: &str) -> (Cluster, String, String) {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster
        .vcd
        .add_fault(FaultRule::new(Some("DELETE"), route, injected(400)));
    cluster.delete_service("default", "web").await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    (cluster, uid, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_waits_for_vcd_and_keeps_the_finalizer_meanwhile() {
    let (cluster, uid, message) =
        deletion_held_at("/cloudapi/1.0.0/loadBalancer/virtualServices/{id}").await;
    assert!(
        message.contains("failed to delete load balancer: "),
        "{message}"
    );
    let terminating = cluster
        .service("default", "web")
        .await
        .expect("held by the finalizer");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(
        terminating.metadata.finalizers.unwrap_or_default(),
        [CLEANUP_FINALIZER]
    );
    assert_fired(&cluster.vcd, "the held deletion");
    cluster.wait_for_gone("default", "web").await;
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
    // As upstream, DeletedLoadBalancer is recorded after the finalizer is
    // removed, so it may land after the Service is gone.
    cluster
        .wait_for_event("default", "web", "DeletedLoadBalancer")
        .await;
    let reasons: Vec<String> = cluster
        .events("default", "web")
        .await
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert!(
        reasons.contains(&"DeletingLoadBalancer".to_string()),
        "{reasons:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_without_nodes_still_gets_its_address_and_a_warning() {
    let cluster = Cluster::start().await;
    cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    let message = cluster
        .wait_for_event("default", "web", "UnAvailableLoadBalancer")
        .await;
    assert_eq!(message, "There are no available nodes for LoadBalancer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_back_off_exponentially() {
    // Base 200 ms, cap 2 s (fast_config): after the first failure the next
    // attempts wait 200, 400 and 800 ms. A retry can only come late, never
    // early, so the gaps between failures are held to those waits from
    // below; the doubling itself is `Backoff`'s unit test.
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("tls", &[(443, 30443)]);
    body["metadata"]["annotations"] = json!({
        "service.beta.kubernetes.io/vcloud-avi-ssl-ports": "443",
        "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias": "missing-cert"
    });
    let retries = || {
        vcd::metric_sum(
            &cluster.registry,
            "workqueue_retries_total",
            &["name=\"service\""],
        ) as usize
    };
    cluster.create_service("default", body).await;
    // When the count of failures was first seen at 1, 2, 3 and 4.
    let mut seen: Vec<Instant> = Vec::new();
    let started = Instant::now();
    while seen.len() < 4 {
        let failures = retries();
        assert!(failures <= seen.len() + 1, "a burst of {failures} failures");
        if failures > seen.len() {
            seen.push(Instant::now());
        }
        assert!(
            started.elapsed() < DEADLINE,
            "failures seen: {}",
            seen.len()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A failure is seen a poll after it happened, or later on a loaded
    // machine: half of each backoff is room for that, and still tells a
    // backoff from none.
    for (k, wait) in [200, 400, 800].into_iter().enumerate() {
        let gap = seen[k + 1] - seen[k];
        assert!(
            gap >= Duration::from_millis(wait / 2),
            "retry {} came {gap:?} after failure {}, before its {wait} ms backoff",
            k + 1,
            k + 1
        );
    }
    cluster
        .wait_for_event("default", "tls", "SyncLoadBalancerFailed")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_being_deleted_gets_no_node_updates() {
    // The virtual service goes, the pool cannot: the deletion stops half way.
    let (cluster, uid, _) = deletion_held_at("/cloudapi/1.0.0/loadBalancer/pools/{id}").await;
    let kinds = |uid: &str| -> Vec<String> {
        lb::objects_of(&cluster.vcd, uid)
            .into_iter()
            .map(|o| o.kind.to_string())
            .collect()
    };
    assert_eq!(kinds(&uid), ["pool"]);

    // A node joins: the half-deleted load balancer must not be rebuilt.
    cluster.add_node("worker-1", "10.0.0.12").await;
    // The node update and the deletion's retries both sync.
    holds_across(
        "only the pool the deletion could not remove",
        2,
        || cluster.syncs(),
        || kinds(&uid) == ["pool"],
    )
    .await;
    // Before the deletion a node update may have run (the node cache can lag
    // the first ensure); after it, none may.
    let reasons: Vec<String> = cluster
        .events("default", "web")
        .await
        .into_iter()
        .map(|(reason, _)| reason)
        .skip_while(|reason| reason != "DeletingLoadBalancer")
        .collect();
    assert!(
        !reasons.is_empty() && !reasons.contains(&"UpdatedLoadBalancer".to_string()),
        "{reasons:?}"
    );

    assert_fired(&cluster.vcd, "the held deletion");
    cluster.wait_for_gone("default", "web").await;
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

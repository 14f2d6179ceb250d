//! `loadBalancerSourceRanges` without firewall management: never silently
//! ignored, and a bad range refuses the Service before anything is written.

use serde_json::json;

use crate::support::cluster::{Cluster, lb_service};

const SOURCE_RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unenforced_source_ranges_get_a_warning_that_says_how_to_enforce_them() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["spec"]["loadBalancerSourceRanges"] = json!(["192.0.2.0/24"]);
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    let message = cluster
        .wait_for_event("default", "web", "SourceRangesNotEnforced")
        .await;
    assert!(
        message.contains("loadbalancer.manageFirewall: true"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_source_range_is_named_and_nothing_is_written() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({SOURCE_RANGES: "192.0.2.0/24, 10.0.0.0/33"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(message.contains("10.0.0.0/33"), "{message}");
    assert!(message.contains(SOURCE_RANGES), "{message}");
    assert!(
        message.contains("203.0.113.0/24"),
        "names a valid form: {message}"
    );
    cluster.holds_no_load_balancer().await;
    let writes: Vec<String> = cluster
        .vcd
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET" && !r.template.starts_with("/oauth/"))
        .map(|r| r.counter_key())
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

//! `spec.ipFamilyPolicy` through the service controller: load balancers
//! here have one IPv4 address, so a Service that requires two families is
//! refused before anything is written, with an Event and the condition
//! saying what would work; one that prefers two gets its IPv4 address and a
//! Warning saying that is all it gets.

use serde_json::json;

use crate::support::cluster::{Cluster, lb_service};
use crate::support::lb;

fn dual_stack(name: &str, node_port: i32, policy: &str) -> serde_json::Value {
    let mut body = lb_service(name, &[(80, node_port)]);
    body["spec"]["ipFamilyPolicy"] = json!(policy);
    body["spec"]["ipFamilies"] = json!(["IPv4", "IPv6"]);
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_dual_stack_is_refused_and_prefer_dual_stack_is_told_it_gets_one() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;

    let required = cluster
        .create_service("default", dual_stack("required", 30080, "RequireDualStack"))
        .await;
    let message = cluster
        .wait_for_event("default", "required", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("spec.ipFamilyPolicy RequireDualStack cannot be met")
            && message.contains("set ipFamilyPolicy to PreferDualStack or SingleStack"),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &required).is_empty());

    cluster
        .create_service("default", dual_stack("preferred", 30081, "PreferDualStack"))
        .await;
    let ip = cluster.wait_for_ip("default", "preferred").await;
    assert!(ip.parse::<std::net::Ipv4Addr>().is_ok(), "{ip}");
    let warning = cluster
        .wait_for_event("default", "preferred", "DualStackNotServed")
        .await;
    assert!(warning.contains("PreferDualStack"), "{warning}");
}

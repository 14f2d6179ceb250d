//! Errors that say what would work, through the service controller: a
//! requested address outside the pools names the pools the Service may use
//! with their ranges; an exhausted pool is named with its size; a TLS port
//! without a usable certificate names every place a certificate can come
//! from and what the library holds. Nothing is written for either Service.

use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service};
use crate::support::lb;

const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";

async fn failure(cluster: &Cluster, name: &str) -> String {
    cluster
        .wait_for_event("default", name, "SyncLoadBalancerFailed")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_address_outside_the_pools_names_the_pools() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["spec"]["loadBalancerIP"] = json!("198.51.100.7");
    let uid = cluster.create_service("default", body).await;
    let message = failure(&cluster, "web").await;
    assert!(
        message.contains("requested address 198.51.100.7 is not in any address pool"),
        "{message}"
    );
    assert!(
        message.contains(
            "the pools this Service may use: edge1 (241 addresses: 203.0.113.10-203.0.113.250, "
        ),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_is_named_with_its_size() {
    let scenario = lb::blocks_scenario_ranged("203.0.113.10-203.0.113.11");
    let cluster = Cluster::start_on(scenario, fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
        .create_service("default", lb_service("first", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "first").await;
    let uid = cluster
        .create_service("default", lb_service("second", &[(80, 30081)]))
        .await;
    let message = failure(&cluster, "second").await;
    assert!(
        message.contains("edge1 (2 addresses: 203.0.113.10-203.0.113.11, 0 free)"),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_port_without_a_certificate_names_where_one_can_come_from() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("tls", &[(443, 30443)]);
    body["metadata"]["annotations"] = json!({SSL_PORTS: "443"});
    let uid = cluster.create_service("default", body).await;
    let message = failure(&cluster, "tls").await;
    for expected in [
        "for TLS port(s) 443 ",
        "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias",
        "loadbalancer.certAlias",
        "the library holds: ",
    ] {
        assert!(message.contains(expected), "{expected}: {message}");
    }
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

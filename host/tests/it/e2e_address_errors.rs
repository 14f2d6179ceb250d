//! Errors that say what would work, through the service controller: a
//! requested address outside the pools names the pools the Service may use
//! with their ranges; an exhausted pool is named with its size; a TLS port
//! without a usable certificate names every place a certificate can come
//! from and what the library holds; a requested address another cluster's
//! Service took after this process read the gateway names that Service.
//! Nothing is written for any of them.

use serde_json::json;

use crate::support::cluster::{CLUSTER, Cluster, fast_config, lb_service};
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

/// Another cluster's Service takes an address after this process read the
/// gateway (for its first Service); a Service of this cluster then asks for
/// that address: refused with an Event naming the other Service and
/// cluster, and nothing written to VCD.
async fn a_requested_address_taken_after_the_gateway_was_read(
    scenario: vcdsim::Scenario,
    mode: lb::ModeKind,
) {
    let cluster = Cluster::start_on(scenario, fast_config(), |c| {
        c.lb_config = lb::config(CLUSTER, mode);
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
        .create_service("default", lb_service("first", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "first").await;
    let other = lb::other_cluster_engine(&cluster.vcd, lb::config("NO_RDE_cluster-b", mode)).await;
    let theirs = lb::web_service("shop", "theirs", "uid-of-theirs");
    let status = other.ensure(&theirs, &lb::nodes(1)).await.unwrap();
    let taken = status.ingress[0].ip.clone();
    cluster.vcd.reset_log();

    let mut body = lb_service("web", &[(80, 30081)]);
    body["spec"]["loadBalancerIP"] = json!(taken);
    let uid = cluster.create_service("default", body).await;
    let message = failure(&cluster, "web").await;
    for expected in [
        format!("address {taken} is already used"),
        "Service shop/theirs of cluster NO_RDE_cluster-b".to_string(),
    ] {
        assert!(message.contains(&expected), "{expected}: {message}");
    }
    assert!(!message.contains("at the same time"), "{message}");
    let (_, writes) = lb::calls(&cluster.vcd);
    assert_eq!(writes, 0, "{}", lb::call_lines(&cluster.vcd));
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_address_another_cluster_took_after_the_gateway_was_read_is_refused_unwritten()
{
    a_requested_address_taken_after_the_gateway_was_read(
        lb::blocks_scenario(),
        lb::ModeKind::SharedVip,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_address_another_clusters_dnat_rule_took_is_refused_unwritten() {
    a_requested_address_taken_after_the_gateway_was_read(
        lb::blocks_scenario(),
        lb::ModeKind::OneArm,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_address_another_cluster_claimed_in_an_ip_space_is_refused_unwritten() {
    a_requested_address_taken_after_the_gateway_was_read(
        lb::spaces_scenario(),
        lb::ModeKind::SharedVip,
    )
    .await;
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
        "for TLS port 443/TCP (ssl-ports annotation) with ",
        "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias",
        "loadbalancer.certAlias",
        "the library holds: ",
    ] {
        assert!(message.contains(expected), "{expected}: {message}");
    }
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_app_protocol_port_without_a_certificate_is_named() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080), (443, 30443), (8443, 30843)]);
    body["spec"]["ports"][1]["appProtocol"] = json!("https");
    body["metadata"]["annotations"] = json!({SSL_PORTS: "8443"});
    let uid = cluster.create_service("default", body).await;
    let message = failure(&cluster, "web").await;
    assert!(
        message.contains(
            "for TLS ports 443/TCP (appProtocol https), 8443/TCP (ssl-ports annotation) with "
        ),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
}

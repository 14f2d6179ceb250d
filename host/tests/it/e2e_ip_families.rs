//! `spec.ipFamilies` and `spec.ipFamilyPolicy` through the service
//! controller: on a gateway with addresses of both families a Service gets
//! one address per family it asks for, on its virtual services and in its
//! status, from IP blocks or IP Spaces; what a gateway or mode cannot give
//! is refused before any write (RequireDualStack, IPv6 with NAT) or served
//! with one address and a Warning (PreferDualStack).

use std::net::IpAddr;

use serde_json::json;

use crate::support::CLUSTER;
use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::dual_stack::{self, vips_of};
use crate::support::lb::{self, ModeKind};
use crate::support::objects::ServiceEdits;

fn with_families(name: &str, node_port: i32, policy: &str, families: &[&str]) -> serde_json::Value {
    let mut body = lb_service(name, &[(80, node_port)]);
    body["spec"]["ipFamilyPolicy"] = json!(policy);
    body["spec"]["ipFamilies"] = json!(families);
    body
}

/// Waits until the Service's status lists `count` addresses; returns them.
async fn ingress(cluster: &Cluster, name: &str, count: usize) -> Vec<IpAddr> {
    wait_for("the Service's addresses", || async {
        let service = cluster.service("default", name).await?;
        let ips: Vec<IpAddr> = service
            .status?
            .load_balancer?
            .ingress?
            .iter()
            .filter_map(|i| i.ip.as_deref()?.parse().ok())
            .collect();
        (ips.len() == count).then_some(ips)
    })
    .await
}

fn texts(vips: &[(Option<String>, Option<String>)]) -> Vec<(Option<IpAddr>, Option<IpAddr>)> {
    vips.iter()
        .map(|(v4, v6)| {
            (
                v4.as_deref().and_then(|ip| ip.parse().ok()),
                v6.as_deref().and_then(|ip| ip.parse().ok()),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_family_asked_for_gets_an_address_from_ip_blocks() {
    let cluster = Cluster::start_on(dual_stack::blocks(), fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;

    // An IPv6 loadBalancerIP is honoured; the IPv4 address comes beside it.
    // First, so no pick of another Service can have taken it.
    let mut asked = with_families("asked", 30083, "RequireDualStack", &["IPv6", "IPv4"]);
    asked["spec"]["loadBalancerIP"] = json!("2001:db8:1::15");
    cluster.create_service("default", asked).await;
    let got = ingress(&cluster, "asked", 2).await;
    assert_eq!(got[0], "2001:db8:1::15".parse::<IpAddr>().unwrap());
    assert!(got[1].is_ipv4());

    let both = cluster
        .create_service(
            "default",
            with_families("both", 30080, "RequireDualStack", &["IPv4", "IPv6"]),
        )
        .await;
    let ips = ingress(&cluster, "both", 2).await;
    assert!(ips[0].is_ipv4() && ips[1].is_ipv6(), "{ips:?}");
    assert!(ips[1].to_string().starts_with("2001:db8:1::"), "{ips:?}");
    assert_eq!(
        texts(&vips_of(&cluster.vcd, &both)),
        vec![(Some(ips[0]), Some(ips[1]))]
    );

    let v6_only = cluster
        .create_service(
            "default",
            with_families("v6-only", 30081, "SingleStack", &["IPv6"]),
        )
        .await;
    let only = ingress(&cluster, "v6-only", 1).await;
    assert!(only[0].is_ipv6() && only[0] != ips[1], "{only:?}");
    assert_eq!(
        texts(&vips_of(&cluster.vcd, &v6_only)),
        vec![(None, Some(only[0]))]
    );

    // The status lists the Service's first family first.
    cluster
        .create_service(
            "default",
            with_families("v6-first", 30082, "PreferDualStack", &["IPv6", "IPv4"]),
        )
        .await;
    let first = ingress(&cluster, "v6-first", 2).await;
    assert!(first[0].is_ipv6() && first[1].is_ipv4(), "{first:?}");

    // Back to one family: the IPv6 address leaves the virtual service, the
    // IPv4 one stays.
    cluster
        .patch_service(
            "default",
            "both",
            json!({"spec": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}}),
        )
        .await;
    assert_eq!(ingress(&cluster, "both", 1).await, vec![ips[0]]);
    wait_for("the IPv6 VIP to go", || async {
        (texts(&vips_of(&cluster.vcd, &both)) == vec![(Some(ips[0]), None)]).then_some(())
    })
    .await;

    for name in ["both", "v6-only", "v6-first", "asked"] {
        cluster.delete_service("default", name).await;
        cluster.wait_for_gone("default", name).await;
    }
    assert!(lb::objects_of_cluster(&cluster.vcd, CLUSTER).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dual_stack_on_ip_spaces_claims_an_address_in_each_family_and_releases_both() {
    let cluster = Cluster::start_on(dual_stack::spaces(), fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;

    let uid = cluster
        .create_service(
            "default",
            with_families("both", 30080, "RequireDualStack", &["IPv4", "IPv6"]),
        )
        .await;
    let ips = ingress(&cluster, "both", 2).await;
    assert!(ips[0].to_string().starts_with("192.0.2."), "{ips:?}");
    assert!(ips[1].to_string().starts_with("2001:db8:6::"), "{ips:?}");
    let claimed: Vec<String> = lb::allocations(&cluster.vcd)
        .into_iter()
        .filter(|(_, description)| description.contains(&uid))
        .map(|(ip, _)| ip)
        .collect();
    let mut expected: Vec<String> = ips.iter().map(ToString::to_string).collect();
    expected.sort();
    let mut claimed_sorted = claimed.clone();
    claimed_sorted.sort();
    assert_eq!(
        claimed_sorted, expected,
        "one claim per family, tagged for the Service"
    );

    // An IPv6-only Service takes its address from the IPv6 space alone.
    let v6_uid = cluster
        .create_service(
            "default",
            with_families("v6-only", 30081, "SingleStack", &["IPv6"]),
        )
        .await;
    let only = ingress(&cluster, "v6-only", 1).await;
    assert!(only[0].to_string().starts_with("2001:db8:6::"), "{only:?}");
    assert_eq!(
        texts(&vips_of(&cluster.vcd, &v6_uid)),
        vec![(None, Some(only[0]))]
    );

    for name in ["both", "v6-only"] {
        cluster.delete_service("default", name).await;
        cluster.wait_for_gone("default", name).await;
    }
    assert!(
        lb::allocations(&cluster.vcd).is_empty(),
        "both claims are released"
    );
}

/// A Service requiring both families is refused before any write with
/// `reason`, and one preferring both gets its IPv4 address and a Warning
/// with `reason`.
async fn refused_and_told(cluster: &Cluster, reason: &str) {
    let required = cluster
        .create_service(
            "default",
            with_families("required", 30080, "RequireDualStack", &["IPv4", "IPv6"]),
        )
        .await;
    let message = cluster
        .wait_for_event("default", "required", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("spec.ipFamilyPolicy RequireDualStack cannot be met: no IPv6 address: ")
            && message.contains(reason)
            && message.contains("set ipFamilyPolicy to PreferDualStack or SingleStack"),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &required).is_empty());
    cluster
        .create_service(
            "default",
            with_families("preferred", 30081, "PreferDualStack", &["IPv4", "IPv6"]),
        )
        .await;
    assert!(ingress(cluster, "preferred", 1).await[0].is_ipv4());
    let warning = cluster
        .wait_for_event("default", "preferred", "DualStackNotServed")
        .await;
    assert!(warning.contains(reason), "{warning}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_gateway_cannot_give_is_refused_or_told() {
    // An IPv4-only gateway.
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    refused_and_told(&cluster, "the gateway offers no IPv6 addresses").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_is_refused_where_nat_translates_ipv4_only_and_where_addresses_are_shared() {
    let cluster = Cluster::start_on(dual_stack::blocks(), fast_config(), |cluster| {
        cluster.lb_config = lb::config(CLUSTER, ModeKind::SharedVipOneArm);
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;

    let v6 = cluster
        .create_service(
            "default",
            with_families("v6", 30080, "SingleStack", &["IPv6"]),
        )
        .await;
    let message = cluster
        .wait_for_event("default", "v6", "SyncLoadBalancerFailed")
        .await;
    // IPv6 pools are not offered here, and the message says why.
    assert!(
        message.contains(
            "the gateway's IPv6 pools are not offered: one-arm mode translates IPv4 only"
        ),
        "{message}"
    );
    let required = cluster
        .create_service(
            "default",
            with_families("required", 30081, "RequireDualStack", &["IPv4", "IPv6"]),
        )
        .await;
    let message = cluster
        .wait_for_event("default", "required", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("one-arm mode translates IPv4 only"),
        "{message}"
    );
    for uid in [&v6, &required] {
        assert!(lb::objects_of(&cluster.vcd, uid).is_empty());
    }
    let mut asked = with_families("asked", 30084, "SingleStack", &["IPv6"]);
    asked["spec"]["loadBalancerIP"] = json!("2001:db8:1::15");
    cluster.create_service("default", asked).await;
    let message = cluster
        .wait_for_event("default", "asked", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("2001:db8:1::15")
            && message.contains("the gateway's IPv6 pools are not offered: one-arm mode"),
        "{message}"
    );
    // A Service preferring IPv6 first falls back to IPv4, and is told why.
    cluster
        .create_service(
            "default",
            with_families("v6-first", 30083, "PreferDualStack", &["IPv6", "IPv4"]),
        )
        .await;
    assert!(ingress(&cluster, "v6-first", 1).await[0].is_ipv4());
    let warning = cluster
        .wait_for_event("default", "v6-first", "DualStackNotServed")
        .await;
    assert!(
        warning.contains("one-arm mode translates IPv4 only"),
        "{warning}"
    );

    let mut shared = with_families("shared", 30082, "PreferDualStack", &["IPv4", "IPv6"]);
    shared["metadata"]["annotations"] = json!({"vcd-ccm.io/sharing-key": "web"});
    cluster.create_service("default", shared).await;
    assert!(ingress(&cluster, "shared", 1).await[0].is_ipv4());
    let warning = cluster
        .wait_for_event("default", "shared", "DualStackNotServed")
        .await;
    assert!(warning.contains("share one address"), "{warning}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_waits_for_the_gateways_ipv6_service_network() {
    let cluster = Cluster::start_on(dual_stack::blocks(), fast_config(), |cluster| {
        cluster.vcd.with_world(|w| {
            w.gateways[0].load_balancer.ipv6_service_network_definition = None;
        });
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    refused_and_told(
        &cluster,
        "the gateway's load balancer has no IPv6 service network (ipv6ServiceNetworkDefinition",
    )
    .await;
}

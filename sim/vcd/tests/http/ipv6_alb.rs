//! The IPv6 parts of the load balancer beside its VIPs: the gateway's IPv6
//! service network, which IPv6 VIPs need, and IPv6 pool members.

use reqwest::Method;
use serde_json::json;
use vcdsim::Scenario;

use crate::conformance::assert_conforms;
use crate::ipv6::{VS, pool, refused, vs_body};
use crate::support::{Alb, CLOUDAPI, Client, find_named, start};

/// The dual-stack world with edge2's load balancer not yet given an IPv6
/// service network.
async fn edge2_without_ipv6_service_network() -> vcdsim::Sim {
    let sim = start(Scenario::dual_stack()).await;
    sim.with_world(|w| {
        let edge2 = w.gateways.iter_mut().find(|g| g.name == "edge2").unwrap();
        edge2.load_balancer.ipv6_service_network_definition = None;
    });
    sim
}

#[tokio::test]
async fn the_ipv6_service_network_is_set_once() {
    let sim = edge2_without_ipv6_service_network().await;
    let admin = Client::system(&sim).await;
    let gateways = admin.ok("/edgeGateways").await;
    let settings = |name: &str| {
        let id = find_named(&gateways, name)["id"].as_str().unwrap();
        format!("/edgeGateways/{id}/loadBalancer")
    };
    let (edge1, edge2) = (settings("edge1"), settings("edge2"));
    let read = admin.ok(&edge1).await;
    assert_eq!(read["ipv6ServiceNetworkDefinition"], "fd00:ffff::1/64");
    let mut changed = read.clone();
    changed["ipv6ServiceNetworkDefinition"] = json!("fd00:eeee::1/64");
    refused(
        &admin.put(&format!("{CLOUDAPI}{edge1}"), &changed).await,
        "ipv6ServiceNetworkDefinition of edge gateway edge1 is fd00:ffff::1/64 and cannot be updated.",
    );
    admin.write_ok(Method::PUT, &edge1, Some(&read)).await;

    let mut read = admin.ok(&edge2).await;
    assert_eq!(read["ipv6ServiceNetworkDefinition"], json!(null));
    read["ipv6ServiceNetworkDefinition"] = json!("10.0.0.1/24");
    refused(
        &admin.put(&format!("{CLOUDAPI}{edge2}"), &read).await,
        "'10.0.0.1/24' is not an IPv6 CIDR",
    );
    read["ipv6ServiceNetworkDefinition"] = json!("fd00:eeee::1/64");
    admin.write_ok(Method::PUT, &edge2, Some(&read)).await;
    read.as_object_mut()
        .unwrap()
        .remove("ipv6ServiceNetworkDefinition");
    admin.write_ok(Method::PUT, &edge2, Some(&read)).await;
    assert_eq!(
        admin.ok(&edge2).await["ipv6ServiceNetworkDefinition"],
        "fd00:eeee::1/64",
        "a PUT without it leaves it"
    );
    assert_conforms(&sim);
}

#[tokio::test]
async fn ipv6_vips_need_the_ipv6_service_network() {
    let sim = edge2_without_ipv6_service_network().await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge2").await;
    let pool = pool(&client, &alb).await;
    let body = vs_body(&alb, "v6", &pool, (None, Some("2001:db8:6::10")), 80);
    refused(
        &client.post(&format!("{CLOUDAPI}{VS}"), &body).await,
        "Edge gateway edge2 has no IPv6 service network definition (ipv6ServiceNetworkDefinition) for IPv6 virtual IP addresses.",
    );
    assert_conforms(&sim);
}

#[tokio::test]
async fn pool_members_may_be_ipv6() {
    let sim = start(Scenario::dual_stack()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let id = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("v6", &["fd00:10::11", "10.0.0.11"])),
        )
        .await;
    let pool = client.ok(&format!("/loadBalancer/pools/{id}")).await;
    assert_eq!(pool["memberCount"], 2);
    assert_eq!(pool["members"][0]["ipAddress"], "fd00:10::11");
    refused(
        &client
            .post(
                &format!("{CLOUDAPI}/loadBalancer/pools"),
                &alb.pool("bad", &["fd00:10::zz"]),
            )
            .await,
        "Invalid member address 'fd00:10::zz'.",
    );
    assert_conforms(&sim);
}

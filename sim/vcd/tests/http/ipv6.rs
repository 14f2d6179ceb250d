//! IPv6 beside IPv4 on gateway `edge1`: an uplink with an IPv6 subnet and
//! virtual services with `ipv6VirtualIpAddress`, alone or dual stack (IPv6
//! IP Spaces are in `ipv6_ip_spaces`). Every body exchanged validates
//! against the 37.2 spec.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::{Scenario, ScenarioError, Sim, SimError};

use crate::conformance::assert_conforms;
use crate::support::{Alb, CLOUDAPI, Client, Reply, find_named, start};

pub const VS: &str = "/loadBalancer/virtualServices";

pub fn refused(reply: &Reply, needle: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{needle}: {message}");
}

/// A virtual service body with the given VIPs (`None` leaves one out).
pub fn vs_body(
    alb: &Alb,
    name: &str,
    pool: &str,
    vips: (Option<&str>, Option<&str>),
    port: u16,
) -> Value {
    let mut body = alb.virtual_service(name, pool, "", port);
    let object = body.as_object_mut().unwrap();
    object.remove("virtualIpAddress");
    if let Some(v4) = vips.0 {
        object.insert("virtualIpAddress".into(), json!(v4));
    }
    if let Some(v6) = vips.1 {
        object.insert("ipv6VirtualIpAddress".into(), json!(v6));
    }
    body
}

/// Creates a virtual service with the given VIPs; returns its id.
pub async fn create_vs(
    client: &Client,
    alb: &Alb,
    name: &str,
    pool: &str,
    vips: (Option<&str>, Option<&str>),
    port: u16,
) -> String {
    let body = vs_body(alb, name, pool, vips, port);
    client.write_ok(Method::POST, VS, Some(&body)).await
}

pub async fn pool(client: &Client, alb: &Alb) -> String {
    client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await
}

/// `usedIpAddresses` of a gateway as (address, category).
pub async fn used(client: &Client, gateway: &str) -> Vec<(String, String)> {
    let page = client
        .ok(&format!("/edgeGateways/{gateway}/usedIpAddresses"))
        .await;
    page["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["ipAddress"].as_str().unwrap().to_string(),
                u["category"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn entry(ip: &str, category: &str) -> (String, String) {
    (ip.to_string(), category.to_string())
}

#[tokio::test]
async fn an_uplink_carries_an_ipv6_subnet_beside_the_ipv4_one() {
    let sim = start(Scenario::dual_stack()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let gateway = client.ok(&format!("/edgeGateways/{gw}")).await;
    let subnets = &gateway["edgeGatewayUplinks"][0]["subnets"]["values"];
    assert_eq!(subnets.as_array().unwrap().len(), 2, "{subnets}");
    assert_eq!(subnets[0]["gateway"], "203.0.113.1");
    let v6 = &subnets[1];
    assert_eq!(v6["gateway"], "2001:db8:1::1");
    assert_eq!(v6["prefixLength"], 64);
    assert_eq!(v6["primaryIp"], "2001:db8:1::10");
    assert_eq!(
        v6["ipRanges"]["values"],
        json!([{"startAddress": "2001:db8:1::10", "endAddress": "2001:db8:1::50"}])
    );
    assert_eq!(v6["totalIpCount"], 65);
    assert_eq!(v6["usedIpCount"], 1, "the primary IP");
    assert_eq!(
        used(&client, &gw).await,
        [
            entry("203.0.113.10", "PRIMARY_IP"),
            entry("2001:db8:1::10", "PRIMARY_IP")
        ]
    );

    let pool = pool(&client, &alb).await;
    create_vs(
        &client,
        &alb,
        "v6",
        &pool,
        (None, Some("2001:db8:1::20")),
        80,
    )
    .await;
    create_vs(
        &client,
        &alb,
        "dual",
        &pool,
        (Some("203.0.113.21"), Some("2001:db8:1::21")),
        80,
    )
    .await;
    // An internal VIP, outside the gateway's ranges, as for IPv4.
    create_vs(
        &client,
        &alb,
        "internal",
        &pool,
        (None, Some("fd00::5")),
        80,
    )
    .await;
    assert_eq!(
        used(&client, &gw).await,
        [
            entry("203.0.113.10", "PRIMARY_IP"),
            entry("2001:db8:1::10", "PRIMARY_IP"),
            entry("2001:db8:1::20", "Load_Balancer"),
            entry("203.0.113.21", "Load_Balancer"),
            entry("2001:db8:1::21", "Load_Balancer"),
        ]
    );
    let gateway = client.ok(&format!("/edgeGateways/{gw}")).await;
    let subnets = &gateway["edgeGatewayUplinks"][0]["subnets"]["values"];
    assert_eq!(subnets[0]["usedIpCount"], 2);
    assert_eq!(subnets[1]["usedIpCount"], 3);

    // Summaries carry the IPv6 VIP, and FIQL filters on it.
    let summaries = format!("/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries");
    let page = client.ok(&summaries).await;
    let v6 = find_named(&page, "v6");
    assert_eq!(v6["ipv6VirtualIpAddress"], "2001:db8:1::20");
    assert_eq!(v6["virtualIpAddress"], Value::Null);
    let dual = find_named(&page, "dual");
    assert_eq!(dual["virtualIpAddress"], "203.0.113.21");
    assert_eq!(dual["ipv6VirtualIpAddress"], "2001:db8:1::21");
    let page = client
        .ok(&format!(
            "{summaries}?filter=ipv6VirtualIpAddress==2001:db8:1::21"
        ))
        .await;
    assert_eq!(page["resultTotal"], 1);
    assert_eq!(page["values"][0]["name"], "dual");
    assert_conforms(&sim);
}

#[tokio::test]
async fn the_ipv6_vip_is_checked_as_the_ipv4_one_is() {
    let sim = start(Scenario::dual_stack()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = pool(&client, &alb).await;
    let url = format!("{CLOUDAPI}{VS}");
    let post = |name: &str, vips: (Option<&str>, Option<&str>), port: u16| {
        let body = vs_body(&alb, name, &pool, vips, port);
        let (client, url) = (&client, &url);
        async move { client.post(url, &body).await }
    };

    refused(
        &post("bad", (None, Some("2001:db8:1::zz")), 80).await,
        "'2001:db8:1::zz' is not an IPv6 address",
    );
    refused(
        &post("v4-in-v6", (None, Some("203.0.113.30")), 80).await,
        "'203.0.113.30' is not an IPv6 address",
    );
    refused(
        &post("v6-in-v4", (Some("2001:db8:1::30"), None), 80).await,
        "'2001:db8:1::30' is not an IPv4 address",
    );
    refused(
        &post("none", (None, None), 80).await,
        "virtualIpAddress or ipv6VirtualIpAddress is required.",
    );
    refused(
        &post("primary", (None, Some("2001:db8:1::10")), 80).await,
        "2001:db8:1::10 is the primary IP of edge gateway edge1.",
    );

    let first = create_vs(
        &client,
        &alb,
        "http",
        &pool,
        (None, Some("2001:db8:1::30")),
        80,
    )
    .await;
    // Another spelling of the same address shares it: ports must differ.
    refused(
        &post("clash", (None, Some("2001:DB8:1:0::30")), 80).await,
        "2001:DB8:1:0::30 with these ports is already used by virtual service http.",
    );
    // A dual-stack service clashes on its IPv6 VIP even with a free IPv4 one.
    refused(
        &post(
            "dual-clash",
            (Some("203.0.113.30"), Some("2001:db8:1::30")),
            80,
        )
        .await,
        "already used by virtual service http.",
    );
    create_vs(
        &client,
        &alb,
        "https",
        &pool,
        (None, Some("2001:db8:1::30")),
        443,
    )
    .await;
    let mut udp = vs_body(&alb, "udp", &pool, (None, Some("2001:db8:1::30")), 80);
    udp["servicePorts"][0]["tcpUdpProfile"] =
        json!({"type": "UDP_FAST_PATH", "systemDefined": true});
    client.write_ok(Method::POST, VS, Some(&udp)).await;

    // A shared IPv6 VIP cannot change; adding an IPv4 VIP beside it can.
    let path = format!("{VS}/{first}");
    let mut body = client.ok(&path).await;
    body["ipv6VirtualIpAddress"] = json!("2001:db8:1::31");
    refused(
        &client.put(&format!("{CLOUDAPI}{path}"), &body).await,
        "The IPv6 virtual IP address is shared with another virtual service and cannot change.",
    );
    body["ipv6VirtualIpAddress"] = json!("2001:db8:1::30");
    body["virtualIpAddress"] = json!("203.0.113.31");
    client.write_ok(Method::PUT, &path, Some(&body)).await;
    assert_eq!(client.ok(&path).await["virtualIpAddress"], "203.0.113.31");
    assert_conforms(&sim);
}

#[tokio::test]
async fn requests_before_api_37_0_neither_see_nor_set_the_ipv6_vip() {
    let mut scenario = Scenario::dual_stack();
    scenario.api_versions.insert(0, "36.3".into());
    let sim = start(scenario).await;
    let client = Client::tenant(&sim).await;
    let mut old = client.clone();
    old.api_version = "36.3";
    let alb = Alb::discover(&client, "edge1").await;
    let pool = pool(&client, &alb).await;
    let body = vs_body(
        &alb,
        "dual",
        &pool,
        (Some("203.0.113.40"), Some("2001:db8:1::40")),
        80,
    );
    refused(
        &old.post(&format!("{CLOUDAPI}{VS}"), &body).await,
        "ipv6VirtualIpAddress needs API version 37.0 or later, not 36.3",
    );
    let id = client.write_ok(Method::POST, VS, Some(&body)).await;
    let path = format!("{VS}/{id}");
    let read = old.ok(&path).await;
    assert_eq!(read.get("ipv6VirtualIpAddress"), None, "{read}");
    old.write_ok(Method::PUT, &path, Some(&read)).await;
    assert_eq!(
        client.ok(&path).await["ipv6VirtualIpAddress"],
        "2001:db8:1::40"
    );
    let summaries = old
        .ok(&format!(
            "/edgeGateways/{}/loadBalancer/virtualServiceSummaries",
            alb.gateway_id()
        ))
        .await;
    assert_eq!(summaries["values"][0].get("ipv6VirtualIpAddress"), None);
}

#[tokio::test]
async fn a_subnet_holds_addresses_of_its_own_family() {
    let mixed = "orgs: [{name: o, vdcs: [{name: v}], edgeGateways: [{name: g, vdc: v, \
                 subnets: [{cidr: '2001:db8::1/64', primaryIp: 2001:db8::10, ranges: ['203.0.113.10-203.0.113.20']}]}]}]";
    match Sim::from_yaml(mixed).await {
        Err(SimError::Scenario(ScenarioError::Family { address, subnet })) => {
            assert_eq!(
                (address.as_str(), subnet.as_str()),
                ("203.0.113.10", "2001:db8::1/64")
            );
        }
        other => panic!("expected a family mismatch, got {:?}", other.err()),
    }
    let across = "ipSpaces: [{name: s, ranges: ['10.0.0.1-2001:db8::1']}]";
    assert!(matches!(
        Sim::from_yaml(across).await,
        Err(SimError::Scenario(ScenarioError::Ip(_)))
    ));
}

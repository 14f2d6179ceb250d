//! Bodies VCD's deserializer refuses: a property the 37.2 spec does not
//! define, anywhere in a write, is a 400 naming the property and its
//! definition; and what a client reads, read-only fields included, it may
//! PUT back.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};

/// Asserts a `400 BAD_REQUEST` naming `field` of `class`.
fn refused(reply: &crate::support::Reply, field: &str, class: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.minor(), "BAD_REQUEST");
    let message = reply.body["message"].as_str().unwrap();
    let wanted = format!("Unrecognized field \"{field}\" (class {class})");
    assert!(message.contains(&wanted), "{wanted}: {message}");
}

/// `body` with `value` set at the JSON pointer `at` (whose parent exists).
fn with(mut body: Value, at: &str, value: Value) -> Value {
    let (parent, key) = at.rsplit_once('/').unwrap();
    body.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent}"))
        .insert(key.to_string(), value);
    body
}

/// Reads `path` and PUTs the body back; the write must succeed.
async fn round_trip(client: &Client, path: &str) {
    let read = client.ok(path).await;
    client.write_ok(Method::PUT, path, Some(&read)).await;
}

#[tokio::test]
async fn every_write_family_refuses_a_property_vcd_does_not_define() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let admin = Client::system(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let pool = alb.pool("p", &["10.0.0.11"]);
    let pool_id = client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&pool))
        .await;
    let vs = alb.virtual_service("v", &pool_id, "203.0.113.20", 80);
    let vdc = client.ok("/vdcs").await["values"][0]["id"].clone();
    let session = client.ok("/sessions/current").await;
    let profile = json!({
        "name": "web", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["80"]}],
    });
    let nat = json!({
        "name": "dnat", "type": "DNAT", "externalAddresses": "203.0.113.21",
        "internalAddresses": "10.0.0.11",
    });
    let entity = client
        .ok("/entities/types/vmware/capvcdCluster/1.3.0")
        .await["values"][0]
        .clone();
    let rules = json!({"userDefinedRules": [{"name": "r", "actionValue": "ALLOW"}]});
    let group = json!({"name": "s", "typeValue": "IP_SET", "ownerRef": alb.gateway, "ipAddresses": ["10.0.0.1"]});

    let cases: Vec<(&Client, Method, String, Value, &str, &str)> = vec![
        (
            &client,
            Method::POST,
            "/loadBalancer/pools".into(),
            with(pool.clone(), "/healthMonitors/0/monitorPort", json!(32000)),
            "monitorPort",
            "EdgeLoadBalancerHealthMonitor",
        ),
        (
            &client,
            Method::PUT,
            format!("/loadBalancer/pools/{pool_id}"),
            with(
                pool.clone(),
                "/healthMonitors/0/httpRequest",
                json!("GET /"),
            ),
            "httpRequest",
            "EdgeLoadBalancerHealthMonitor",
        ),
        (
            &client,
            Method::POST,
            "/loadBalancer/pools".into(),
            with(pool.clone(), "/gatewayRef/href", json!("https://x")),
            "href",
            "EntityReference",
        ),
        (
            &client,
            Method::POST,
            "/loadBalancer/virtualServices".into(),
            with(vs.clone(), "/servicePorts/0/portRange", json!("80")),
            "portRange",
            "EdgeLoadBalancerServicePort",
        ),
        (
            &client,
            Method::POST,
            format!("/edgeGateways/{gw}/nat/rules"),
            with(nat, "/translatedPort", json!("80")),
            "translatedPort",
            "EdgeNatRule",
        ),
        (
            &client,
            Method::POST,
            "/applicationPortProfiles".into(),
            with(profile, "/applicationPorts/0/sourcePorts", json!([])),
            "sourcePorts",
            "ApplicationPortList",
        ),
        (
            &client,
            Method::POST,
            "/ssl/certificateLibrary".into(),
            json!({"alias": "c", "certificate": "PEM", "keyAlgorithm": "RSA"}),
            "keyAlgorithm",
            "CertificateLibraryItem",
        ),
        (
            &client,
            Method::PUT,
            format!("/entities/{}", entity["id"].as_str().unwrap()),
            with(entity.clone(), "/etag", json!("x")),
            "etag",
            "DefinedEntity",
        ),
        (
            &client,
            Method::POST,
            "/entityTypes/urn:vcloud:type:vmware:capvcdCluster:1.3.0".into(),
            json!({"name": "c", "entity": {}, "kind": "x"}),
            "kind",
            "DefinedEntity",
        ),
        (
            &client,
            Method::PUT,
            format!("/edgeGateways/{gw}/firewall/rules"),
            with(rules, "/userDefinedRules/0/sourceIps", json!(["0.0.0.0/0"])),
            "sourceIps",
            "EdgeFirewallRule",
        ),
        (
            &client,
            Method::POST,
            "/firewallGroups".into(),
            with(group, "/ipRanges", json!([])),
            "ipRanges",
            "FirewallGroupDetails",
        ),
        (
            &admin,
            Method::PUT,
            format!("/edgeGateways/{gw}/loadBalancer"),
            json!({"enabled": true, "vipSubnet": "10.0.0.0/24"}),
            "vipSubnet",
            "EdgeGatewayLoadBalancerConfig",
        ),
    ];
    for (caller, method, path, body, field, class) in cases {
        let reply = caller
            .call(method, &format!("{CLOUDAPI}{path}"), Some(&body))
            .await;
        refused(&reply, field, class);
    }
    assert_eq!(
        sim.with_world(|w| w.tasks.len()),
        1,
        "only the pool create ran"
    );
}

#[tokio::test]
async fn ip_space_writes_refuse_a_property_vcd_does_not_define() {
    let sim = start(Scenario::ip_space()).await;
    let client = Client::tenant(&sim).await;
    let space = client.ok("/ipSpaces/summaries").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let allocate = format!("{CLOUDAPI}/ipSpaces/{space}/allocate");
    let reply = client
        .post(&allocate, &json!({"type": "FLOATING_IP", "count": 1}))
        .await;
    refused(&reply, "count", "IpSpaceIpAllocationRequest");
    client
        .write_ok(
            Method::POST,
            &format!("/ipSpaces/{space}/allocate"),
            Some(&json!({"type": "FLOATING_IP", "quantity": 1})),
        )
        .await;
    let listed = client.ok(&format!("/ipSpaces/{space}/allocations")).await;
    let id = listed["values"][0]["id"].as_str().unwrap().to_string();
    let path = format!("/ipSpaces/{space}/allocations/{id}");
    let read = client.ok(&path).await;
    let reply = client
        .put(
            &format!("{CLOUDAPI}{path}"),
            &with(read, "/usedBy", json!("me")),
        )
        .await;
    refused(&reply, "usedBy", "IpSpaceIpAllocation");
    round_trip(&client, &path).await;
}

#[tokio::test]
async fn what_a_client_reads_it_may_put_back() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let admin = Client::system(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let mut pool = alb.pool("p", &["10.0.0.11"]);
    pool["persistenceProfile"] = json!({"type": "CLIENT_IP"});
    let pool_id = client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&pool))
        .await;
    let vs = alb.virtual_service("v", &pool_id, "203.0.113.20", 80);
    let vs_id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let group = json!({"name": "s", "typeValue": "IP_SET", "ownerRef": alb.gateway, "ipAddresses": ["10.0.0.1"]});
    let group_id = client
        .write_ok(Method::POST, "/firewallGroups", Some(&group))
        .await;
    let rules = format!("/edgeGateways/{gw}/firewall/rules");
    let rule = json!({"name": "r", "actionValue": "ALLOW", "destinationFirewallGroups": [{"id": group_id}]});
    client
        .write_ok(
            Method::PUT,
            &rules,
            Some(&json!({"userDefinedRules": [rule]})),
        )
        .await;
    let rule_id = client.ok(&rules).await["userDefinedRules"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let vdc = client.ok("/vdcs").await["values"][0]["id"].clone();
    let session = client.ok("/sessions/current").await;
    let profile = json!({
        "name": "web", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["80"]}],
    });
    let profile_id = client
        .write_ok(Method::POST, "/applicationPortProfiles", Some(&profile))
        .await;
    let nat = json!({
        "name": "dnat", "type": "DNAT", "externalAddresses": "203.0.113.21",
        "internalAddresses": "10.0.0.11", "applicationPortProfile": {"id": profile_id},
    });
    let nat_id = client
        .write_ok(
            Method::POST,
            &format!("/edgeGateways/{gw}/nat/rules"),
            Some(&nat),
        )
        .await;

    for path in [
        format!("/loadBalancer/pools/{pool_id}"),
        format!("/loadBalancer/virtualServices/{vs_id}"),
        format!("/firewallGroups/{group_id}"),
        rules.clone(),
        format!("{rules}/{rule_id}"),
        format!("/applicationPortProfiles/{profile_id}"),
        format!("/edgeGateways/{gw}/nat/rules/{nat_id}"),
    ] {
        round_trip(&client, &path).await;
    }
    round_trip(&admin, &format!("/edgeGateways/{gw}/loadBalancer")).await;
    let read = client.ok(&format!("/loadBalancer/pools/{pool_id}")).await;
    assert_eq!(read["persistenceProfile"]["type"], "CLIENT_IP");

    // Synchronous writes answer the object.
    let cert = client.ok("/ssl/certificateLibrary").await["values"][0].clone();
    let entity = client
        .ok("/entities/types/vmware/capvcdCluster/1.3.0")
        .await["values"][0]
        .clone();
    for (path, body) in [
        (
            format!("/ssl/certificateLibrary/{}", cert["id"].as_str().unwrap()),
            cert,
        ),
        (
            format!("/entities/{}", entity["id"].as_str().unwrap()),
            entity,
        ),
    ] {
        let reply = client.put(&format!("{CLOUDAPI}{path}"), &body).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.body);
    }
}

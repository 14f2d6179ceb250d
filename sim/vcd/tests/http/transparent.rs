//! Transparent mode (Preserve Client IP): a virtual service may enable it
//! only where the gateway's load-balancer settings do, and only from API
//! 37.1; older requests neither see nor set it.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, Reply, start};

fn refused(reply: &Reply, needle: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{needle}: {message}");
}

/// A pool on `edge1` whose members are an IP set, as transparent mode
/// needs, and a transparent virtual service body on it.
async fn transparent_vs(client: &Client, alb: &Alb, name: &str, port: u16) -> Value {
    let pool = alb.create_group_pool(client, name, &["10.0.0.11"]).await;
    let mut vs = alb.virtual_service(name, &pool, "203.0.113.20", port);
    vs["transparentModeEnabled"] = json!(true);
    vs
}

#[tokio::test]
async fn a_virtual_service_is_transparent_only_where_the_gateway_allows_it() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let admin = Client::system(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let settings = format!("/edgeGateways/{gw}/loadBalancer");
    assert_eq!(
        client.ok(&settings).await["transparentModeEnabled"],
        false,
        "off unless the scenario turns it on"
    );
    let vs = transparent_vs(&client, &alb, "a", 80).await;
    let url = format!("{CLOUDAPI}/loadBalancer/virtualServices");
    refused(
        &client.post(&url, &vs).await,
        "Transparent mode is not enabled on the load balancer of edge gateway edge1",
    );

    // The provider turns it on in the gateway's settings.
    let mut on = admin.ok(&settings).await;
    on["transparentModeEnabled"] = json!(true);
    admin.write_ok(Method::PUT, &settings, Some(&on)).await;
    let id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let read = client
        .ok(&format!("/loadBalancer/virtualServices/{id}"))
        .await;
    assert_eq!(read["transparentModeEnabled"], true);

    // A pool listing its members cannot preserve the client IP, and a
    // transparent service's pool cannot go back to a list.
    let listed = alb.create_pool(&client, "listed").await;
    let mut vs_listed = alb.virtual_service("listed", &listed, "203.0.113.21", 80);
    vs_listed["transparentModeEnabled"] = json!(true);
    refused(
        &client.post(&url, &vs_listed).await,
        "Transparent mode needs pool listed to take its members from a firewall group",
    );
    let pool_id = read["loadBalancerPoolRef"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let pool_url = format!("/loadBalancer/pools/{pool_id}");
    let mut as_list = client.ok(&pool_url).await;
    as_list.as_object_mut().unwrap().remove("memberGroupRef");
    as_list["members"] = json!([{"ipAddress": "10.0.0.11"}]);
    refused(
        &client.put(&format!("{CLOUDAPI}{pool_url}"), &as_list).await,
        "must keep a member group",
    );

    // Off again (through the admin API): new transparent services are refused.
    let off = crate::support::http()
        .put(format!(
            "{}/_sim/gateways/{gw}/transparentMode",
            sim.base_url()
        ))
        .json(&json!({"enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), StatusCode::OK);
    assert_eq!(client.ok(&settings).await["transparentModeEnabled"], false);
    let vs = transparent_vs(&client, &alb, "b", 81).await;
    refused(
        &client.post(&url, &vs).await,
        "Transparent mode is not enabled",
    );
}

#[tokio::test]
async fn the_scenario_and_the_world_set_the_gateways_transparent_mode() {
    let mut scenario = Scenario::default_scenario();
    scenario.orgs[0].edge_gateways[0]
        .load_balancer
        .transparent_mode_enabled = true;
    let sim = start(scenario).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let vs = transparent_vs(&client, &alb, "a", 80).await;
    client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;

    let gw = alb.gateway_id().to_string();
    sim.with_world(|w| w.set_transparent_mode(&gw, false))
        .unwrap();
    let vs = transparent_vs(&client, &alb, "b", 81).await;
    refused(
        &client
            .post(&format!("{CLOUDAPI}/loadBalancer/virtualServices"), &vs)
            .await,
        "Transparent mode is not enabled",
    );
    let unknown = crate::support::http()
        .put(format!(
            "{}/_sim/gateways/nope/transparentMode",
            sim.base_url()
        ))
        .json(&json!({"enabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn requests_before_api_37_1_neither_see_nor_set_transparent_mode() {
    let mut scenario = Scenario::default_scenario();
    scenario.orgs[0].edge_gateways[0]
        .load_balancer
        .transparent_mode_enabled = true;
    scenario.api_versions.insert(0, "37.0".into());
    let sim = start(scenario).await;
    let client = Client::tenant(&sim).await;
    let mut old = client.clone();
    old.api_version = "37.0";
    let mut old_admin = Client::system(&sim).await;
    old_admin.api_version = "37.0";
    let alb = Alb::discover(&client, "edge1").await;
    let vs = transparent_vs(&client, &alb, "a", 80).await;
    let url = format!("{CLOUDAPI}/loadBalancer/virtualServices");
    refused(
        &old.post(&url, &vs).await,
        "transparentModeEnabled needs API version 37.1 or later, not 37.0",
    );
    let id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;

    // Read at 37.0 the field is absent; written back, the service keeps it.
    let path = format!("/loadBalancer/virtualServices/{id}");
    let read = old.ok(&path).await;
    assert_eq!(read.get("transparentModeEnabled"), None, "{read}");
    old.write_ok(Method::PUT, &path, Some(&read)).await;
    assert_eq!(client.ok(&path).await["transparentModeEnabled"], true);
    let summaries = old
        .ok(&format!(
            "/edgeGateways/{}/loadBalancer/virtualServiceSummaries",
            alb.gateway_id()
        ))
        .await;
    assert_eq!(summaries["values"][0].get("transparentModeEnabled"), None);

    let settings = format!("/edgeGateways/{}/loadBalancer", alb.gateway_id());
    let read = old_admin.ok(&settings).await;
    assert_eq!(read.get("transparentModeEnabled"), None, "{read}");
    old_admin
        .write_ok(Method::PUT, &settings, Some(&read))
        .await;
    assert_eq!(client.ok(&settings).await["transparentModeEnabled"], true);
    let mut off = read.clone();
    off["transparentModeEnabled"] = json!(false);
    refused(
        &old_admin.put(&format!("{CLOUDAPI}{settings}"), &off).await,
        "needs API version 37.1",
    );
}

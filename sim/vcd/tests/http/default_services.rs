//! VCD's default gateway services on IP Space uplinks
//! (`defaultGatewayServices: true`): the NO SNAT and SNAT rules and the
//! firewall rule VCD creates, and their re-application, which leaves the
//! rules of clients alone.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Client, find_named, start};

fn with_defaults() -> Scenario {
    let yaml = vcdsim::scenario::IP_SPACE_SCENARIO.replace(
        "    defaultFloatingIpQuota: 3\n",
        "    defaultFloatingIpQuota: 3\n    defaultGatewayServices: true\n",
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

async fn nat_rules(client: &Client, gw: &str) -> Vec<Value> {
    client.ok(&format!("/edgeGateways/{gw}/nat/rules")).await["values"]
        .as_array()
        .unwrap()
        .clone()
}

async fn user_firewall(client: &Client, gw: &str) -> Vec<Value> {
    client
        .ok(&format!("/edgeGateways/{gw}/firewall/rules"))
        .await["userDefinedRules"]
        .as_array()
        .unwrap()
        .clone()
}

/// `POST /_sim/gateways/{gw}/defaultGatewayServices`.
async fn post_reapply(sim: &vcdsim::Sim, gw: &str) -> reqwest::Response {
    crate::support::http()
        .post(format!(
            "{}/_sim/gateways/{gw}/defaultGatewayServices",
            sim.base_url()
        ))
        .send()
        .await
        .unwrap()
}

async fn reapply(sim: &vcdsim::Sim, gw: &str) -> Value {
    let response = post_reapply(sim, gw).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

async fn gateway_id(client: &Client) -> String {
    client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn names(changes: &Value) -> Vec<&str> {
    changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn gateways_on_the_space_carry_vcds_default_rules() {
    let sim = start(with_defaults()).await;
    let client = Client::tenant(&sim).await;
    let gw = gateway_id(&client).await;
    let page = json!({"values": nat_rules(&client, &gw).await});
    let no_snat = find_named(&page, "DEFAULT_NO_SNAT_public1");
    assert_eq!(no_snat["type"], "NO_SNAT");
    assert_eq!(no_snat["priority"], 1001);
    assert_eq!(no_snat["description"], Value::Null);
    let snat = find_named(&page, "DEFAULT_SNAT_public1");
    assert_eq!(snat["type"], "SNAT");
    assert_eq!(snat["priority"], 1000);
    assert_eq!(snat["externalAddresses"], "192.0.2.10");
    let firewall = json!({"values": user_firewall(&client, &gw).await});
    let rule = find_named(&firewall, "DEFAULT_ALLOW_OUTBOUND_public1");
    assert_eq!(rule["actionValue"], "ALLOW");
    assert_eq!(rule["direction"], "OUT");

    // Without the key, no default rules.
    let plain = start(Scenario::ip_space()).await;
    let client = Client::tenant(&plain).await;
    let gw = gateway_id(&client).await;
    assert!(nat_rules(&client, &gw).await.is_empty());
    assert!(user_firewall(&client, &gw).await.is_empty());
}

#[tokio::test]
async fn reapplying_replaces_vcds_rules_and_leaves_the_clients_alone() {
    let sim = start(with_defaults()).await;
    let client = Client::tenant(&sim).await;
    let gw = gateway_id(&client).await;
    // A client rule, even one named like VCD's, and a client firewall rule.
    let nat = format!("/edgeGateways/{gw}/nat/rules");
    let dnat = json!({"name": "DEFAULT_SNAT_public1", "type": "DNAT",
                      "externalAddresses": "192.0.2.11", "internalAddresses": "10.0.0.11",
                      "description": "ours"});
    sim.set_knobs(|k| k.strict_external_ips = false);
    let ours = client.write_ok(Method::POST, &nat, Some(&dnat)).await;
    let firewall = format!("/edgeGateways/{gw}/firewall/rules");
    let mut rules = user_firewall(&client, &gw).await;
    rules.insert(
        0,
        json!({"name": "web-in", "actionValue": "ALLOW", "direction": "IN"}),
    );
    client
        .write_ok(
            Method::PUT,
            &firewall,
            Some(&json!({"userDefinedRules": rules})),
        )
        .await;
    let nat_before = nat_rules(&client, &gw).await;
    let ours_before = nat_before
        .iter()
        .find(|r| r["id"] == ours.as_str())
        .unwrap()
        .clone();
    let web_before = user_firewall(&client, &gw).await[0].clone();
    assert_eq!(web_before["name"], "web-in");

    let applied = reapply(&sim, &gw).await;
    assert_eq!(
        names(&applied["deleted"]),
        ["DEFAULT_NO_SNAT_public1", "DEFAULT_SNAT_public1"]
    );
    assert_eq!(
        names(&applied["created"]),
        ["DEFAULT_NO_SNAT_public1", "DEFAULT_SNAT_public1"]
    );
    assert_eq!(
        names(&applied["updated"]),
        ["DEFAULT_ALLOW_OUTBOUND_public1"]
    );
    for created in applied["created"].as_array().unwrap() {
        assert!(
            !nat_before.iter().any(|r| r["id"] == created["id"]),
            "a new id"
        );
    }
    assert!(
        !applied.to_string().contains(ours.as_str()),
        "the client's rule is not VCD's: {applied}"
    );

    let nat_after = nat_rules(&client, &gw).await;
    let ours_after = nat_after.iter().find(|r| r["id"] == ours.as_str()).unwrap();
    assert_eq!(ours_after, &ours_before, "unchanged, at its version");
    assert_eq!(nat_after.len(), 3);
    let firewall_after = user_firewall(&client, &gw).await;
    assert_eq!(
        firewall_after[0], web_before,
        "unchanged, first in the list"
    );
    assert_eq!(firewall_after[1]["name"], "DEFAULT_ALLOW_OUTBOUND_public1");
    assert_eq!(firewall_after[1]["version"]["version"], 1);

    // The SNAT rule keeps its floating IP; the allocation is the org's.
    let snat = nat_after.iter().find(|r| r["type"] == "SNAT").unwrap();
    assert_eq!(snat["externalAddresses"], "192.0.2.10");
    let again = reapply(&sim, &gw).await;
    assert_eq!(names(&again["created"]).len(), 2);
    let unknown = post_reapply(&sim, "urn:vcloud:gateway:none").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

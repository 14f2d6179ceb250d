//! Distributed-only gateways (`deploymentMode: DISTRIBUTED_ONLY`, API
//! 39.0): every NAT and gateway firewall endpoint refuses, load balancing
//! works, and the mode shows on the gateway from 39.0 only.

use reqwest::{Method, StatusCode};
use serde_json::json;
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};
use crate::versions::refused;

/// The default world with `edge1` distributed-only.
pub fn distributed_only() -> Scenario {
    let yaml = vcdsim::scenario::DEFAULT_SCENARIO.replace(
        "      - name: edge1\n",
        "      - name: edge1\n        deploymentMode: DISTRIBUTED_ONLY\n",
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

#[tokio::test]
async fn the_mode_shows_from_39_0() {
    let sim = start(distributed_only()).await;
    let mut client = Client::tenant(&sim).await;
    let gateway = |body: serde_json::Value| body["values"][0].clone();
    for version in ["37.2", "38.0", "38.1"] {
        client.api_version = version;
        let read = gateway(client.ok("/edgeGateways").await);
        assert!(read.get("deploymentMode").is_none(), "{version}: {read}");
    }
    for version in ["39.0", "39.1"] {
        client.api_version = version;
        let read = gateway(client.ok("/edgeGateways").await);
        assert_eq!(read["deploymentMode"], "DISTRIBUTED_ONLY", "{version}");
    }
    let sim = start(Scenario::default_scenario()).await;
    let mut client = Client::tenant(&sim).await;
    client.api_version = "39.0";
    let read = gateway(client.ok("/edgeGateways").await);
    assert_eq!(read["deploymentMode"], "ACTIVE_STANDBY");

    let bad = vcdsim::scenario::DEFAULT_SCENARIO.replace(
        "      - name: edge1\n",
        "      - name: edge1\n        deploymentMode: SOMETIMES\n",
    );
    let error = Scenario::from_yaml(&bad).unwrap_err().to_string();
    assert!(error.contains("SOMETIMES"), "{error}");
}

#[tokio::test]
async fn nat_and_the_gateway_firewall_refuse_while_load_balancing_works() {
    let sim = start(distributed_only()).await;
    let mut client = Client::tenant(&sim).await;
    client.api_version = "39.1";
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let nat = format!("{CLOUDAPI}/edgeGateways/{gw}/nat/rules");
    let rule = json!({"name": "r", "type": "DNAT", "externalAddresses": "203.0.113.20",
                      "internalAddresses": "10.0.0.11"});
    let firewall = format!("{CLOUDAPI}/edgeGateways/{gw}/firewall/rules");
    let rules = json!({"userDefinedRules": [{"name": "r", "actionValue": "ALLOW"}]});
    let one_rule = json!({"name": "r", "actionValue": "ALLOW", "version": {"version": 0}});
    let replies = [
        ("NAT", client.get(&nat).await),
        ("NAT", client.post(&nat, &rule).await),
        ("NAT", client.get(&format!("{nat}/x")).await),
        ("NAT", client.put(&format!("{nat}/x"), &rule).await),
        ("NAT", client.delete(&format!("{nat}/x")).await),
        ("firewall", client.get(&firewall).await),
        ("firewall", client.put(&firewall, &rules).await),
        ("firewall", client.get(&format!("{firewall}/x")).await),
        (
            "firewall",
            client.put(&format!("{firewall}/x"), &one_rule).await,
        ),
        ("firewall", client.delete(&format!("{firewall}/x")).await),
    ];
    for (what, reply) in &replies {
        refused(reply, &[what, "edge1", "DISTRIBUTED_ONLY", "no NAT"]);
    }

    let pool = alb.create_pool(&client, "web").await;
    let vs = alb.virtual_service("web", &pool, "203.0.113.20", 80);
    let id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let read = client
        .ok(&format!("/loadBalancer/virtualServices/{id}"))
        .await;
    assert_eq!(read["healthStatus"], "UP");
    assert_eq!(
        client
            .get(&format!("{CLOUDAPI}/edgeGateways/{gw}/loadBalancer"))
            .await
            .status,
        StatusCode::OK
    );
}

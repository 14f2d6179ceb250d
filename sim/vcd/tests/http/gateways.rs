use reqwest::StatusCode;
use serde_json::Value;
use vcdsim::Scenario;
use vcdsim::world::network::{OrgVdcNetwork, Subnet};

use crate::support::{CLOUDAPI, Client, start};

#[tokio::test]
async fn gateway_has_the_shape_clients_depend_on() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let page = client.ok("/edgeGateways").await;
    assert_eq!(page["resultTotal"], 1);
    let id = page["values"][0]["id"].as_str().unwrap();
    assert!(id.starts_with("urn:vcloud:gateway:"));
    let gateway = client.ok(&format!("/edgeGateways/{id}")).await;
    assert_eq!(gateway["status"], "REALIZED");
    assert_eq!(gateway["gatewayBacking"]["gatewayType"], "NSXT_BACKED");
    let uplinks = gateway["edgeGatewayUplinks"].as_array().unwrap();
    assert_eq!(uplinks.len(), 1);
    assert_eq!(uplinks[0]["usingIpSpace"], false);
    let subnet = &uplinks[0]["subnets"]["values"][0];
    assert_eq!(subnet["primaryIp"], "203.0.113.10");
    assert_eq!(subnet["totalIpCount"], 41);
    assert_eq!(subnet["usedIpCount"], 1);
    assert_eq!(
        subnet["ipRanges"]["values"][0]["startAddress"],
        "203.0.113.10"
    );

    let used = client
        .ok(&format!("/edgeGateways/{id}/usedIpAddresses"))
        .await;
    assert_eq!(used["values"][0]["ipAddress"], "203.0.113.10");
    assert_eq!(used["values"][0]["category"], "PRIMARY_IP");
    // A page past the end is empty, not an error.
    let past = client
        .ok(&format!("/edgeGateways/{id}/usedIpAddresses?page=5"))
        .await;
    assert_eq!(past["values"], Value::Array(vec![]));
    assert_eq!(past["resultTotal"], 1);

    let network = &client.ok("/orgVdcNetworks").await["values"][0];
    assert_eq!(network["backingNetworkType"], "NSXT_FLEXIBLE_SEGMENT");
    assert_eq!(network["connection"]["routerRef"]["id"], id);
    assert_eq!(network["usedIpCount"], 3);
}

#[tokio::test]
async fn network_pages_clamp_to_32_and_end_empty() {
    let sim = start(Scenario::default_scenario()).await;
    sim.with_world(|world| {
        let template = world.networks[0].clone();
        for i in 0..40 {
            world.networks.push(OrgVdcNetwork {
                id: vcdsim::ids::new_urn("network"),
                name: format!("extra-{i:02}"),
                subnet: Subnet {
                    ranges: Vec::new(),
                    ..template.subnet.clone()
                },
                ..template.clone()
            });
        }
    });
    let client = Client::tenant(&sim).await;
    let default = client.ok("/orgVdcNetworks").await;
    assert_eq!(default["pageSize"], 16);
    let first = client
        .get(&format!("{CLOUDAPI}/orgVdcNetworks?page=1&pageSize=100"))
        .await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body["pageSize"], 32);
    assert_eq!(first.body["resultTotal"], 41);
    assert_eq!(first.body["pageCount"], 2);
    assert_eq!(first.body["values"].as_array().unwrap().len(), 32);
    assert_eq!(first.body["values"][0]["name"], "extra-00");
    let links: Vec<&str> = first
        .headers
        .get_all("link")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        links
            .iter()
            .any(|l| l.contains("page=2") && l.contains("rel=\"nextPage\"")),
        "{links:?}"
    );
    let second = client.ok("/orgVdcNetworks?page=2&pageSize=32").await;
    assert_eq!(second["values"].as_array().unwrap().len(), 9);
    let third = client.ok("/orgVdcNetworks?page=3&pageSize=32").await;
    assert_eq!(third["values"].as_array().unwrap().len(), 0);
    let desc = client.ok("/orgVdcNetworks?sortDesc=name&pageSize=1").await;
    assert_eq!(desc["values"][0]["name"], "net1");
    let bad = client
        .get(&format!("{CLOUDAPI}/orgVdcNetworks?page=0"))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn fiql_filters_select_and_bad_filters_are_400() {
    let sim = start(Scenario::default_scenario()).await;
    sim.with_world(|world| {
        let template = world.networks[0].clone();
        for name in ["alpha", "beta", "gamma"] {
            world.networks.push(OrgVdcNetwork {
                id: vcdsim::ids::new_urn("network"),
                name: name.into(),
                ..template.clone()
            });
        }
    });
    let client = Client::tenant(&sim).await;
    let names = |page: Value| -> Vec<String> {
        page["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(client.ok("/orgVdcNetworks?filter=name==beta").await),
        ["beta"]
    );
    assert_eq!(
        names(
            client
                .ok("/orgVdcNetworks?filter=name==alpha,name==gamma")
                .await
        ),
        ["alpha", "gamma"]
    );
    assert_eq!(
        names(
            client
                .ok("/orgVdcNetworks?filter=name==a*;name!=alpha")
                .await
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        names(client.ok("/orgVdcNetworks?filter=name==*A").await),
        ["alpha", "beta", "gamma"]
    );
    assert_eq!(
        names(
            client
                .ok("/orgVdcNetworks?filter=(name==beta,name==net1);orgVdc.name==vdc1")
                .await
        ),
        ["beta", "net1"]
    );
    let reply = client
        .get(&format!("{CLOUDAPI}/orgVdcNetworks?filter=name=beta"))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.minor(), "BAD_REQUEST");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("Cannot parse the supplied filter")
    );
}

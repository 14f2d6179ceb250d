use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{CLOUDAPI, Client, start};

async fn gateway_id(client: &Client) -> String {
    client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn dnat(name: &str, external: &str, port: u16) -> Value {
    json!({
        "name": name, "enabled": true, "ruleType": "DNAT",
        "externalAddresses": external, "internalAddresses": "192.168.8.2",
        "dnatExternalPort": port.to_string(),
    })
}

/// Follows `Link: <…>;rel="nextPage"` until it is absent.
async fn walk_cursor(client: &Client, first: &str) -> (Vec<Value>, usize) {
    let mut url = format!("{CLOUDAPI}{first}");
    let mut rules = Vec::new();
    let mut pages = 0;
    loop {
        let reply = client.get(&url).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert!(
            reply.body.get("resultTotal").is_none(),
            "cursor lists carry no totals"
        );
        pages += 1;
        rules.extend(reply.body["values"].as_array().unwrap().iter().cloned());
        let next = reply.header("link").map(str::to_string);
        match next {
            Some(link) => {
                assert!(
                    link.ends_with(";rel=\"nextPage\";type=\"application/json\""),
                    "{link}"
                );
                url = link[1..link.find('>').unwrap()].to_string();
            }
            None => return (rules, pages),
        }
    }
}

#[tokio::test]
async fn nat_rules_crud_with_cursor_paging_and_versions() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let gw = gateway_id(&client).await;
    let rules = format!("/edgeGateways/{gw}/nat/rules");
    let mut ids = Vec::new();
    for i in 0..5u16 {
        ids.push(
            client
                .write_ok(
                    Method::POST,
                    &rules,
                    Some(&dnat(
                        &format!("dnat-{i}"),
                        &format!("203.0.113.{}", 20 + i),
                        80 + i,
                    )),
                )
                .await,
        );
    }
    assert!(!ids[0].starts_with("urn:"), "NAT rule ids are bare UUIDs");
    let (all, pages) = walk_cursor(&client, &format!("{rules}?pageSize=2")).await;
    assert_eq!(pages, 3);
    let names: Vec<&str> = all.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["dnat-0", "dnat-1", "dnat-2", "dnat-3", "dnat-4"]);
    let rule = client.ok(&format!("{rules}/{}", ids[0])).await;
    assert_eq!(rule["type"], "DNAT");
    assert_eq!(rule["ruleType"], "DNAT");
    assert_eq!(rule["version"]["version"], 0);
    assert_eq!(rule["dnatExternalPort"], "80");

    let used = client
        .ok(&format!(
            "/edgeGateways/{gw}/usedIpAddresses?filter=category==DNAT"
        ))
        .await;
    assert_eq!(used["resultTotal"], 5);

    let mut update = rule.clone();
    update["dnatExternalPort"] = json!("8080");
    client
        .write_ok(Method::PUT, &format!("{rules}/{}", ids[0]), Some(&update))
        .await;
    let updated = client.ok(&format!("{rules}/{}", ids[0])).await;
    assert_eq!(updated["version"]["version"], 1);
    assert_eq!(updated["dnatExternalPort"], "8080");
    // A stale version is refused; a missing one too.
    let stale = client
        .put(&format!("{CLOUDAPI}{rules}/{}", ids[0]), &update)
        .await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST);
    update.as_object_mut().unwrap().remove("version");
    assert_eq!(
        client
            .put(&format!("{CLOUDAPI}{rules}/{}", ids[0]), &update)
            .await
            .status,
        StatusCode::BAD_REQUEST
    );

    client
        .write_ok(Method::DELETE, &format!("{rules}/{}", ids[0]), None)
        .await;
    let gone = client.get(&format!("{CLOUDAPI}{rules}/{}", ids[0])).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.minor(), "RESOURCE_NOT_FOUND");
}

#[tokio::test]
async fn nat_external_addresses_must_belong_to_the_gateway() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let gw = gateway_id(&client).await;
    let path = format!("{CLOUDAPI}/edgeGateways/{gw}/nat/rules");
    let reply = client
        .post(&path, &dnat("outside", "198.51.100.7", 80))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let mut bad_port = dnat("bad-port", "203.0.113.20", 80);
    bad_port["dnatExternalPort"] = json!("eighty");
    assert_eq!(
        client.post(&path, &bad_port).await.status,
        StatusCode::BAD_REQUEST
    );
    sim.set_knobs(|k| k.strict_external_ips = false);
    assert_eq!(
        client
            .post(&path, &dnat("outside", "198.51.100.7", 80))
            .await
            .status,
        StatusCode::ACCEPTED
    );
}

#[tokio::test]
async fn app_port_profiles_scope_names_and_references() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let session = client.ok("/sessions/current").await;
    let vdc = client.ok("/vdcs").await["values"][0]["id"].clone();
    let profile = json!({
        "name": "appPort_dnat-web", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["8080"]}],
    });
    // The task's Owner carries the new id, which a GET then resolves.
    let id = client
        .write_ok(Method::POST, "/applicationPortProfiles", Some(&profile))
        .await;
    let stored = client.ok(&format!("/applicationPortProfiles/{id}")).await;
    assert_eq!(stored["usableForNAT"], true);
    assert!(stored.get("contextEntityId").is_none());
    let found = client
        .ok("/applicationPortProfiles?filter=scope==TENANT;name==appPort_dnat-web")
        .await;
    assert_eq!(found["resultTotal"], 1);
    let system = client
        .ok("/applicationPortProfiles?filter=scope==SYSTEM")
        .await;
    assert!(system["resultTotal"].as_u64().unwrap() >= 3);

    let duplicate = client
        .post(&format!("{CLOUDAPI}/applicationPortProfiles"), &profile)
        .await;
    assert_eq!(duplicate.minor(), "DUPLICATE_NAME");

    let gw = gateway_id(&client).await;
    let mut rule = dnat("dnat-web", "203.0.113.40", 80);
    rule["applicationPortProfile"] = json!({"name": "appPort_dnat-web", "id": id});
    client
        .write_ok(
            Method::POST,
            &format!("/edgeGateways/{gw}/nat/rules"),
            Some(&rule),
        )
        .await;
    let in_use = client
        .delete(&format!("{CLOUDAPI}/applicationPortProfiles/{id}"))
        .await;
    assert_eq!(in_use.status, StatusCode::BAD_REQUEST);

    let http_profile = system["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "HTTP")
        .unwrap();
    let read_only = client
        .delete(&format!(
            "{CLOUDAPI}/applicationPortProfiles/{}",
            http_profile["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(read_only.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn racing_profile_creates_in_flight_end_one_task_in_error() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| {
        k.task_durations_ms
            .insert("createApplicationPortProfile".into(), 300);
    });
    let client = Client::tenant(&sim).await;
    let session = client.ok("/sessions/current").await;
    let vdc = client.ok("/vdcs").await["values"][0]["id"].clone();
    let profile = json!({
        "name": "race", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "UDP", "destinationPorts": ["53"]}],
    });
    let path = "/applicationPortProfiles";
    let (a, b) = tokio::join!(
        client.write(Method::POST, path, Some(&profile)),
        client.write(Method::POST, path, Some(&profile))
    );
    let mut statuses = [a["status"].as_str().unwrap(), b["status"].as_str().unwrap()];
    statuses.sort();
    assert_eq!(statuses, ["error", "success"]);
    let failed = if a["status"] == "error" { &a } else { &b };
    assert_eq!(failed["error"]["minorErrorCode"], "DUPLICATE_NAME");
    assert_eq!(
        client
            .ok("/applicationPortProfiles?filter=name==race")
            .await["resultTotal"],
        1
    );
}

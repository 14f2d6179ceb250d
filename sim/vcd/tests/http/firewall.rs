//! The edge gateway firewall and IP sets, and the bodies VCD refuses:
//! unknown properties anywhere in a modelled write.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};

fn ip_set(gateway: &Value, name: &str, addresses: &[&str]) -> Value {
    json!({"name": name, "typeValue": "IP_SET", "ownerRef": gateway, "ipAddresses": addresses})
}

fn allow(name: &str, destination: &str) -> Value {
    json!({
        "name": name, "actionValue": "ALLOW", "direction": "IN", "ipProtocol": "IPV4",
        "destinationFirewallGroups": [{"id": destination}],
    })
}

async fn rules(client: &Client, gw: &str) -> Value {
    client
        .ok(&format!("/edgeGateways/{gw}/firewall/rules"))
        .await
}

#[tokio::test]
async fn user_rules_are_written_whole_and_one_by_one() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway["id"].as_str().unwrap().to_string();
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "web", &["203.0.113.5"])),
        )
        .await;
    let path = format!("/edgeGateways/{gw}/firewall/rules");
    let before = rules(&client, &gw).await;
    assert_eq!(before["systemRules"].as_array().unwrap().len(), 1);
    assert_eq!(before["defaultRules"][0]["actionValue"], "DROP");
    client
        .write_ok(
            Method::PUT,
            &path,
            Some(&json!({"userDefinedRules": [allow("a", &set), allow("b", &set)]})),
        )
        .await;
    let listed = rules(&client, &gw).await;
    let names: Vec<&str> = listed["userDefinedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let a = listed["userDefinedRules"][0].clone();
    let a_id = a["id"].as_str().unwrap().to_string();

    // One rule: a stale version is refused, the current one accepted.
    let mut changed = a.clone();
    changed["logging"] = json!(true);
    changed["version"] = json!({"version": 5});
    let stale = client
        .put(&format!("{CLOUDAPI}{path}/{a_id}"), &changed)
        .await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST, "{}", stale.body);
    assert!(stale.body["message"].as_str().unwrap().contains("version"));
    changed["version"] = a["version"].clone();
    client
        .write_ok(Method::PUT, &format!("{path}/{a_id}"), Some(&changed))
        .await;
    assert_eq!(
        client.ok(&format!("{path}/{a_id}")).await["version"]["version"],
        1
    );

    // The whole list again, with a rule added: ids and order are kept.
    let mut list = rules(&client, &gw).await["userDefinedRules"].clone();
    list.as_array_mut().unwrap().push(allow("c", &set));
    client
        .write_ok(Method::PUT, &path, Some(&json!({"userDefinedRules": list})))
        .await;
    let listed = rules(&client, &gw).await;
    assert_eq!(listed["userDefinedRules"][0]["id"], a_id.as_str());
    assert_eq!(listed["userDefinedRules"].as_array().unwrap().len(), 3);

    // A group a rule names cannot go; once the rules are gone it can.
    let in_use = client
        .delete(&format!("{CLOUDAPI}/firewallGroups/{set}"))
        .await;
    assert_eq!(in_use.status, StatusCode::BAD_REQUEST, "{}", in_use.body);
    for rule in listed["userDefinedRules"].as_array().unwrap() {
        let id = rule["id"].as_str().unwrap();
        client
            .write_ok(Method::DELETE, &format!("{path}/{id}"), None)
            .await;
    }
    client
        .write_ok(Method::DELETE, &format!("/firewallGroups/{set}"), None)
        .await;
}

#[tokio::test]
async fn bad_rules_and_sets_are_refused_with_the_reason() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway["id"].as_str().unwrap().to_string();
    let path = format!("{CLOUDAPI}/edgeGateways/{gw}/firewall/rules");
    let refused = |reply: crate::support::Reply, needle: &str| {
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        let message = reply.body["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(needle), "{needle}: {message}");
    };
    let unknown = json!({"userDefinedRules": [allow("a", "urn:vcloud:firewallGroup:00000000-0000-0000-0000-000000000000")]});
    refused(client.put(&path, &unknown).await, "does not exist");
    let too_many: Vec<Value> = (0..1001)
        .map(|i| json!({"name": format!("r{i}")}))
        .collect();
    refused(
        client
            .put(&path, &json!({"userDefinedRules": too_many}))
            .await,
        "at most 1000",
    );
    refused(
        client
            .put(
                &path,
                &json!({"userDefinedRules": [{"name": "a", "sourceIps": ["0.0.0.0/0"]}]}),
            )
            .await,
        "sourceIps",
    );
    let groups = format!("{CLOUDAPI}/firewallGroups");
    refused(
        client
            .post(&groups, &ip_set(&alb.gateway, "bad", &["10.0.0.0/33"]))
            .await,
        "10.0.0.0/33",
    );
    let mut extra = ip_set(&alb.gateway, "x", &["10.0.0.1"]);
    extra["ipRanges"] = json!([]);
    refused(client.post(&groups, &extra).await, "ipRanges");
    client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(
                &alb.gateway,
                "dup",
                &["10.0.0.1-10.0.0.9", "2001:db8::/64"],
            )),
        )
        .await;
    let duplicate = client
        .post(&groups, &ip_set(&alb.gateway, "dup", &["10.0.0.2"]))
        .await;
    assert_eq!(duplicate.minor(), "DUPLICATE_NAME");
}

#[tokio::test]
async fn load_balancer_writes_refuse_properties_vcd_does_not_define() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let mut pool = alb.pool("p", &["10.0.0.11"]);
    pool["healthMonitors"] =
        json!([{"type": "HTTP", "monitorPort": 32000, "httpRequest": "GET /healthz HTTP/1.0"}]);
    let reply = client
        .post(&format!("{CLOUDAPI}/loadBalancer/pools"), &pool)
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("monitorPort"),
        "{}",
        reply.body
    );

    let pool_id = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let mut vs = alb.virtual_service("v", &pool_id, "203.0.113.20", 80);
    vs["transparentModeEnabled"] = json!(true);
    let reply = client
        .post(&format!("{CLOUDAPI}/loadBalancer/virtualServices"), &vs)
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("Transparent mode"),
        "{}",
        reply.body
    );
    vs["transparentModeEnabled"] = json!(false);
    vs["servicePorts"][0]["portRange"] = json!("80");
    let reply = client
        .post(&format!("{CLOUDAPI}/loadBalancer/virtualServices"), &vs)
        .await;
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("portRange"),
        "{}",
        reply.body
    );
    vs["servicePorts"][0]
        .as_object_mut()
        .unwrap()
        .remove("portRange");
    let vs_id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;

    // What a client reads, read-only fields included, it may PUT back.
    let read = client
        .ok(&format!("/loadBalancer/virtualServices/{vs_id}"))
        .await;
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/virtualServices/{vs_id}"),
            Some(&read),
        )
        .await;
    let read = client.ok(&format!("/loadBalancer/pools/{pool_id}")).await;
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/pools/{pool_id}"),
            Some(&read),
        )
        .await;
}

/// Every firewall endpoint once, for the conformance test.
pub async fn exercise(client: &Client, alb: &Alb) {
    let gw = alb.gateway["id"].as_str().unwrap().to_string();
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "conformance", &["192.0.2.0/24"])),
        )
        .await;
    let mut group = client.ok(&format!("/firewallGroups/{set}")).await;
    group["ipAddresses"] = json!(["192.0.2.0/25"]);
    client
        .write_ok(Method::PUT, &format!("/firewallGroups/{set}"), Some(&group))
        .await;
    client.ok("/firewallGroups/summaries").await;
    let path = format!("/edgeGateways/{gw}/firewall/rules");
    client
        .write_ok(
            Method::PUT,
            &path,
            Some(&json!({"userDefinedRules": [allow("conformance", &set)]})),
        )
        .await;
    let listed = rules(client, &gw).await;
    let rule = listed["userDefinedRules"][0].clone();
    let id = rule["id"].as_str().unwrap().to_string();
    client.ok(&format!("{path}/{id}")).await;
    client
        .write_ok(Method::PUT, &format!("{path}/{id}"), Some(&rule))
        .await;
    client
        .write_ok(Method::DELETE, &format!("{path}/{id}"), None)
        .await;
    client
        .write_ok(Method::DELETE, &format!("/firewallGroups/{set}"), None)
        .await;
}

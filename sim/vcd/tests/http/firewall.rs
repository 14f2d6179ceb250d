//! The edge gateway firewall: system, user-defined and default rules, the
//! whole-list and per-rule writes, versions, references and the limits.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;
use vcdsim::world::firewall::{FirewallRule, FirewallRuleBody};

use crate::support::{Alb, CLOUDAPI, Client, Reply, start};

pub fn ip_set(gateway: &Value, name: &str, addresses: &[&str]) -> Value {
    json!({"name": name, "typeValue": "IP_SET", "ownerRef": gateway, "ipAddresses": addresses})
}

pub fn allow(name: &str, destination: &str) -> Value {
    json!({
        "name": name, "actionValue": "ALLOW", "direction": "IN", "ipProtocol": "IPV4",
        "destinationFirewallGroups": [{"id": destination}],
    })
}

/// A tenant on `edge1`, the rules path and one IP set of the gateway.
struct Setup {
    client: Client,
    alb: Alb,
    path: String,
    set: String,
}

async fn setup(sim: &vcdsim::Sim) -> Setup {
    let client = Client::tenant(sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "web", &["203.0.113.5"])),
        )
        .await;
    let path = format!("/edgeGateways/{}/firewall/rules", alb.gateway_id());
    Setup {
        client,
        alb,
        path,
        set,
    }
}

impl Setup {
    async fn rules(&self) -> Value {
        self.client.ok(&self.path).await
    }

    async fn user_rules(&self) -> Vec<Value> {
        self.rules().await["userDefinedRules"]
            .as_array()
            .unwrap()
            .clone()
    }

    async fn put_list(&self, rules: Value) {
        let body = json!({ "userDefinedRules": rules });
        self.client
            .write_ok(Method::PUT, &self.path, Some(&body))
            .await;
    }

    async fn put(&self, path: &str, body: &Value) -> Reply {
        self.client.put(&format!("{CLOUDAPI}{path}"), body).await
    }
}

fn names(rules: &[Value]) -> Vec<&str> {
    rules.iter().map(|r| r["name"].as_str().unwrap()).collect()
}

fn refused(reply: &Reply, needle: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{needle}: {message}");
}

#[tokio::test]
async fn the_list_put_keeps_order_and_ids_and_versions_only_what_changed() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    let before = s.rules().await;
    assert_eq!(before["systemRules"].as_array().unwrap().len(), 1);
    assert_eq!(before["userDefinedRules"], json!([]));
    assert_eq!(before["defaultRules"][0]["name"], "default_rule");
    assert_eq!(before["defaultRules"][0]["actionValue"], "DROP");

    s.put_list(json!([allow("a", &s.set), allow("b", &s.set)]))
        .await;
    let listed = s.user_rules().await;
    assert_eq!(names(&listed), ["a", "b"]);
    for rule in &listed {
        assert!(
            rule["id"]
                .as_str()
                .unwrap()
                .starts_with("urn:vcloud:firewallRule:")
        );
        assert_eq!(rule["version"]["version"], 0);
        assert_eq!(rule["enabled"], true, "VCD's defaults are filled in");
    }

    // Reordered, b changed, c added with an id no rule has, a left as read.
    let (a, mut b) = (listed[0].clone(), listed[1].clone());
    b["logging"] = json!(true);
    let mut c = allow("c", &s.set);
    c["id"] = json!("urn:vcloud:firewallRule:00000000-0000-0000-0000-000000000000");
    s.put_list(json!([b, c, a])).await;
    let after = s.user_rules().await;
    assert_eq!(names(&after), ["b", "c", "a"]);
    assert_eq!(after[0]["id"], listed[1]["id"]);
    assert_eq!(after[0]["version"]["version"], 1, "b changed");
    assert_eq!(after[2]["id"], listed[0]["id"]);
    assert_eq!(after[2]["version"]["version"], 0, "a did not change");
    assert_ne!(after[1]["id"], c["id"], "an unknown id gets a new one");

    // Rules left out are deleted.
    s.put_list(json!([after[2].clone()])).await;
    assert_eq!(names(&s.user_rules().await), ["a"]);
    s.put_list(json!([])).await;
    assert_eq!(s.user_rules().await, Vec::<Value>::new());

    // A rule someone else wrote, put back as read, stays byte for byte.
    let foreign: FirewallRuleBody = serde_json::from_value(json!({
        "id": "urn:vcloud:firewallRule:0d2a0c3e-1111-4222-8333-944445555666",
        "name": "ssh", "actionValue": "ALLOW", "comments": "theirs", "version": {"version": 7},
    }))
    .unwrap();
    let gateway_id = s.alb.gateway_id().to_string();
    sim.with_world(|w| {
        w.firewall_rules.push(FirewallRule {
            gateway_id,
            body: foreign.clone(),
        })
    });
    let mut list = s.user_rules().await;
    list.push(allow("mine", &s.set));
    s.put_list(json!(list)).await;
    let kept = sim.with_world(|w| w.firewall_rules[0].body.clone());
    assert_eq!(kept, foreign);
}

#[tokio::test]
async fn one_rule_is_read_updated_and_deleted_by_id() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    s.put_list(json!([allow("a", &s.set)])).await;
    let rule = s.user_rules().await[0].clone();
    let one = format!("{}/{}", s.path, rule["id"].as_str().unwrap());
    assert_eq!(s.client.ok(&one).await, rule);

    let mut changed = rule.clone();
    changed["actionValue"] = json!("REJECT");
    changed["version"] = json!({"version": 7});
    refused(
        &s.put(&one, &changed).await,
        "version 7 is not the current version 0",
    );
    changed.as_object_mut().unwrap().remove("version");
    refused(&s.put(&one, &changed).await, "version");
    changed["version"] = rule["version"].clone();
    s.client.write_ok(Method::PUT, &one, Some(&changed)).await;
    let read = s.client.ok(&one).await;
    assert_eq!(read["actionValue"], "REJECT");
    assert_eq!(read["version"]["version"], 1);

    // The list PUT checks versions the same way.
    refused(
        &s.client
            .put(
                &format!("{CLOUDAPI}{}", s.path),
                &json!({"userDefinedRules": [rule]}),
            )
            .await,
        "version 0 is not the current version 1",
    );

    let fixed = s.rules().await;
    let system = fixed["systemRules"][0].clone();
    let system_path = format!("{}/{}", s.path, system["id"].as_str().unwrap());
    assert_eq!(s.client.ok(&system_path).await, system);
    refused(&s.put(&system_path, &system).await, "read-only");
    let default_path = format!(
        "{}/{}",
        s.path,
        fixed["defaultRules"][0]["id"].as_str().unwrap()
    );
    for path in [&system_path, &default_path] {
        refused(
            &s.client.delete(&format!("{CLOUDAPI}{path}")).await,
            "cannot be deleted",
        );
    }

    s.client.write_ok(Method::DELETE, &one, None).await;
    let gone = s.client.get(&format!("{CLOUDAPI}{one}")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
}

#[tokio::test]
async fn only_the_default_rules_action_changes() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    let mut list = s.rules().await;
    list["defaultRules"][0]["actionValue"] = json!("ALLOW");
    list["defaultRules"][0]["action"] = json!("ALLOW");
    s.client.write_ok(Method::PUT, &s.path, Some(&list)).await;
    let default = s.rules().await["defaultRules"][0].clone();
    assert_eq!(default["actionValue"], "ALLOW");
    assert_eq!(default["version"]["version"], 1);

    let mut renamed = json!({"defaultRules": [default.clone()]});
    renamed["defaultRules"][0]["name"] = json!("mine");
    refused(
        &s.put(&s.path, &renamed).await,
        "Only the action of the default firewall rule can change, not name",
    );
    let mut one = default.clone();
    one["actionValue"] = json!("REJECT");
    let path = format!("{}/{}", s.path, default["id"].as_str().unwrap());
    s.client.write_ok(Method::PUT, &path, Some(&one)).await;
    assert_eq!(s.client.ok(&path).await["actionValue"], "REJECT");
    // A stale default rule is refused like any other.
    refused(
        &s.put(&path, &default).await,
        "version 1 is not the current version 2",
    );
}

#[tokio::test]
async fn references_limits_and_fields_are_checked() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    let path = format!("{CLOUDAPI}{}", s.path);
    let nobody = "urn:vcloud:firewallGroup:00000000-0000-0000-0000-000000000000";
    let cases = [
        (allow("a", nobody), nobody),
        (
            json!({"name": "a", "actionValue": "ALLOW", "applicationPortProfiles": [{"id": "urn:vcloud:applicationPortProfile:nope"}]}),
            "urn:vcloud:applicationPortProfile:nope",
        ),
        (
            json!({"name": "a", "actionValue": "ALLOW", "networkContextProfiles": [{"id": "ctx"}]}),
            "Network context profile ctx",
        ),
        (json!({"name": "a"}), "needs actionValue"),
        (
            json!({"name": "a", "actionValue": "PERMIT"}),
            "Invalid actionValue 'PERMIT'",
        ),
        (
            json!({"name": "a", "action": "REJECT"}),
            "$.userDefinedRules[0].action: \"REJECT\" is not one of",
        ),
        (
            json!({"name": "a", "actionValue": "DROP", "direction": "UP"}),
            "$.userDefinedRules[0].direction: \"UP\" is not one of",
        ),
    ];
    for (rule, needle) in cases {
        refused(
            &s.client
                .put(&path, &json!({"userDefinedRules": [rule]}))
                .await,
            needle,
        );
    }
    assert!(s.user_rules().await.is_empty());

    let full: Vec<Value> = (0..1000)
        .map(|i| json!({"name": format!("r{i}"), "actionValue": "DROP"}))
        .collect();
    s.put_list(json!(full)).await;
    assert_eq!(s.user_rules().await.len(), 1000);
    let mut over = s.user_rules().await;
    over.push(json!({"name": "r1000", "actionValue": "DROP"}));
    refused(
        &s.client
            .put(&path, &json!({"userDefinedRules": over}))
            .await,
        "$.userDefinedRules: 1001 items, maxItems 1000",
    );
    let first = s.user_rules().await[0].clone();
    refused(
        &s.client
            .put(&path, &json!({"userDefinedRules": [first.clone(), first]}))
            .await,
        "appears twice",
    );
}

#[tokio::test]
async fn a_firewall_write_in_flight_makes_the_gateway_busy() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    sim.set_knobs(|k| k.task_duration_ms = 600);
    let path = format!("{CLOUDAPI}{}", s.path);
    let first = s
        .client
        .put(&path, &json!({"userDefinedRules": [allow("a", &s.set)]}))
        .await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.body);
    let location = first.header("location").unwrap().to_string();
    assert!(location.starts_with(&format!("{}/api/task/", sim.base_url())));
    assert_eq!(
        s.client
            .ok(&format!("/edgeGateways/{}", s.alb.gateway_id()))
            .await["status"],
        "CONFIGURING"
    );
    let gateway_uuid = s.alb.gateway_id().rsplit(':').next().unwrap();
    for (method, url, body) in [
        (Method::PUT, path.clone(), json!({"userDefinedRules": []})),
        (
            Method::POST,
            format!("{CLOUDAPI}/firewallGroups"),
            ip_set(&s.alb.gateway, "other", &["10.0.0.1"]),
        ),
        (
            Method::POST,
            format!("{CLOUDAPI}/loadBalancer/pools"),
            s.alb.pool("p", &["10.0.0.11"]),
        ),
    ] {
        let busy = s.client.call(method, &url, Some(&body)).await;
        assert_eq!(busy.status, StatusCode::BAD_REQUEST, "{}", busy.body);
        assert_eq!(busy.minor(), "BUSY_ENTITY");
        let message = busy.body["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                "com.vmware.vcloud.entity.gateway:{gateway_uuid} is busy completing an operation"
            )),
            "{message}"
        );
    }
    let task = s.client.wait_task(&location).await;
    assert_eq!(task["status"], "success", "{task}");
    assert_eq!(task["operationName"], "updateEdgeGatewayFirewallRules");
    assert_eq!(names(&s.user_rules().await), ["a"]);
}

#[tokio::test]
async fn faults_and_task_knobs_apply_to_firewall_writes() {
    let sim = start(Scenario::default_scenario()).await;
    let s = setup(&sim).await;
    sim.add_fault(
        vcdsim::FaultRule::new(
            Some("PUT"),
            "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules",
            vcdsim::FaultAction::FailTask {
                minor_error_code: "INTERNAL_SERVER_ERROR".into(),
                message: "NSX-T manager unreachable".into(),
            },
        )
        .times(1),
    );
    let body = json!({"userDefinedRules": [allow("a", &s.set)]});
    let task = s.client.write(Method::PUT, &s.path, Some(&body)).await;
    assert_eq!(task["status"], "error", "{task}");
    assert!(
        s.user_rules().await.is_empty(),
        "a failed task changes nothing"
    );

    sim.set_knobs(|k| {
        k.task_durations_ms
            .insert("updateEdgeGatewayFirewallRules".into(), 300);
    });
    let reply = s.client.put(&format!("{CLOUDAPI}{}", s.path), &body).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let location = reply.header("location").unwrap().to_string();
    assert_eq!(s.client.get(&location).await.body["status"], "queued");
    assert!(
        s.user_rules().await.is_empty(),
        "applied when the task ends"
    );
    assert_eq!(s.client.wait_task(&location).await["status"], "success");
    assert_eq!(names(&s.user_rules().await), ["a"]);
}

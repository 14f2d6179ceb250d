//! Health monitors (API 39.0): created, read, updated and deleted through
//! tasks, strict about every field, listed per gateway with their pool
//! counts, owned by an org; absent before 39.0.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, find_named, start};
use crate::versions::refused;

pub const MONITORS: &str = "/loadBalancer/healthMonitors";

/// The tenant of the default world at API `version`.
pub async fn tenant_at(sim: &vcdsim::Sim, version: &'static str) -> Client {
    let mut client = Client::tenant(sim).await;
    client.api_version = version;
    client
}

/// An HTTP monitor probing `/healthz` on `port`, as a CCM may create one.
pub fn http_monitor(name: &str, port: u16) -> Value {
    json!({
        "name": name, "description": "kube-proxy health", "type": "HTTP",
        "successfulChecksCount": 2, "failedChecksCount": 3, "sendInterval": 10, "receiveTimeout": 4,
        "httpSettings": {
            "port": port, "requestHeader": "GET /healthz HTTP/1.1\r\nHost: node\r\nUser-Agent: vcd-ccm",
            "useExactRequest": false, "expectedResponseCodes": ["HTTP_2XX"],
            "authSettings": {"type": "BASIC", "username": "probe", "password": "secret"},
        },
    })
}

/// Creates a monitor; its id, which the task's owner names.
pub async fn create_monitor(client: &Client, body: &Value) -> String {
    let task = client.write(Method::POST, MONITORS, Some(body)).await;
    assert_eq!(task["status"], "success", "{task}");
    let id = task["owner"]["id"].as_str().unwrap().to_string();
    assert!(
        id.starts_with("urn:vcloud:loadBalancerHealthMonitor:"),
        "{id}"
    );
    let href = task["owner"]["href"].as_str().unwrap();
    assert!(
        href.ends_with(&format!("{CLOUDAPI}{MONITORS}/{id}")),
        "{href}"
    );
    id
}

fn not_served(reply: &crate::support::Reply) {
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    assert_eq!(reply.minor(), "RESOURCE_NOT_FOUND");
}

#[tokio::test]
async fn a_monitor_is_created_read_updated_and_deleted_from_39_0() {
    let sim = start(Scenario::default_scenario()).await;
    let client = tenant_at(&sim, "39.1").await;
    let id = create_monitor(&client, &http_monitor("node-health", 10256)).await;
    let one = format!("{MONITORS}/{id}");
    let read = client.ok(&one).await;
    assert_eq!(read["id"], id.as_str());
    assert_eq!(read["systemDefined"], false);
    assert_eq!(read["sendInterval"], 10);
    assert_eq!(read["httpSettings"]["port"], 10256);
    assert_eq!(read["httpSettings"]["authSettings"]["username"], "probe");
    assert!(
        read["httpSettings"]["authSettings"]
            .get("password")
            .is_none(),
        "the password is never answered: {read}"
    );

    // What a GET answers lacks the password, which BASIC needs again.
    let url = format!("{CLOUDAPI}{one}");
    refused(
        &client.put(&url, &read).await,
        &[
            "$.httpSettings.authSettings",
            "needs a username and a password",
        ],
    );
    let mut update = read.clone();
    update["sendInterval"] = json!(20);
    update["httpSettings"]["authSettings"]["password"] = json!("rotated");
    client.write_ok(Method::PUT, &one, Some(&update)).await;
    assert_eq!(client.ok(&one).await["sendInterval"], 20);

    let mut moved = update.clone();
    moved["id"] = json!("urn:vcloud:loadBalancerHealthMonitor:0000");
    refused(
        &client.put(&url, &moved).await,
        &["$.id", "not the id in the path"],
    );
    let tcp = json!({"name": "node-health", "type": "TCP", "successfulChecksCount": 2,
                     "failedChecksCount": 2, "sendInterval": 10, "receiveTimeout": 4});
    refused(&client.put(&url, &tcp).await, &["$.type", "keeps its type"]);

    // SYSTEM monitors read, but neither change nor go.
    let gw = Alb::discover(&client, "edge1")
        .await
        .gateway_id()
        .to_string();
    let summaries = client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/healthMonitorSummaries"
        ))
        .await;
    let system = find_named(&summaries, "System-HTTP")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let system_url = format!("{CLOUDAPI}{MONITORS}/{system}");
    let read = client.ok(&format!("{MONITORS}/{system}")).await;
    assert_eq!(
        (read["type"].as_str(), read["systemDefined"].as_bool()),
        (Some("HTTP"), Some(true))
    );
    refused(
        &client.put(&system_url, &update).await,
        &["System-HTTP", "SYSTEM"],
    );
    refused(
        &client.delete(&system_url).await,
        &["System-HTTP", "read-only"],
    );

    client.write_ok(Method::DELETE, &one, None).await;
    assert_eq!(client.get(&url).await.status, StatusCode::FORBIDDEN);
    assert_eq!(sim.count(&format!("DELETE {CLOUDAPI}{MONITORS}/{{id}}")), 2);
}

#[tokio::test]
async fn before_39_0_the_monitor_paths_do_not_exist() {
    let sim = start(Scenario::default_scenario()).await;
    let v39 = tenant_at(&sim, "39.0").await;
    let id = create_monitor(&v39, &http_monitor("node-health", 10256)).await;
    let v38 = tenant_at(&sim, "38.1").await;
    let gw = Alb::discover(&v38, "edge1").await.gateway_id().to_string();
    let body = http_monitor("other", 10256);
    not_served(&v38.post(&format!("{CLOUDAPI}{MONITORS}"), &body).await);
    not_served(&v38.get(&format!("{CLOUDAPI}{MONITORS}/{id}")).await);
    not_served(&v38.put(&format!("{CLOUDAPI}{MONITORS}/{id}"), &body).await);
    not_served(&v38.delete(&format!("{CLOUDAPI}{MONITORS}/{id}")).await);
    not_served(
        &v38.get(&format!(
            "{CLOUDAPI}/edgeGateways/{gw}/loadBalancer/healthMonitorSummaries"
        ))
        .await,
    );
    let filter = format!("filter=healthMonitorRef.id=={id}");
    not_served(
        &v38.get(&format!("{CLOUDAPI}{MONITORS}/assignments?{filter}"))
            .await,
    );
    not_served(
        &v38.post(&format!("{CLOUDAPI}{MONITORS}/assignments"), &json!({}))
            .await,
    );
}

#[tokio::test]
async fn summaries_list_system_and_org_monitors_with_the_gateway_s_pools() {
    let sim = start(Scenario::default_scenario()).await;
    let client = tenant_at(&sim, "39.1").await;
    let alb = Alb::discover(&client, "edge1").await;
    let monitor = create_monitor(&client, &http_monitor("web-check", 8080)).await;
    let tcp_pool = alb.create_pool(&client, "tcp").await;
    let mut http_pool = alb.pool("http", &["10.0.0.12"]);
    http_pool["healthMonitors"] = json!([{"type": "HTTP"}]);
    client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&http_pool))
        .await;
    let assignment =
        json!({"healthMonitorRef": {"id": monitor}, "loadBalancerPoolRef": {"id": tcp_pool}});
    client
        .write_ok(
            Method::POST,
            &format!("{MONITORS}/assignments"),
            Some(&assignment),
        )
        .await;

    let list = format!(
        "/edgeGateways/{}/loadBalancer/healthMonitorSummaries",
        alb.gateway_id()
    );
    let page = client.ok(&list).await;
    assert_eq!(page["resultTotal"], 6, "{page}");
    let names: Vec<&str> = page["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "System-HTTP",
            "System-HTTPS",
            "System-Ping",
            "System-TCP",
            "System-UDP",
            "web-check"
        ]
    );
    let count = |name: &str| find_named(&page, name)["poolCount"].as_u64().unwrap();
    assert_eq!(
        [
            count("System-TCP"),
            count("System-HTTP"),
            count("System-UDP"),
            count("web-check")
        ],
        [1, 1, 0, 1]
    );
    let tenant = find_named(&page, "web-check");
    assert_eq!(
        *tenant,
        json!({"id": monitor, "name": "web-check", "description": "kube-proxy health",
                               "type": "HTTP", "poolCount": 1, "scope": "TENANT"})
    );
    assert_eq!(find_named(&page, "System-Ping")["scope"], "SYSTEM");
    assert_eq!(
        client.ok(&format!("{list}?filter=scope==TENANT")).await["resultTotal"],
        1
    );
    assert_eq!(
        client.ok(&format!("{list}?filter=type==HTTP")).await["resultTotal"],
        2
    );
    assert_eq!(
        client
            .ok(&format!("{list}?filter=name==System-*&pageSize=2"))
            .await["pageCount"],
        3
    );
}

#[tokio::test]
async fn a_tenant_monitor_belongs_to_the_org_that_created_it() {
    let sim = start(Scenario::two_orgs()).await;
    let mut alice = Client::login(&sim, "alice", "org1", "alice-password").await;
    let mut bob = Client::login(&sim, "bob", "org2", "bob-password").await;
    (alice.api_version, bob.api_version) = ("39.1", "39.1");
    let id = create_monitor(&alice, &http_monitor("health", 80)).await;
    let reply = bob.get(&format!("{CLOUDAPI}{MONITORS}/{id}")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    assert_eq!(reply.minor(), "ACCESS_TO_RESOURCE_IS_FORBIDDEN");
    assert_eq!(
        bob.delete(&format!("{CLOUDAPI}{MONITORS}/{id}"))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    // Names are unique per org: bob may take alice's.
    create_monitor(&bob, &http_monitor("health", 80)).await;
    let edge2 = Alb::discover(&bob, "edge2").await.gateway_id().to_string();
    let page = bob
        .ok(&format!(
            "/edgeGateways/{edge2}/loadBalancer/healthMonitorSummaries?filter=scope==TENANT"
        ))
        .await;
    assert_eq!(page["resultTotal"], 1);
    assert_ne!(page["values"][0]["id"], id.as_str());
    let alice_edge = Alb::discover(&alice, "edge1")
        .await
        .gateway_id()
        .to_string();
    assert_eq!(
        alice
            .get(&format!(
                "{CLOUDAPI}/edgeGateways/{edge2}/loadBalancer/healthMonitorSummaries"
            ))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        alice
            .ok(&format!(
                "/edgeGateways/{alice_edge}/loadBalancer/healthMonitorSummaries"
            ))
            .await["resultTotal"],
        6
    );
}

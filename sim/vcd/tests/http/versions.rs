//! API versions: what `/api/versions` advertises (`apiVersions:`), and
//! virtual service bodies checked and answered as each version defines them.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, Reply, start};

fn listed(reply: &Reply) -> Vec<String> {
    reply.body["versionInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap().to_string())
        .collect()
}

/// The status of `GET /orgs` at `version`.
async fn orgs_at(client: &mut Client, version: &'static str) -> StatusCode {
    client.api_version = version;
    client.get(&format!("{CLOUDAPI}/orgs")).await.status
}

pub fn refused(reply: &Reply, needles: &[&str]) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or_default();
    for needle in needles {
        assert!(message.contains(needle), "{needle}: {message}");
    }
}

#[tokio::test]
async fn the_default_world_speaks_37_2_to_39_1_and_a_scenario_may_list_others() {
    let sim = start(Scenario::default_scenario()).await;
    let anonymous = Client::anonymous(&sim);
    assert_eq!(
        listed(&anonymous.get("/api/versions").await),
        ["37.2", "38.0", "38.1", "39.0", "39.1"]
    );
    let mut client = Client::tenant(&sim).await;
    for version in ["37.2", "38.0", "38.1", "39.0", "39.1"] {
        assert_eq!(orgs_at(&mut client, version).await, StatusCode::OK);
    }
    assert_eq!(
        orgs_at(&mut client, "36.0").await,
        StatusCode::NOT_ACCEPTABLE
    );

    let yaml = format!(
        "apiVersions: [\"36.0\", \"37.2\", \"39.1\"]\n{}",
        vcdsim::scenario::DEFAULT_SCENARIO
    );
    let sim = start(Scenario::from_yaml(&yaml).unwrap()).await;
    assert_eq!(
        listed(&Client::anonymous(&sim).get("/api/versions").await),
        ["36.0", "37.2", "39.1"]
    );
    let mut client = Client::tenant(&sim).await;
    assert_eq!(orgs_at(&mut client, "36.0").await, StatusCode::OK);
    assert_eq!(
        orgs_at(&mut client, "38.0").await,
        StatusCode::NOT_ACCEPTABLE
    );
}

#[tokio::test]
async fn the_site_key_no_longer_lists_versions() {
    let error = Scenario::from_yaml("site: {versions: [\"37.2\"]}").unwrap_err();
    assert!(error.to_string().contains("versions"), "{error}");
}

/// A client of `version` on the default world's tenant.
async fn at(client: &Client, version: &'static str) -> Client {
    let mut client = client.clone();
    client.api_version = version;
    client
}

/// A virtual service body on `edge1`, on a new pool.
async fn virtual_service(client: &Client, alb: &Alb, name: &str, port: u16) -> Value {
    let pool = alb.create_pool(client, name).await;
    alb.virtual_service(name, &pool, "203.0.113.20", port)
}

#[tokio::test]
async fn non_critical_logging_exists_from_38_0() {
    let sim = start(Scenario::default_scenario()).await;
    let v37 = Client::tenant(&sim).await;
    let v38 = at(&v37, "38.0").await;
    let alb = Alb::discover(&v37, "edge1").await;
    let url = format!("{CLOUDAPI}/loadBalancer/virtualServices");

    let mut body = virtual_service(&v37, &alb, "logged", 80).await;
    body["nonCriticalLoggingEnabled"] = json!(true);
    refused(
        &v37.post(&url, &body).await,
        &["Unrecognized field \"nonCriticalLoggingEnabled\"", "37.2"],
    );
    let id = v38
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&body))
        .await;
    let one = format!("/loadBalancer/virtualServices/{id}");
    let read = v38.ok(&one).await;
    assert_eq!(read["nonCriticalLoggingEnabled"], true);
    assert_eq!(read["status"], "REALIZED", "a string before 39.0");
    let old = v37.ok(&one).await;
    assert!(old.get("nonCriticalLoggingEnabled").is_none(), "{old}");

    // A 37.2 PUT leaves it as stored; a 38.0 PUT without it resets it.
    v37.write_ok(Method::PUT, &one, Some(&old)).await;
    assert_eq!(v38.ok(&one).await["nonCriticalLoggingEnabled"], true);
    v38.write_ok(Method::PUT, &one, Some(&old)).await;
    assert_eq!(v38.ok(&one).await["nonCriticalLoggingEnabled"], false);

    // A service a 37.2 client creates reads as false from 38.0.
    let plain = virtual_service(&v37, &alb, "plain", 81).await;
    let plain = v37
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&plain))
        .await;
    let read = v38
        .ok(&format!("/loadBalancer/virtualServices/{plain}"))
        .await;
    assert_eq!(read["nonCriticalLoggingEnabled"], false);
}

#[tokio::test]
async fn from_39_0_status_is_an_object_only_39_x_may_send_back() {
    let sim = start(Scenario::default_scenario()).await;
    let v37 = Client::tenant(&sim).await;
    let (v38, v39) = (at(&v37, "38.1").await, at(&v37, "39.1").await);
    let alb = Alb::discover(&v37, "edge1").await;
    let body = virtual_service(&v37, &alb, "web", 80).await;
    let id = v39
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&body))
        .await;
    let one = format!("/loadBalancer/virtualServices/{id}");
    let read = v39.ok(&one).await;
    assert_eq!(read["status"], json!({"realizationStatus": "REALIZED"}));
    assert_eq!(read["nonCriticalLoggingEnabled"], false);
    let gw = alb.gateway_id();
    let summaries = v39
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries"
        ))
        .await;
    assert_eq!(
        summaries["values"][0]["status"]["realizationStatus"],
        "REALIZED"
    );

    // 39.x takes its answer back; 38.x and 37.2 refuse the object.
    v39.write_ok(Method::PUT, &one, Some(&read)).await;
    let mut object = v38.ok(&one).await;
    object["status"] = read["status"].clone();
    refused(
        &v38.put(&format!("{CLOUDAPI}{one}"), &object).await,
        &["status", "38.1"],
    );
    let mut old = v37.ok(&one).await;
    old["status"] = read["status"].clone();
    refused(
        &v37.put(&format!("{CLOUDAPI}{one}"), &old).await,
        &["status", "37.2"],
    );
}

#[tokio::test]
async fn a_37_2_answer_is_unchanged() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let body = virtual_service(&client, &alb, "web", 80).await;
    let id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&body))
        .await;
    let read = client
        .ok(&format!("/loadBalancer/virtualServices/{id}"))
        .await;
    let keys: Vec<&str> = read
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "name",
            "description",
            "enabled",
            "virtualIpAddress",
            "ipv6VirtualIpAddress",
            "loadBalancerPoolRef",
            "gatewayRef",
            "serviceEngineGroupRef",
            "certificateRef",
            "servicePorts",
            "applicationProfile",
            "transparentModeEnabled",
            "status",
            "healthStatus",
            "healthMessage",
            "detailedHealthMessage"
        ]
    );
    assert_eq!(read["status"], "REALIZED");
}

use reqwest::StatusCode;
use vcdsim::Scenario;

use crate::support::{CLOUDAPI, Client, start};

#[tokio::test]
async fn the_request_log_and_counters_are_exact() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let id = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    sim.reset_log();

    const N: usize = 7;
    for _ in 0..N {
        client.get(&format!("{CLOUDAPI}/edgeGateways/{id}")).await;
    }
    client
        .get(&format!(
            "{CLOUDAPI}/edgeGateways/urn:vcloud:gateway:unknown"
        ))
        .await;
    client.get("/nowhere").await;
    // Admin calls are neither logged nor counted.
    crate::support::http()
        .get(format!("{}/_sim/state", sim.base_url()))
        .send()
        .await
        .unwrap();

    assert_eq!(
        sim.count("GET /cloudapi/1.0.0/edgeGateways/{id}"),
        N as u64 + 1
    );
    assert_eq!(sim.count("GET /nowhere"), 1);
    assert_eq!(sim.counters().values().sum::<u64>(), N as u64 + 2);
    let log = sim.requests();
    assert_eq!(log.len(), N + 2);
    assert!(
        log[..N]
            .iter()
            .all(|e| e.status == 200 && e.path == format!("/cloudapi/1.0.0/edgeGateways/{id}"))
    );
    assert_eq!(log[0].response_body["id"], id.as_str());
    assert_eq!(log[N].status, 403);
    assert_eq!(log[N + 1].status, 404);

    let jsonl = sim.requests_jsonl();
    assert_eq!(jsonl.lines().count(), N + 2);
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    for key in [
        "time",
        "method",
        "path",
        "status",
        "requestBody",
        "responseBody",
        "template",
    ] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }

    let http = crate::support::http();
    let over_http = http
        .get(format!("{}/_sim/requests", sim.base_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(over_http.lines().count(), N + 2);
    let counters: serde_json::Value = http
        .get(format!("{}/_sim/counters", sim.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        counters["GET /cloudapi/1.0.0/edgeGateways/{id}"],
        N as u64 + 1
    );
    let reset = http
        .post(format!("{}/_sim/counters/reset", sim.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    assert!(sim.counters().is_empty() && sim.requests().is_empty());
}

#[tokio::test]
async fn request_bodies_are_logged_and_the_file_sink_gets_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requests.jsonl");
    let options = vcdsim::Options {
        request_log: Some(file.clone()),
        ..Default::default()
    };
    let sim = vcdsim::Sim::start_with(Scenario::default_scenario(), options)
        .await
        .unwrap();
    let client = Client::tenant(&sim).await;
    let body = serde_json::json!({"alias": "logged", "certificate": "PEM"});
    client
        .post(&format!("{CLOUDAPI}/ssl/certificateLibrary"), &body)
        .await;
    let last = sim.requests().pop().unwrap();
    assert_eq!(last.method, "POST");
    assert_eq!(last.request_body["alias"], "logged");
    assert_eq!(last.status, 201);
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.lines().count(), sim.requests().len());
}

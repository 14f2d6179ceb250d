use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use vcdsim::{FaultAction, FaultRule, Scenario};

use crate::support::{Alb, CLOUDAPI, Client, start};

const GATEWAY: &str = "/cloudapi/1.0.0/edgeGateways/{id}";

#[tokio::test]
async fn scripted_error_fires_n_times_after_skipping() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let id = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let error = FaultAction::Error {
        status: 503,
        minor_error_code: "SERVICE_UNAVAILABLE".into(),
        message: "try later".into(),
    };
    sim.add_fault(FaultRule::new(Some("GET"), GATEWAY, error).skip(1).times(2));
    let path = format!("{CLOUDAPI}/edgeGateways/{id}");
    let statuses: Vec<u16> = futures_statuses(&client, &path, 4).await;
    assert_eq!(statuses, [200, 503, 503, 200]);
    let rule = &sim.faults()[0];
    assert_eq!((rule.matched, rule.fired), (4, 2));
    let reply = {
        sim.add_fault(
            FaultRule::new(
                None,
                GATEWAY,
                FaultAction::Error {
                    status: 500,
                    minor_error_code: "X".into(),
                    message: String::new(),
                },
            )
            .times(1),
        );
        client.get(&path).await
    };
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(reply.minor(), "X");
}

async fn futures_statuses(client: &Client, path: &str, n: usize) -> Vec<u16> {
    let mut statuses = Vec::new();
    for _ in 0..n {
        statuses.push(client.get(path).await.status.as_u16());
    }
    statuses
}

#[tokio::test]
async fn probability_zero_never_fires_and_one_always_does() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let error = FaultAction::Error {
        status: 500,
        minor_error_code: "INTERNAL_SERVER_ERROR".into(),
        message: String::new(),
    };
    sim.add_fault(FaultRule::new(None, "/cloudapi/1.0.0/orgs", error.clone()).probability(0.0));
    assert_eq!(
        futures_statuses(&client, &format!("{CLOUDAPI}/orgs"), 5).await,
        [200; 5]
    );
    sim.clear_faults();
    sim.add_fault(FaultRule::new(None, "*", error).probability(1.0));
    assert_eq!(
        futures_statuses(&client, &format!("{CLOUDAPI}/vdcs"), 3).await,
        [500; 3]
    );
}

#[tokio::test]
async fn delay_latency_and_reset() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    sim.add_fault(
        FaultRule::new(
            Some("GET"),
            "/cloudapi/1.0.0/orgs",
            FaultAction::Delay { ms: 300 },
        )
        .times(1),
    );
    let started = Instant::now();
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/orgs")).await.status,
        StatusCode::OK
    );
    assert!(started.elapsed() >= Duration::from_millis(300));

    sim.set_knobs(|k| {
        k.latency_ms = 150;
        k.latency_jitter_ms = 50;
    });
    let started = Instant::now();
    client.get(&format!("{CLOUDAPI}/vdcs")).await;
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(150) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
    sim.set_knobs(|k| k.latency_ms = 0);

    sim.add_fault(FaultRule::new(None, "/cloudapi/1.0.0/vdcs", FaultAction::Reset).times(1));
    let response = client
        .http
        .get(format!("{}{CLOUDAPI}/vdcs", sim.base_url()))
        .bearer_auth(client.token.clone().unwrap())
        .send()
        .await;
    let broken = match response {
        Err(_) => true,
        Ok(response) => response.bytes().await.is_err(),
    };
    assert!(broken, "the connection must break");
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/vdcs")).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn token_revocation_and_failed_tasks_over_the_admin_api() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let http = crate::support::http();
    let faults = format!("{}/_sim/faults", sim.base_url());
    let rule = json!({"method": "GET", "path": "/cloudapi/1.0.0/vdcs", "action": {"kind": "revokeToken"}, "times": 1});
    assert_eq!(
        http.post(&faults)
            .json(&rule)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::CREATED
    );
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/vdcs")).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/orgs")).await.status,
        StatusCode::UNAUTHORIZED
    );

    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let rule = json!({
        "method": "POST", "path": "/cloudapi/1.0.0/loadBalancer/pools",
        "action": {"kind": "failTask", "minorErrorCode": "BAD_REQUEST", "message": "NSX said no"}, "times": 1,
    });
    http.post(&faults).json(&rule).send().await.unwrap();
    let listed: serde_json::Value = http
        .get(&faults)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let task = client
        .write(
            reqwest::Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    assert_eq!(task["status"], "error");
    assert_eq!(task["error"]["minorErrorCode"], "BAD_REQUEST");
    assert_eq!(task["error"]["message"], "NSX said no");
    let gw = alb.gateway_id();
    assert_eq!(
        client
            .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
            .await["resultTotal"],
        0
    );
    // The gateway is free again after the failed task.
    client
        .write_ok(
            reqwest::Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;

    assert_eq!(
        http.delete(&faults).send().await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    let revoke = json!({"token": client.token.clone().unwrap()});
    let url = format!("{}/_sim/tokens/revoke", sim.base_url());
    assert_eq!(
        http.post(url).json(&revoke).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/orgs")).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn knobs_over_the_admin_api() {
    let sim = start(Scenario::default_scenario()).await;
    let http = crate::support::http();
    let url = format!("{}/_sim/knobs", sim.base_url());
    let mut knobs: serde_json::Value = http.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(knobs["busyMode"], "reject");
    knobs["taskDurationMs"] = json!(250);
    knobs["busyMode"] = json!("queue");
    assert_eq!(
        http.put(&url).json(&knobs).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(sim.knobs().task_duration_ms, 250);
    assert_eq!(sim.knobs().busy_mode, vcdsim::BusyMode::Queue);
}

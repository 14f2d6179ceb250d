use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::world::task::TaskStatus;
use vcdsim::{FaultAction, FaultRule, Scenario, Sim};

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
    // Taking the rules ends them and hands back their counts.
    let taken = sim.take_faults();
    assert_eq!((taken.len(), taken[0].fired), (1, 2));
    assert!(sim.faults().is_empty());
    assert_eq!(client.get(&path).await.status, StatusCode::OK);
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
    install_fault(&sim, json!({"method": "GET", "path": "/cloudapi/1.0.0/vdcs", "action": {"kind": "revokeToken"}, "times": 1})).await;
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

const CERTIFICATES: &str = "/cloudapi/1.0.0/ssl/certificateLibrary";
const CERTIFICATE: &str = "/cloudapi/1.0.0/ssl/certificateLibrary/{id}";

/// Sends a CloudAPI write whose answer must be lost: the send or the body
/// read fails, and neither the real status nor a `Location` gets through.
async fn send_lost(client: &Client, method: Method, path: &str, body: Option<&Value>) {
    let mut request = client
        .http
        .request(method.clone(), format!("{}{CLOUDAPI}{path}", client.base))
        .header("accept", "application/json;version=37.2")
        .bearer_auth(client.token.clone().unwrap());
    if let Some(body) = body {
        request = request.json(body);
    }
    if let Ok(response) = request.send().await {
        assert!(
            response.headers().get("location").is_none(),
            "{method} {path}: the Location of a lost answer leaked"
        );
        assert!(
            response.bytes().await.is_err(),
            "{method} {path}: the answer must be lost"
        );
    }
}

/// The log entry of the one call to `method template`; asserts it is there.
fn logged(sim: &Sim, method: &str, template: &str) -> vcdsim::LogEntry {
    let mut entries: Vec<_> = sim
        .requests()
        .into_iter()
        .filter(|e| e.method == method && e.template == template)
        .collect();
    assert_eq!(entries.len(), 1, "{method} {template}: {entries:?}");
    entries.remove(0)
}

fn certificate(alias: &str) -> Value {
    json!({"alias": alias, "certificate": "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", "privateKey": "secret"})
}

#[tokio::test]
async fn lose_answer_on_a_synchronous_create_applies_it_once() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    install_fault(&sim, json!({"method": "POST", "path": CERTIFICATES, "action": {"kind": "loseAnswer"}, "times": 1})).await;
    assert_eq!(sim.faults()[0].action, FaultAction::LoseAnswer);

    send_lost(
        &client,
        Method::POST,
        "/ssl/certificateLibrary",
        Some(&certificate("lost-cert")),
    )
    .await;
    let entry = logged(&sim, "POST", CERTIFICATES);
    assert_eq!(entry.status, 201, "the log has the real status");
    assert_eq!(entry.response_body, json!("<answer lost>"));
    assert_eq!((sim.faults()[0].matched, sim.faults()[0].fired), (1, 1));

    // The certificate exists, once; a blind retry learns it the hard way.
    let certs = client
        .ok("/ssl/certificateLibrary?filter=alias==lost-cert")
        .await;
    assert_eq!(certs["resultTotal"], 1, "{certs}");
    let retry = client
        .post(
            &format!("{CLOUDAPI}/ssl/certificateLibrary"),
            &certificate("lost-cert"),
        )
        .await;
    assert_eq!(retry.minor(), "DUPLICATE_NAME");
    assert_eq!(
        client
            .ok("/ssl/certificateLibrary?filter=alias==lost-cert")
            .await["resultTotal"],
        1
    );
}

#[tokio::test]
async fn lose_answer_on_an_async_create_lets_its_task_finish_unpolled() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| {
        k.task_durations_ms
            .insert("createLoadBalancerPool".into(), 300);
    });
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let pools = "/cloudapi/1.0.0/loadBalancer/pools";
    sim.add_fault(FaultRule::new(Some("POST"), pools, FaultAction::LoseAnswer).times(1));
    send_lost(
        &client,
        Method::POST,
        "/loadBalancer/pools",
        Some(&alb.pool("lost-pool", &["10.0.0.11"])),
    )
    .await;
    let entry = logged(&sim, "POST", pools);
    assert_eq!(entry.status, 202);
    assert_eq!(entry.response_body, json!("<answer lost>"));

    // The task was accepted and runs to its end, though nobody polls it.
    let status = || {
        sim.with_world(|w| {
            let tasks: Vec<TaskStatus> = w
                .tasks
                .iter()
                .filter(|t| t.operation_name == "createLoadBalancerPool")
                .map(|t| t.status)
                .collect();
            assert_eq!(tasks.len(), 1, "{tasks:?}");
            tasks[0]
        })
    };
    assert!(
        matches!(status(), TaskStatus::Queued | TaskStatus::Running),
        "the task is still under way when the answer is lost"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while status() != TaskStatus::Success {
        assert!(Instant::now() < deadline, "the task did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(sim.count("GET /api/task/{id}"), 0, "nobody polled");
    let summaries = client
        .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
        .await;
    assert_eq!(summaries["resultTotal"], 1, "{summaries}");
    assert_eq!(summaries["values"][0]["name"], "lost-pool");
    // The gateway is free again.
    client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("next-pool", &["10.0.0.12"])),
        )
        .await;
}

#[tokio::test]
async fn lose_answer_on_updates_and_deletes_applies_them() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    sim.add_fault(FaultRule::new(None, CERTIFICATE, FaultAction::LoseAnswer));

    // A synchronous update (200) and delete (204).
    let created = client
        .post(
            &format!("{CLOUDAPI}/ssl/certificateLibrary"),
            &certificate("doomed"),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let id = created.body["id"].as_str().unwrap().to_string();
    let mut update = created.body.clone();
    update["description"] = json!("rotated");
    let path = format!("/ssl/certificateLibrary/{id}");
    send_lost(&client, Method::PUT, &path, Some(&update)).await;
    assert_eq!(logged(&sim, "PUT", CERTIFICATE).status, 200);
    sim.clear_faults();
    assert_eq!(client.ok(&path).await["description"], "rotated");
    sim.add_fault(FaultRule::new(None, CERTIFICATE, FaultAction::LoseAnswer));
    send_lost(&client, Method::DELETE, &path, None).await;
    let entry = logged(&sim, "DELETE", CERTIFICATE);
    assert_eq!(entry.status, 204);
    assert_eq!(entry.response_body, json!("<answer lost>"));
    sim.clear_faults();
    assert_eq!(
        client.get(&format!("{CLOUDAPI}{path}")).await.status,
        StatusCode::FORBIDDEN,
        "the certificate is gone"
    );

    // An asynchronous delete (202 and a task).
    let gw = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let dnat = json!({
        "name": "doomed", "enabled": true, "ruleType": "DNAT",
        "externalAddresses": "203.0.113.20", "internalAddresses": "192.168.8.2",
        "dnatExternalPort": "80",
    });
    let rule_id = client
        .write_ok(
            Method::POST,
            &format!("/edgeGateways/{gw}/nat/rules"),
            Some(&dnat),
        )
        .await;
    let rule_template = "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules/{rule}";
    sim.add_fault(FaultRule::new(Some("DELETE"), rule_template, FaultAction::LoseAnswer).times(1));
    let rule = format!("/edgeGateways/{gw}/nat/rules/{rule_id}");
    send_lost(&client, Method::DELETE, &rule, None).await;
    assert_eq!(logged(&sim, "DELETE", rule_template).status, 202);
    let gone = client.get(&format!("{CLOUDAPI}{rule}")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
}

/// Installs a fault rule through the admin API, as a test harness would.
async fn install_fault(sim: &vcdsim::Sim, rule: serde_json::Value) {
    let faults = format!("{}/_sim/faults", sim.base_url());
    let status = crate::support::http()
        .post(&faults)
        .json(&rule)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::CREATED);
}

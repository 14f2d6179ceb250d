use std::time::Duration;

use reqwest::{Method, StatusCode};
use vcdsim::{BusyMode, Scenario};

use crate::support::{Alb, CLOUDAPI, Client, start};

#[tokio::test]
async fn a_task_goes_queued_running_success_and_the_object_appears_at_success() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| {
        k.task_durations_ms
            .insert("createLoadBalancerPool".into(), 1500);
    });
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let reply = client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/pools"),
            &alb.pool("slow", &["10.0.0.11"]),
        )
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert_eq!(
        reply.body,
        serde_json::Value::Null,
        "a 202 has an empty body"
    );
    let location = reply.header("location").unwrap().to_string();
    assert!(location.starts_with(&format!("{}/api/task/", sim.base_url())));

    let task = client.get(&location).await.body;
    assert_eq!(task["status"], "queued");
    assert_eq!(task["operationName"], "createLoadBalancerPool");
    assert!(task["id"].as_str().unwrap().starts_with("urn:vcloud:task:"));
    assert_eq!(task["organization"]["name"], "org1");
    assert_eq!(
        client.ok(&format!("/edgeGateways/{gw}")).await["status"],
        "CONFIGURING"
    );
    assert_eq!(
        client
            .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
            .await["resultTotal"],
        0
    );

    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(client.get(&location).await.body["status"], "running");

    let done = client.wait_task(&location).await;
    assert_eq!(done["status"], "success");
    assert_eq!(done["progress"], 100);
    assert!(done["endTime"].is_string());
    let owner = done["owner"]["id"].as_str().unwrap();
    assert!(
        done["owner"]["href"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/loadBalancer/pools/{owner}"))
    );
    assert_eq!(
        client.ok(&format!("/loadBalancer/pools/{owner}")).await["name"],
        "slow"
    );
    assert_eq!(
        client.ok(&format!("/edgeGateways/{gw}")).await["status"],
        "REALIZED"
    );
}

#[tokio::test]
async fn a_second_gateway_write_in_flight_gets_busy_entity() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| k.task_duration_ms = 600);
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let path = format!("{CLOUDAPI}/loadBalancer/pools");
    let (one, two) = (
        alb.pool("one", &["10.0.0.11"]),
        alb.pool("two", &["10.0.0.12"]),
    );
    let (a, b) = tokio::join!(client.post(&path, &one), client.post(&path, &two));
    let busy = match (a.status.as_u16(), b.status.as_u16()) {
        (202, 400) => b,
        (400, 202) => a,
        other => panic!("expected one 202 and one 400, got {other:?}"),
    };
    assert_eq!(busy.minor(), "BUSY_ENTITY");
    let uuid = alb.gateway_id().rsplit(':').next().unwrap();
    let message = busy.body["message"].as_str().unwrap();
    let expected = format!(
        "The entity Ref: com.vmware.vcloud.entity.gateway:{uuid} is busy completing an operation CREATE_LOAD_BALANCER_POOL."
    );
    assert!(message.ends_with(&expected), "{message}");
    assert!(busy.body["stackTrace"].is_null());

    // A NAT rule on the same gateway is refused too; another org object is not gateway-scoped.
    let nat = serde_json::json!({"name": "n", "ruleType": "DNAT", "externalAddresses": "203.0.113.20", "internalAddresses": "10.0.0.5"});
    let reply = client
        .post(
            &format!("{CLOUDAPI}/edgeGateways/{}/nat/rules", alb.gateway_id()),
            &nat,
        )
        .await;
    assert_eq!(reply.minor(), "BUSY_ENTITY");
}

#[tokio::test]
async fn queue_mode_waits_and_cooldown_extends_the_busy_window() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 200;
        k.busy_mode = BusyMode::Queue;
    });
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let path = "/loadBalancer/pools";
    let one = alb.pool("one", &["10.0.0.11"]);
    let two = alb.pool("two", &["10.0.0.12"]);
    let (a, b) = tokio::join!(
        client.write(Method::POST, path, Some(&one)),
        client.write(Method::POST, path, Some(&two))
    );
    assert_eq!(
        (a["status"].as_str(), b["status"].as_str()),
        (Some("success"), Some("success"))
    );

    sim.set_knobs(|k| {
        k.task_duration_ms = 0;
        k.busy_mode = BusyMode::Reject;
        k.busy_cooldown_ms = 1000;
    });
    client
        .write_ok(Method::POST, path, Some(&alb.pool("three", &["10.0.0.13"])))
        .await;
    let reply = client
        .post(
            &format!("{CLOUDAPI}{path}"),
            &alb.pool("four", &["10.0.0.14"]),
        )
        .await;
    assert_eq!(reply.minor(), "BUSY_ENTITY");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    client
        .write_ok(Method::POST, path, Some(&alb.pool("four", &["10.0.0.14"])))
        .await;
}

#[tokio::test]
async fn tasks_of_another_org_are_forbidden() {
    let sim = start(Scenario::two_orgs()).await;
    let alice = Client::login(&sim, "alice", "org1", "alice-password").await;
    let bob = Client::login(&sim, "bob", "org2", "bob-password").await;
    let alb = Alb::discover(&alice, "edge1").await;
    let reply = alice
        .post(
            &format!("{CLOUDAPI}/loadBalancer/pools"),
            &alb.pool("p", &["10.0.0.11"]),
        )
        .await;
    let location = reply.header("location").unwrap().to_string();
    assert_eq!(bob.get(&location).await.status, StatusCode::FORBIDDEN);
    assert_eq!(alice.get(&location).await.status, StatusCode::OK);
}

//! Tenant health monitors on pools (API 39.0): attached only through
//! assignments, listed back by a pool's body, unassigned by a PUT that
//! leaves them out, and marking members DOWN when their probes fail.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;
use vcdsim::openapi::Spec;

use crate::health_monitors::{MONITORS, create_monitor, http_monitor, tenant_at};
use crate::support::{Alb, CLOUDAPI, Client, start};
use crate::versions::refused;

fn assignment(monitor: &str, pool: &str) -> Value {
    json!({"healthMonitorRef": {"id": monitor}, "loadBalancerPoolRef": {"id": pool}})
}

async fn assign(client: &Client, monitor: &str, pool: &str) -> String {
    let task = client
        .write(
            Method::POST,
            &format!("{MONITORS}/assignments"),
            Some(&assignment(monitor, pool)),
        )
        .await;
    assert_eq!(task["status"], "success", "{task}");
    let id = task["owner"]["id"].as_str().unwrap().to_string();
    assert!(
        id.starts_with("urn:vcloud:loadBalancerHealthMonitorAssignment:"),
        "{id}"
    );
    id
}

/// The assignments a filter selects.
async fn assignments(client: &Client, filter: &str) -> Vec<Value> {
    let page = client
        .ok(&format!("{MONITORS}/assignments?filter={filter}"))
        .await;
    page["values"].as_array().unwrap().clone()
}

#[tokio::test]
async fn assignments_need_exactly_one_filter_and_a_tenant_monitor() {
    let sim = start(Scenario::default_scenario()).await;
    let client = tenant_at(&sim, "39.1").await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = alb.create_pool(&client, "web").await;
    let monitor = create_monitor(&client, &http_monitor("web-check", 8080)).await;
    let list = format!("{CLOUDAPI}{MONITORS}/assignments");
    let rule =
        "filter must be exactly one of healthMonitorRef.id==<id> or loadBalancerPoolRef.id==<id>";
    for query in [
        String::new(),
        format!("?filter=healthMonitorRef.id=={monitor};loadBalancerPoolRef.id=={pool}"),
        format!("?filter=healthMonitorRef.id=={monitor},loadBalancerPoolRef.id=={pool}"),
        "?filter=name==web-check".to_string(),
    ] {
        refused(&client.get(&format!("{list}{query}")).await, &[rule]);
    }
    let by_pool = format!("filter=loadBalancerPoolRef.id=={pool}");
    refused(
        &client.get(&format!("{list}?{by_pool}&pageSize=129")).await,
        &["pageSize: 129 is above maximum 128"],
    );
    refused(
        &client.get(&format!("{list}?{by_pool}&page=0")).await,
        &["page must be at least 1"],
    );

    let id = assign(&client, &monitor, &pool).await;
    let expected = json!([{"id": id, "healthMonitorRef": {"name": "web-check", "id": monitor},
                           "loadBalancerPoolRef": {"name": "web", "id": pool}}]);
    assert_eq!(
        json!(assignments(&client, &format!("loadBalancerPoolRef.id=={pool}")).await),
        expected
    );
    assert_eq!(
        json!(assignments(&client, &format!("(healthMonitorRef.id=={monitor})")).await),
        expected
    );

    let url = format!("{CLOUDAPI}{MONITORS}/assignments");
    refused(
        &client.post(&url, &assignment(&monitor, &pool)).await,
        &["web-check", "already assigned to pool web"],
    );
    let gw = alb.gateway_id();
    let summaries = client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/healthMonitorSummaries?filter=name==System-TCP"
        ))
        .await;
    let system = summaries["values"][0]["id"].as_str().unwrap();
    refused(
        &client.post(&url, &assignment(system, &pool)).await,
        &["System-TCP is a SYSTEM health monitor", "by type"],
    );
    refused(
        &client
            .post(&url, &json!({"healthMonitorRef": {"id": monitor}}))
            .await,
        &["$.loadBalancerPoolRef.id: required"],
    );
    refused(
        &client
            .post(&url, &json!({"loadBalancerPoolRef": {"id": pool}}))
            .await,
        &["$.healthMonitorRef.id: required"],
    );
    let mut extra = assignment(&monitor, &pool);
    extra["weight"] = json!(1);
    refused(
        &client.post(&url, &extra).await,
        &["Unrecognized field \"weight\" (class EdgeLoadBalancerHealthMonitorAssignment)"],
    );
    let unknown = client
        .post(
            &url,
            &assignment(&monitor, "urn:vcloud:loadBalancerPool:0000"),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::FORBIDDEN, "{}", unknown.body);
}

#[tokio::test]
async fn a_pool_lists_its_assigned_monitors_and_a_put_may_only_keep_or_drop_them() {
    let sim = start(Scenario::default_scenario()).await;
    let (v39, v38) = (tenant_at(&sim, "39.1").await, tenant_at(&sim, "38.1").await);
    let alb = Alb::discover(&v39, "edge1").await;
    let pool = alb.create_pool(&v39, "web").await;
    let monitor = create_monitor(&v39, &http_monitor("web-check", 8080)).await;
    assign(&v39, &monitor, &pool).await;
    let one = format!("/loadBalancer/pools/{pool}");
    let url = format!("{CLOUDAPI}{one}");
    let read = v39.ok(&one).await;
    assert_eq!(
        read["healthMonitors"],
        json!([{"type": "TCP", "name": null, "systemDefined": null},
        {"id": monitor, "name": "web-check", "type": "HTTP", "systemDefined": false}])
    );
    let mut errors = Vec::new();
    Spec::embedded_at("39.1").check(
        "EdgeLoadBalancerPool",
        &read,
        "GET pool at 39.1",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    Spec::embedded_at("38.1").check(
        "EdgeLoadBalancerPool",
        &read,
        "GET pool at 38.1",
        &mut errors,
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("property id is not defined")),
        "{errors:?}"
    );
    assert_eq!(
        v39.ok(&format!(
            "/edgeGateways/{}/loadBalancer/poolSummaries",
            alb.gateway_id()
        ))
        .await["values"][0]["activeMonitoringEnabled"],
        true
    );

    // 38.1 neither sees nor names it, and its PUT leaves it assigned.
    let old = v38.ok(&one).await;
    assert_eq!(old["healthMonitors"].as_array().unwrap().len(), 1, "{old}");
    refused(
        &v38.put(&url, &read).await,
        &[
            "Unrecognized field \"id\" (class EdgeLoadBalancerHealthMonitor)",
            "38.1",
        ],
    );
    v38.write_ok(Method::PUT, &one, Some(&old)).await;
    let by_pool = format!("loadBalancerPoolRef.id=={pool}");
    assert_eq!(assignments(&v39, &by_pool).await.len(), 1);

    // 39.1 PUTs back what it read; the item must be as read.
    v39.write_ok(Method::PUT, &one, Some(&read)).await;
    assert_eq!(v39.ok(&one).await["healthMonitors"], read["healthMonitors"]);
    let mut retyped = read.clone();
    retyped["healthMonitors"][1]["type"] = json!("TCP");
    refused(
        &v39.put(&url, &retyped).await,
        &[
            "healthMonitors[1].type",
            "'TCP' is not the type of health monitor web-check (HTTP)",
        ],
    );
    let mut tuned = read.clone();
    tuned["healthMonitors"][1]["sendInterval"] = json!(5);
    refused(
        &v39.put(&url, &tuned).await,
        &[
            "healthMonitors[1].sendInterval",
            "a pool names its health monitors",
        ],
    );

    let monitor_url = format!("{CLOUDAPI}{MONITORS}/{monitor}");
    refused(
        &v39.delete(&monitor_url).await,
        &["web-check is assigned to 1 pool(s), web first"],
    );

    // Left out of a PUT, it is unassigned; then no body may name it.
    let mut without = read.clone();
    without["healthMonitors"] = json!([{"type": "TCP"}]);
    v39.write_ok(Method::PUT, &one, Some(&without)).await;
    assert!(assignments(&v39, &by_pool).await.is_empty());
    let attach = "attach a tenant monitor with POST /loadBalancer/healthMonitors/assignments";
    refused(
        &v39.put(&url, &read).await,
        &[
            "healthMonitors[1].id",
            "is not assigned to this pool",
            attach,
        ],
    );
    let mut new_pool = alb.pool("api", &["10.0.0.12"]);
    new_pool["healthMonitors"] = json!([{"id": monitor, "type": "HTTP"}]);
    refused(
        &v39.post(&format!("{CLOUDAPI}/loadBalancer/pools"), &new_pool)
            .await,
        &["healthMonitors[0].id", attach],
    );

    // A pool's deletion takes its assignments; then the monitor may go.
    assign(&v39, &monitor, &pool).await;
    v39.write_ok(Method::DELETE, &one, None).await;
    assert!(
        assignments(&v39, &format!("healthMonitorRef.id=={monitor}"))
            .await
            .is_empty()
    );
    v39.write_ok(Method::DELETE, &format!("{MONITORS}/{monitor}"), None)
        .await;
}

/// `upMemberCount` and each listed member's health and `markedDownBy`.
async fn members(client: &Client, pool: &str) -> (u64, Vec<(String, Value)>) {
    let read = client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    let members = read["members"].as_array().unwrap().iter().map(|m| {
        (
            m["healthStatus"].as_str().unwrap().to_string(),
            m["markedDownBy"].clone(),
        )
    });
    (read["upMemberCount"].as_u64().unwrap(), members.collect())
}

#[tokio::test]
async fn failed_probes_of_a_tenant_http_monitor_mark_members_down() {
    let sim = start(Scenario::default_scenario()).await;
    let client = tenant_at(&sim, "39.1").await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("nodes", &["10.0.0.11", "10.0.0.12", "10.0.0.13"])),
        )
        .await;
    let vs = alb.virtual_service("nodes", &pool, "203.0.113.20", 80);
    client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let monitor = create_monitor(&client, &http_monitor("healthz", 10256)).await;

    // Unassigned, a failing probe changes nothing.
    sim.with_world(|w| w.set_probe("10.0.0.11", 10256, false));
    assert_eq!(members(&client, &pool).await.0, 3);
    assign(&client, &monitor, &pool).await;
    let (up, listed) = members(&client, &pool).await;
    assert_eq!(up, 2);
    assert_eq!(listed[0], ("DOWN".to_string(), json!(["healthz"])));
    assert_eq!(listed[1], ("UP".to_string(), json!([])));

    // Another port is not what the monitor probes; the admin API sets one.
    sim.with_world(|w| w.set_probe("10.0.0.12", 30080, false));
    assert_eq!(members(&client, &pool).await.0, 2);
    let admin = crate::support::http();
    for ip in ["10.0.0.12", "10.0.0.13"] {
        let url = format!("{}/_sim/probes/{ip}/10256", sim.base_url());
        let status = admin
            .put(url)
            .json(&json!({"healthy": false}))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK);
    }
    let read = client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    assert_eq!(
        (
            read["upMemberCount"].as_u64(),
            read["healthStatus"].as_str()
        ),
        (Some(0), Some("DOWN"))
    );
    let gw = alb.gateway_id().to_string();
    let services = client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries"
        ))
        .await;
    assert_eq!(services["values"][0]["healthStatus"], "DOWN");
    sim.with_world(|w| w.set_probe("10.0.0.11", 10256, true));
    let read = client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    assert_eq!(
        (
            read["upMemberCount"].as_u64(),
            read["healthStatus"].as_str()
        ),
        (Some(1), Some("RUNNING"))
    );

    // A member group's entries are probed too, on the pool's port when the
    // monitor names none.
    let grouped = alb
        .create_group_pool(&client, "grouped", &["10.0.0.21", "10.0.0.22"])
        .await;
    let mut portless = http_monitor("pool-port", 0);
    portless["httpSettings"]
        .as_object_mut()
        .unwrap()
        .remove("port");
    let portless = create_monitor(&client, &portless).await;
    assign(&client, &portless, &grouped).await;
    sim.with_world(|w| w.set_probe("10.0.0.21", 30080, false));
    let read = client.ok(&format!("/loadBalancer/pools/{grouped}")).await;
    assert_eq!(
        (read["memberCount"].as_u64(), read["upMemberCount"].as_u64()),
        (Some(2), Some(1))
    );
}

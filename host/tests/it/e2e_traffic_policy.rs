//! `externalTrafficPolicy: Local` end to end below VCD API 39.0 (VCD 10.5,
//! API 38.1), where pools can only name VCD's system monitors: pool members
//! follow the nodes that run ready endpoints (EndpointSlices on kubesim),
//! writes happen only when that node set changes, and pools carry only
//! monitors VCD has. From 39.0 the pools probe `healthCheckNodePort`
//! instead (`e2e_run::monitors`).

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use k8s_openapi::api::discovery::v1::EndpointSlice;

/// A `Local` Service's members are its own IP set: a change is one PUT of it.
const MEMBER_WRITE: &str = "PUT /cloudapi/1.0.0/firewallGroups/{id}";

fn local_service(name: &str) -> Value {
    let mut body = lb_service(name, &[(80, 30080)]);
    body["spec"]["externalTrafficPolicy"] = json!("Local");
    body["spec"]["healthCheckNodePort"] = json!(32000);
    body
}

/// A slice of `service` with one endpoint per `(node, ready)`.
pub(crate) fn slice(service: &str, suffix: &str, endpoints: &[(&str, bool)]) -> Value {
    let endpoints: Vec<Value> = endpoints
        .iter()
        .enumerate()
        .map(|(i, (node, ready))| {
            json!({
                "addresses": [format!("10.244.{}.{}", i / 200, i % 200 + 2)],
                "conditions": {"ready": ready},
                "nodeName": node,
            })
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": format!("{service}-{suffix}"),
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": service},
        },
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "", "port": 8080, "protocol": "TCP"}],
    })
}

fn slices(cluster: &Cluster) -> Api<EndpointSlice> {
    Api::namespaced(cluster.client.clone(), "default")
}

async fn put_slice(cluster: &Cluster, body: Value) {
    let name = body["metadata"]["name"].as_str().unwrap().to_string();
    let api = slices(cluster);
    if api.get_opt(&name).await.unwrap().is_some() {
        let patch = json!({"endpoints": body["endpoints"]});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap();
    } else {
        api.create(
            &PostParams::default(),
            &serde_json::from_value(body).unwrap(),
        )
        .await
        .unwrap();
    }
}

async fn three_nodes() -> Cluster {
    let mut scenario = crate::support::lb::blocks_scenario();
    scenario.api_versions = vec!["37.2".into(), "38.0".into(), "38.1".into()];
    let cluster = Cluster::start_on(scenario, fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    cluster.add_node("worker-2", "10.0.0.13").await;
    cluster
}

async fn wait_for_members(cluster: &Cluster, uid: &str, want: &[&str]) {
    let want: Vec<Vec<String>> = vec![want.iter().map(|s| s.to_string()).collect()];
    wait_for(&format!("pool members {want:?}"), || async {
        (cluster.pool_members(uid) == want).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_services_send_traffic_only_to_nodes_with_ready_endpoints() {
    let cluster = three_nodes().await;
    put_slice(
        &cluster,
        slice("web", "a", &[("worker-0", true), ("worker-1", false)]),
    )
    .await;
    let uid = cluster
        .create_service("default", local_service("web"))
        .await;
    cluster.wait_for_ip("default", "web").await;
    wait_for_members(&cluster, &uid, &["10.0.0.11"]).await;

    // Only monitors VCD defines (vcdsim refuses any other property, and the
    // wire check at the end holds every body to the spec).
    let monitors: Vec<String> = cluster.vcd.with_world(|w| {
        w.pools
            .iter()
            .flat_map(|p| p.health_monitors.iter().map(|m| m.monitor_type.clone()))
            .collect()
    });
    assert!(
        monitors
            .iter()
            .all(|m| ["TCP", "UDP", "HTTP", "HTTPS", "PING"].contains(&m.as_str())),
        "{monitors:?}"
    );

    // A pod becomes ready on worker-1 and one starts on worker-2 in a second slice.
    put_slice(
        &cluster,
        slice("web", "a", &[("worker-0", true), ("worker-1", true)]),
    )
    .await;
    put_slice(&cluster, slice("web", "b", &[("worker-2", true)])).await;
    wait_for_members(&cluster, &uid, &["10.0.0.11", "10.0.0.12", "10.0.0.13"]).await;

    // Every endpoint gone: no members, and the Service says why.
    slices(&cluster)
        .delete("web-b", &DeleteParams::default())
        .await
        .unwrap();
    put_slice(&cluster, slice("web", "a", &[])).await;
    wait_for_members(&cluster, &uid, &[]).await;
    let message = cluster
        .wait_for_event("default", "web", "NoReadyEndpoints")
        .await;
    assert!(
        message.contains("externalTrafficPolicy is Local"),
        "{message}"
    );

    // Back to Cluster: every node again, whatever the endpoints.
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"externalTrafficPolicy": "Cluster"}})),
        )
        .await
        .unwrap();
    wait_for_members(&cluster, &uid, &["10.0.0.11", "10.0.0.12", "10.0.0.13"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_churn_writes_only_when_the_member_set_changes() {
    let cluster = three_nodes().await;
    put_slice(&cluster, slice("web", "a", &[("worker-0", true)])).await;
    let uid = cluster
        .create_service("default", local_service("web"))
        .await;
    cluster.wait_for_ip("default", "web").await;
    wait_for_members(&cluster, &uid, &["10.0.0.11"]).await;
    let before = cluster.vcd.count(MEMBER_WRITE);

    // A rollout of 50 pods, all on worker-0 and worker-1, one step at a time.
    for step in 1..=50usize {
        let endpoints: Vec<(&str, bool)> = (0..step)
            .map(|i| {
                (
                    if i % 2 == 0 { "worker-0" } else { "worker-1" },
                    i + 1 < step,
                )
            })
            .chain([("worker-0", true)])
            .collect();
        put_slice(&cluster, slice("web", "a", &endpoints)).await;
    }
    wait_for_members(&cluster, &uid, &["10.0.0.11", "10.0.0.12"]).await;
    let writes = cluster.vcd.count(MEMBER_WRITE) - before;
    println!("50 endpoint updates, {writes} IP set writes");
    assert_eq!(
        writes,
        1,
        "the member set changed once; written:\n{}",
        crate::support::lb::write_lines(&cluster.vcd)
    );

    // Pods replaced on the same nodes: no write at all. The last update
    // takes worker-1 out, so once its write lands every update before it
    // has been seen: that write must be the only one.
    let settled = cluster.vcd.count(MEMBER_WRITE);
    for step in 0..20usize {
        let endpoints = [
            ("worker-0", true),
            ("worker-1", step % 3 != 0),
            ("worker-1", true),
        ];
        put_slice(&cluster, slice("web", "a", &endpoints)).await;
    }
    put_slice(&cluster, slice("web", "a", &[("worker-0", true)])).await;
    wait_for_members(&cluster, &uid, &["10.0.0.11"]).await;
    assert_eq!(
        cluster.vcd.count(MEMBER_WRITE) - settled,
        1,
        "only the change of the member set was written"
    );
}

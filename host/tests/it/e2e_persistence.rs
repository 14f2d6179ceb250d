//! Session persistence (contract 0.3.0) through the service controller:
//! `spec.sessionAffinity: ClientIP` and the `vcd-ccm.io/persistence`
//! annotation become the pools' persistence profiles, follow the Service's
//! changes, and what the gateway cannot do is refused before any write.

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};

const PERSISTENCE: &str = "vcd-ccm.io/persistence";

/// Each pool's persistence as VCD holds it: `(type, value)`, by pool name.
fn persistence(cluster: &Cluster) -> Vec<Option<(String, Option<String>)>> {
    cluster.vcd.with_world(|w| {
        let mut pools: Vec<_> = w.pools.iter().collect();
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        pools
            .iter()
            .map(|p| {
                p.persistence_profile
                    .as_ref()
                    .map(|profile| (profile.profile_type.clone(), profile.value.clone()))
            })
            .collect()
    })
}

fn client_ip() -> Option<(String, Option<String>)> {
    Some(("CLIENT_IP".into(), None))
}

async fn patch(cluster: &Cluster, name: &str, change: serde_json::Value) {
    cluster
        .services("default")
        .patch(name, &PatchParams::default(), &Patch::Merge(change))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_affinity_and_the_annotation_set_each_pools_persistence() {
    let cluster = Cluster::start_with(fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080), (8080, 30880)]);
    body["spec"]["sessionAffinity"] = json!("ClientIP");
    body["spec"]["ports"][0]["appProtocol"] = json!("http");
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    assert_eq!(persistence(&cluster), [client_ip(), client_ip()]);
    // Kubernetes' default timeout (3 h) is not NSX ALB's: the user is told.
    let warning = cluster
        .wait_for_event("default", "web", "LoadBalancerPolicyWarning")
        .await;
    assert!(warning.contains("not the Service's 10800 s"), "{warning}");

    // A cookie on the HTTP port alone is refused for the TCP one, and the
    // pools keep what they had.
    patch(
        &cluster,
        "web",
        json!({"metadata": {"annotations": {PERSISTENCE: "http-cookie:shop"}}}),
    )
    .await;
    let refusal = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        refusal.contains(PERSISTENCE) && refusal.contains("port 8080"),
        "{refusal}"
    );
    assert_eq!(persistence(&cluster), [client_ip(), client_ip()]);

    // With the TCP port gone, the cookie is written to the HTTP port's pool.
    patch(
        &cluster,
        "web",
        json!({"spec": {"ports": [{"name": "p80", "port": 80, "nodePort": 30080, "protocol": "TCP", "appProtocol": "http"}]}}),
    )
    .await;
    wait_for("the cookie on the HTTP pool", || async {
        (persistence(&cluster) == [Some(("HTTP_COOKIE".into(), Some("shop".into())))]).then_some(())
    })
    .await;

    // No affinity and no annotation: no persistence.
    patch(
        &cluster,
        "web",
        json!({"metadata": {"annotations": {PERSISTENCE: null}}, "spec": {"sessionAffinity": "None"}}),
    )
    .await;
    wait_for("no persistence", || async {
        (persistence(&cluster) == [None]).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistence_a_standard_gateway_lacks_is_refused_before_any_write() {
    let cluster = Cluster::start_with(fast_config(), |c| {
        c.vcd.with_world(|w| {
            w.gateways[0].load_balancer.supported_feature_set = "STANDARD".into();
        });
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("app", &[(80, 30080)]);
    body["spec"]["ports"][0]["appProtocol"] = json!("http");
    body["metadata"]["annotations"] = json!({PERSISTENCE: "app-cookie:JSESSIONID"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "app", "SyncLoadBalancerFailed")
        .await;
    assert!(message.contains("PREMIUM"), "{message}");
    cluster.holds_no_load_balancer().await;
}

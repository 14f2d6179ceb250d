//! Preserving client addresses: a contract 0.2.0 decision, honoured with
//! NSX ALB transparent mode where the gateway offers it and refused with the
//! reason where it does not.

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};

const PRESERVE: &str = "vcd-ccm.io/preserve-client-ip";

fn transparent(cluster: &Cluster) -> Vec<Option<bool>> {
    cluster.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .map(|v| v.transparent_mode_enabled)
            .collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_addresses_are_preserved_where_the_gateway_offers_transparent_mode() {
    let cluster = Cluster::start_with(fast_config(), |c| {
        c.vcd
            .with_world(|w| w.gateways[0].load_balancer.transparent_mode_enabled = true);
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({PRESERVE: "true"});
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    assert_eq!(transparent(&cluster), [Some(true)]);

    // Turned off again: the virtual service is rewritten without it.
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {PRESERVE: "false"}}})),
        )
        .await
        .unwrap();
    wait_for("transparent mode off", || async {
        (transparent(&cluster) == [None]).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_without_transparent_mode_refuses_it_with_the_reason_and_writes_nothing() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({PRESERVE: "true"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(message.contains("transparent mode"), "{message}");
    assert!(message.contains("37.1"), "{message}");
    cluster.holds_no_load_balancer().await;

    // A value that is not a boolean is named, with what would work.
    let mut body = lb_service("typo", &[(81, 30081)]);
    body["metadata"]["annotations"] = json!({PRESERVE: "yes"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "typo", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains(PRESERVE) && message.contains("\"yes\""),
        "{message}"
    );
}

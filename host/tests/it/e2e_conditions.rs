//! The `vcd-ccm.io/LoadBalancerReady` condition through the service
//! controller: True with the Event's words once the load balancer matches,
//! False with the failure's Event text (and the generation it speaks of)
//! when it cannot, back to True when fixed, written only when it changes,
//! beside other writers' conditions, and gone with the load balancer.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use vcd_ccm::controllers::service::{READY_CONDITION, condition_of};

use crate::support::cluster::{Cluster, lb_service, wait_for};
use crate::support::objects::ServiceEdits;

const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";
const CERT_ALIAS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";

fn condition(service: &Service, kind: &str) -> Option<Condition> {
    condition_of(service, kind).cloned()
}

/// Waits until the Service's condition has `status` and `reason`.
async fn wait_for_condition(cluster: &Cluster, status: &str, reason: &str) -> (Service, Condition) {
    wait_for(&format!("{READY_CONDITION} {status} {reason}"), || async {
        let service = cluster.service("default", "tls").await?;
        let found = condition(&service, READY_CONDITION)?;
        (found.status == status && found.reason == reason).then_some((service, found))
    })
    .await
}

fn status_patches(cluster: &Cluster) -> usize {
    cluster
        .kube
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/services/tls/status"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_condition_says_whether_the_load_balancer_matches_and_why_not() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("tls", &[(443, 30443)]);
    body["metadata"]["annotations"] = json!({SSL_PORTS: "443", CERT_ALIAS: "missing-cert"});
    cluster.create_service("default", body).await;
    let audited = json!({"status": {"conditions": [{"type": "example.com/Audited",
        "status": "True", "reason": "Audited", "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    cluster
        .services("default")
        .patch_status("tls", &PatchParams::default(), &Patch::Strategic(audited))
        .await
        .expect("another writer's condition");

    let event = cluster
        .wait_for_event("default", "tls", "SyncLoadBalancerFailed")
        .await;
    let (service, failed) = wait_for_condition(&cluster, "False", "SyncLoadBalancerFailed").await;
    assert_eq!(failed.message, event, "the Event's words");
    assert!(
        failed.message.contains("missing-cert"),
        "{}",
        failed.message
    );
    assert_eq!(failed.observed_generation, service.metadata.generation);

    cluster
        .patch_service(
            "default",
            "tls",
            json!({"metadata": {"annotations": {CERT_ALIAS: "my-cert"}}}),
        )
        .await;
    cluster.wait_for_ip("default", "tls").await;
    let (service, ready) = wait_for_condition(&cluster, "True", "EnsuredLoadBalancer").await;
    assert_eq!(ready.message, "Ensured load balancer");
    assert_eq!(ready.observed_generation, service.metadata.generation);
    assert!(
        condition(&service, "example.com/Audited").is_some(),
        "another writer's condition stays"
    );

    // A sync that changes nothing writes no status.
    let before = status_patches(&cluster);
    cluster
        .patch_service(
            "default",
            "tls",
            json!({"metadata": {"annotations": {"note": "resync"}}}),
        )
        .await;
    wait_for("a second ensure", || async {
        let events = cluster.events_with_counts("default", "tls").await;
        events
            .iter()
            .any(|(reason, count)| reason == "EnsuredLoadBalancer" && *count >= 2)
            .then_some(())
    })
    .await;
    assert_eq!(status_patches(&cluster), before);

    // No longer a LoadBalancer: the condition goes with it, others' stay.
    cluster
        .patch_service(
            "default",
            "tls",
            json!({"spec": {"type": "ClusterIP", "ports": [{"port": 443, "nodePort": null}]}}),
        )
        .await;
    wait_for("the condition removed", || async {
        let service = cluster.service("default", "tls").await?;
        condition(&service, READY_CONDITION)
            .is_none()
            .then_some(service)
    })
    .await;
    let service = cluster
        .service("default", "tls")
        .await
        .expect("still there");
    assert!(condition(&service, "example.com/Audited").is_some());
}

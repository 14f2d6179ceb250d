//! Patch flavours: strategic merge for the lists controllers touch, JSON merge, JSON patch.

use crate::common::{api_error, service, start, typed};
use k8s_openapi::api::core::v1::{Node, Service};
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn node() -> Node {
    typed(json!({
        "metadata": {"name": "n1"},
        "spec": {"taints": [
            {"key": "a", "effect": "NoSchedule"},
            {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}
        ]},
        "status": {
            "addresses": [{"type": "Hostname", "address": "n1"}],
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "MemoryPressure", "status": "False"}]
        }
    }))
}

#[tokio::test]
async fn strategic_merge_handles_finalizers_conditions_and_addresses() {
    let (_sim, client) = start().await;
    let nodes = Api::<Node>::all(client.clone());
    nodes.create(&PostParams::default(), &node()).await.unwrap();
    let status = Patch::Strategic(json!({"status": {
        "conditions": [{"type": "Ready", "status": "True"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}]
    }}));
    let patched = nodes
        .patch_status("n1", &PatchParams::default(), &status)
        .await
        .unwrap();
    let patched_status = patched.status.unwrap();
    let conditions: Vec<(String, String)> = patched_status
        .conditions
        .unwrap()
        .into_iter()
        .map(|c| (c.type_, c.status))
        .collect();
    assert_eq!(
        conditions,
        [
            ("Ready".into(), "True".into()),
            ("MemoryPressure".into(), "False".into())
        ]
    );
    assert_eq!(
        patched_status.addresses.unwrap().len(),
        2,
        "addresses merge by type"
    );

    let services = Api::<Service>::default_namespaced(client);
    let mut svc = service("lb", "LoadBalancer");
    svc.metadata.finalizers = Some(vec!["other.io/keep".into()]);
    services.create(&PostParams::default(), &svc).await.unwrap();
    let add = Patch::Strategic(json!({"metadata": {
        "$setElementOrder/finalizers": ["other.io/keep", "service.kubernetes.io/load-balancer-cleanup"],
        "finalizers": ["service.kubernetes.io/load-balancer-cleanup"]
    }}));
    let patched = services
        .patch_status("lb", &PatchParams::default(), &add)
        .await
        .unwrap();
    assert_eq!(
        patched.finalizers(),
        [
            "other.io/keep",
            "service.kubernetes.io/load-balancer-cleanup"
        ]
    );
    let ports = Patch::Strategic(json!({"spec": {"ports": [{"port": 443, "name": "https"}]}}));
    let patched = services
        .patch("lb", &PatchParams::default(), &ports)
        .await
        .unwrap();
    assert_eq!(
        patched.spec.unwrap().ports.unwrap().len(),
        2,
        "ports merge by port"
    );
}

#[tokio::test]
async fn taints_and_ingress_are_replaced_whole_as_the_real_server_does() {
    let (_sim, client) = start().await;
    let nodes = Api::<Node>::all(client.clone());
    nodes.create(&PostParams::default(), &node()).await.unwrap();
    // NodeSpec.taints has no patch merge key (listType=atomic), so removing the
    // uninitialized taint is done by sending the remaining list.
    let taints =
        Patch::Strategic(json!({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}));
    let patched = nodes
        .patch("n1", &PatchParams::default(), &taints)
        .await
        .unwrap();
    let keys: Vec<String> = patched
        .spec
        .unwrap()
        .taints
        .unwrap()
        .into_iter()
        .map(|t| t.key)
        .collect();
    assert_eq!(keys, ["a"]);

    let services = Api::<Service>::default_namespaced(client);
    services
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    for ip in ["192.0.2.1", "192.0.2.2"] {
        let status =
            Patch::Strategic(json!({"status": {"loadBalancer": {"ingress": [{"ip": ip}]}}}));
        services
            .patch_status("lb", &PatchParams::default(), &status)
            .await
            .unwrap();
    }
    let ingress = services
        .get_status("lb")
        .await
        .unwrap()
        .status
        .unwrap()
        .load_balancer
        .unwrap()
        .ingress
        .unwrap();
    assert_eq!(ingress.len(), 1);
    assert_eq!(ingress[0].ip.as_deref(), Some("192.0.2.2"));
}

#[tokio::test]
async fn json_patch_tests_and_merge_patch_preconditions() {
    let (_sim, client) = start().await;
    let services = Api::<Service>::default_namespaced(client);
    let created = services
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    let failing = Patch::Json::<()>(
        serde_json::from_value(json!([
            {"op": "test", "path": "/spec/type", "value": "NodePort"},
            {"op": "replace", "path": "/spec/type", "value": "ClusterIP"}
        ]))
        .unwrap(),
    );
    assert_eq!(
        api_error(
            services
                .patch("lb", &PatchParams::default(), &failing)
                .await
        )
        .0,
        422
    );

    let labels = Patch::Merge(json!({"metadata": {"labels": {"tier": "edge"}}}));
    services
        .patch("lb", &PatchParams::default(), &labels)
        .await
        .unwrap();
    let stale = Patch::Merge(
        json!({"metadata": {"resourceVersion": created.resource_version(), "labels": {"tier": "x"}}}),
    );
    assert_eq!(
        api_error(services.patch("lb", &PatchParams::default(), &stale).await),
        (409, "Conflict".into())
    );
    let unchanged = services
        .patch("lb", &PatchParams::default(), &labels)
        .await
        .unwrap();
    let again = services
        .patch("lb", &PatchParams::default(), &labels)
        .await
        .unwrap();
    assert_eq!(
        unchanged.resource_version(),
        again.resource_version(),
        "no-op patches do not bump resourceVersion"
    );
}

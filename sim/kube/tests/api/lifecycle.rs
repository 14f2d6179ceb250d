//! Finalizers and deletion, status subresource separation, selectors, namespaces.

use crate::common::{api_error, service, start, typed};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Node, Service};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

const CLEANUP: &str = "service.kubernetes.io/load-balancer-cleanup";

#[tokio::test]
async fn finalizers_keep_a_deleted_object_until_the_last_one_is_removed() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let mut svc = service("lb", "LoadBalancer");
    svc.metadata.finalizers = Some(vec![CLEANUP.into(), "example.com/other".into()]);
    api.create(&PostParams::default(), &svc).await.unwrap();

    let deleted = api.delete("lb", &DeleteParams::background()).await.unwrap();
    let terminating = deleted
        .left()
        .expect("a pending delete answers with the object");
    assert!(terminating.metadata.deletion_timestamp.is_some());

    let add = Patch::Merge(
        json!({"metadata": {"finalizers": [CLEANUP, "example.com/other", "new/one"]}}),
    );
    assert_eq!(
        api_error(api.patch("lb", &PatchParams::default(), &add).await).0,
        422
    );

    let remove_one =
        Patch::Strategic(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [CLEANUP]}}));
    let still = api
        .patch_status("lb", &PatchParams::default(), &remove_one)
        .await
        .unwrap();
    assert_eq!(still.finalizers(), ["example.com/other"]);

    let remove_last = Patch::Json::<()>(
        serde_json::from_value(json!([
            {"op": "remove", "path": "/metadata/finalizers"}
        ]))
        .unwrap(),
    );
    api.patch("lb", &PatchParams::default(), &remove_last)
        .await
        .unwrap();
    assert_eq!(api_error(api.get("lb").await).0, 404);
}

#[tokio::test]
async fn status_writes_and_spec_writes_are_separate() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let created = api
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));

    let status = Patch::Merge(json!({
        "spec": {"type": "ClusterIP"},
        "metadata": {"finalizers": [CLEANUP]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}
    }));
    let patched = api
        .patch_status("lb", &PatchParams::default(), &status)
        .await
        .unwrap();
    assert_eq!(
        patched.spec.as_ref().unwrap().type_.as_deref(),
        Some("LoadBalancer"),
        "spec is ignored via /status"
    );
    assert_eq!(
        patched.finalizers(),
        [CLEANUP],
        "metadata is kept via /status"
    );
    let ingress = &patched
        .status
        .as_ref()
        .unwrap()
        .load_balancer
        .as_ref()
        .unwrap()
        .ingress
        .as_ref()
        .unwrap()[0];
    assert_eq!(ingress.ip.as_deref(), Some("192.0.2.10"));
    assert_eq!(
        ingress.ip_mode.as_deref(),
        Some("VIP"),
        "ipMode defaults to VIP"
    );
    assert_eq!(
        patched.metadata.generation,
        Some(1),
        "status writes do not bump generation"
    );

    let spec = Patch::Merge(json!({
        "spec": {"ports": [{"name": "http", "port": 8080}]},
        "status": {"loadBalancer": {"ingress": []}}
    }));
    let patched = api
        .patch("lb", &PatchParams::default(), &spec)
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().ports.unwrap()[0].port, 8080);
    assert_eq!(
        patched
            .status
            .unwrap()
            .load_balancer
            .unwrap()
            .ingress
            .unwrap()
            .len(),
        1,
        "status is ignored via the main resource"
    );
    assert_eq!(patched.metadata.generation, Some(2));
}

#[tokio::test]
async fn nodes_keep_status_on_create_and_guard_provider_id() {
    let (_sim, client) = start().await;
    let api = Api::<Node>::all(client);
    let node: Node = typed(json!({
        "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    }));
    let created = api.create(&PostParams::default(), &node).await.unwrap();
    assert_eq!(
        created.status.unwrap().conditions.unwrap()[0].type_,
        "Ready"
    );
    let set = Patch::Merge(json!({"spec": {"providerID": "vcd://a"}}));
    api.patch("n1", &PatchParams::default(), &set)
        .await
        .unwrap();
    let change = Patch::Merge(json!({"spec": {"providerID": "vcd://b"}}));
    assert_eq!(
        api_error(api.patch("n1", &PatchParams::default(), &change).await),
        (422, "Invalid".into())
    );
}

#[tokio::test]
async fn label_and_field_selectors_filter_lists() {
    let (_sim, client) = start().await;
    let maps = Api::<ConfigMap>::default_namespaced(client.clone());
    for (name, tier) in [("a", "web"), ("b", "db"), ("c", "cache")] {
        let cm: ConfigMap = typed(json!({"metadata": {"name": name, "labels": {"tier": tier}}}));
        maps.create(&PostParams::default(), &cm).await.unwrap();
    }
    let names = |list: kube::core::ObjectList<ConfigMap>| {
        list.items.iter().map(|o| o.name_any()).collect::<Vec<_>>()
    };
    let cases = [
        ("tier=web", vec!["a"]),
        ("tier!=web", vec!["b", "c"]),
        ("tier in (db,cache)", vec!["b", "c"]),
        ("tier notin (db)", vec!["a", "c"]),
        ("tier", vec!["a", "b", "c"]),
        ("!tier", vec![]),
    ];
    for (selector, expected) in cases {
        let listed = maps
            .list(&ListParams::default().labels(selector))
            .await
            .unwrap();
        assert_eq!(names(listed), expected, "selector {selector}");
    }
    let by_name = maps
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .unwrap();
    assert_eq!(names(by_name), ["b"]);
    assert_eq!(
        api_error(maps.list(&ListParams::default().fields("data.k=v")).await).0,
        400
    );

    let events = Api::<Event>::default_namespaced(client);
    for (name, target) in [("e1", "web"), ("e2", "db")] {
        let event: Event = typed(json!({
            "metadata": {"name": name},
            "involvedObject": {"kind": "Service", "name": target, "namespace": "default"},
            "reason": "Synced", "type": "Normal", "source": {"component": "service-controller"},
        }));
        events.create(&PostParams::default(), &event).await.unwrap();
    }
    let fields = "involvedObject.kind=Service,involvedObject.name=db,source=service-controller";
    let listed = events
        .list(&ListParams::default().fields(fields))
        .await
        .unwrap();
    assert_eq!(
        listed
            .items
            .iter()
            .map(|e| e.name_any())
            .collect::<Vec<_>>(),
        ["e2"]
    );
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_contents() {
    let (_sim, client) = start().await;
    let namespaces = Api::<Namespace>::all(client.clone());
    let ns = namespaces
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "team"}})),
        )
        .await
        .unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    let maps = Api::<ConfigMap>::namespaced(client, "team");
    maps.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "cfg"}})),
    )
    .await
    .unwrap();
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(api_error(maps.get("cfg").await).0, 404);
    assert_eq!(api_error(namespaces.get("team").await).0, 404);
}

//! The load-balancer lifecycle as the real API server shows it: create, status
//! patch, finalizer add, delete, finalizer removal, gone — with the same HTTP codes
//! and watch events (finalizer removal on a Terminating object is one DELETED).

use crate::common::{api_error, list_version, next, service, start};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

const CLEANUP: &str = "service.kubernetes.io/load-balancer-cleanup";

#[tokio::test]
async fn load_balancer_lifecycle_matches_the_real_server() {
    let (sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let version = list_version(&api).await;
    let mut events = api
        .watch(&WatchParams::default(), &version)
        .await
        .unwrap()
        .boxed();
    sim.clear_requests();

    api.create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    let status = Patch::Strategic(
        json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.7", "ipMode": "VIP"}]}}}),
    );
    api.patch_status("lb", &PatchParams::default(), &status)
        .await
        .unwrap();
    let add = Patch::Strategic(json!({"metadata": {"finalizers": [CLEANUP]}}));
    api.patch_status("lb", &PatchParams::default(), &add)
        .await
        .unwrap();
    let pending = api.delete("lb", &DeleteParams::default()).await.unwrap();
    assert!(
        pending
            .left()
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    let remove =
        Patch::Strategic(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [CLEANUP]}}));
    api.patch_status("lb", &PatchParams::default(), &remove)
        .await
        .unwrap();
    assert_eq!(api_error(api.get("lb").await).0, 404);

    let calls: Vec<(String, bool, u16)> = sim
        .requests()
        .into_iter()
        .map(|r| (r.method, r.path.ends_with("/status"), r.status))
        .collect();
    let expected = [
        ("POST", false, 201),
        ("PATCH", true, 200),
        ("PATCH", true, 200),
        ("DELETE", false, 200),
        ("PATCH", true, 200),
        ("GET", false, 404),
    ]
    .map(|(m, s, c)| (m.to_string(), s, c));
    assert_eq!(calls, expected);

    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(match next(&mut events).await.unwrap() {
            WatchEvent::Added(s) => (
                "ADDED",
                s.finalizers().to_vec(),
                s.metadata.deletion_timestamp.is_some(),
            ),
            WatchEvent::Modified(s) => (
                "MODIFIED",
                s.finalizers().to_vec(),
                s.metadata.deletion_timestamp.is_some(),
            ),
            WatchEvent::Deleted(s) => (
                "DELETED",
                s.finalizers().to_vec(),
                s.metadata.deletion_timestamp.is_some(),
            ),
            other => panic!("unexpected {other:?}"),
        });
    }
    let cleanup = vec![CLEANUP.to_string()];
    assert_eq!(
        seen,
        [
            ("ADDED", vec![], false),
            ("MODIFIED", vec![], false),
            ("MODIFIED", cleanup.clone(), false),
            ("MODIFIED", cleanup.clone(), true),
            // The emptying write is not stored: the object is deleted as it was.
            ("DELETED", cleanup, true),
        ]
    );
}

//! Create, read, update and delete for every served kind.

use crate::common::{api_error, start, typed};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Node, Secret, Service};
use k8s_openapi::api::events::v1::Event as EventV1;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use std::fmt::Debug;

/// Runs create → get → list → replace → delete → get (404) for one kind.
async fn round_trip<K>(api: Api<K>, object: K)
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
{
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .expect("create");
    let name = created.name_any();
    assert!(created.uid().is_some(), "uid is set");
    assert!(
        created.meta().creation_timestamp.is_some(),
        "creationTimestamp is set"
    );
    let first_version = created.resource_version().expect("resourceVersion is set");

    let fetched = api.get(&name).await.expect("get");
    assert_eq!(fetched.resource_version(), Some(first_version.clone()));
    let listed = api.list(&ListParams::default()).await.expect("list");
    assert!(listed.items.iter().any(|o| o.name_any() == name));

    let mut changed = fetched.clone();
    changed.labels_mut().insert("changed".into(), "yes".into());
    let replaced = api
        .replace(&name, &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_ne!(replaced.resource_version(), Some(first_version));
    assert_eq!(
        replaced.labels().get("changed").map(String::as_str),
        Some("yes")
    );

    api.delete(&name, &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(api_error(api.get(&name).await).0, 404);
}

#[tokio::test]
async fn every_kind_supports_crud() {
    let (_sim, client) = start().await;
    round_trip(
        Api::<Namespace>::all(client.clone()),
        typed(json!({"metadata": {"name": "team-a"}})),
    )
    .await;
    round_trip(
        Api::<Node>::all(client.clone()),
        typed(json!({"metadata": {"name": "node-1"}})),
    )
    .await;
    round_trip(
        Api::<Service>::default_namespaced(client.clone()),
        crate::common::service("web", "ClusterIP"),
    )
    .await;
    round_trip(
        Api::<ConfigMap>::default_namespaced(client.clone()),
        typed(json!({"metadata": {"name": "cfg"}, "data": {"k": "v"}})),
    )
    .await;
    round_trip(
        Api::<Secret>::default_namespaced(client.clone()),
        typed(json!({"metadata": {"name": "creds"}, "data": {"k": "dg=="}})),
    )
    .await;
    round_trip(
        Api::<Event>::default_namespaced(client.clone()),
        typed(json!({
            "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Service", "name": "web", "namespace": "default"},
            "reason": "EnsuringLoadBalancer", "message": "Ensuring load balancer", "type": "Normal",
        })),
    )
    .await;
    round_trip(
        Api::<EventV1>::default_namespaced(client.clone()),
        typed(json!({
            "metadata": {"name": "web.2"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "ccm", "reportingInstance": "ccm-1", "action": "Ensure",
            "reason": "EnsuredLoadBalancer", "type": "Normal",
            "regarding": {"kind": "Service", "name": "web", "namespace": "default"},
        })),
    )
    .await;
    round_trip(
        Api::<Lease>::namespaced(client.clone(), "kube-system"),
        typed(json!({"metadata": {"name": "cloud-controller-manager"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}})),
    )
    .await;
}

#[tokio::test]
async fn generate_name_gives_unique_names() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let template: ConfigMap = typed(json!({"metadata": {"generateName": "cfg-"}}));
    let a = api.create(&PostParams::default(), &template).await.unwrap();
    let b = api.create(&PostParams::default(), &template).await.unwrap();
    assert!(a.name_any().starts_with("cfg-") && a.name_any().len() == 9);
    assert_ne!(a.name_any(), b.name_any());
}

#[tokio::test]
async fn errors_carry_status_reason_and_code() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client.clone());
    let cm: ConfigMap = typed(json!({"metadata": {"name": "cfg"}}));
    api.create(&PostParams::default(), &cm).await.unwrap();
    assert_eq!(
        api_error(api.create(&PostParams::default(), &cm).await),
        (409, "AlreadyExists".into())
    );
    assert_eq!(
        api_error(api.get("missing").await),
        (404, "NotFound".into())
    );
    let bad_name: ConfigMap = typed(json!({"metadata": {"name": "Not_Valid"}}));
    assert_eq!(
        api_error(api.create(&PostParams::default(), &bad_name).await),
        (422, "Invalid".into())
    );
    let elsewhere = Api::<ConfigMap>::namespaced(client, "no-such-namespace");
    assert_eq!(
        api_error(elsewhere.create(&PostParams::default(), &cm).await).0,
        404
    );
}

#[tokio::test]
async fn stale_resource_version_is_a_conflict() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let created = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "cfg"}, "data": {"v": "1"}})),
        )
        .await
        .unwrap();
    let mut first = created.clone();
    first.data = Some([("v".to_string(), "2".to_string())].into());
    api.replace("cfg", &PostParams::default(), &first)
        .await
        .unwrap();
    let mut stale = created;
    stale.data = Some([("v".to_string(), "3".to_string())].into());
    assert_eq!(
        api_error(api.replace("cfg", &PostParams::default(), &stale).await),
        (409, "Conflict".into())
    );
    assert_eq!(api.get("cfg").await.unwrap().data.unwrap()["v"], "2");
}

#[tokio::test]
async fn both_event_apis_show_the_same_objects() {
    let (_sim, client) = start().await;
    let v1 = Api::<EventV1>::default_namespaced(client.clone());
    let event: EventV1 = typed(json!({
        "metadata": {"name": "web.1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "vcd-ccm", "reportingInstance": "ccm-1", "action": "Ensure",
        "reason": "EnsuredLoadBalancer", "note": "done", "type": "Normal",
        "regarding": {"kind": "Service", "name": "web", "namespace": "default"},
    }));
    v1.create(&PostParams::default(), &event).await.unwrap();
    let core = Api::<Event>::default_namespaced(client)
        .get("web.1")
        .await
        .unwrap();
    assert_eq!(core.involved_object.name.as_deref(), Some("web"));
    assert_eq!(core.reporting_component.as_deref(), Some("vcd-ccm"));
    assert_eq!(core.message.as_deref(), Some("done"));
    assert!(
        core.source.is_none(),
        "events.k8s.io/v1 leaves the core source empty"
    );
}

#[tokio::test]
async fn secret_string_data_becomes_data_and_immutable_config_is_enforced() {
    let (_sim, client) = start().await;
    let secrets = Api::<Secret>::default_namespaced(client.clone());
    let secret: Secret = typed(json!({"metadata": {"name": "s"}, "stringData": {"user": "admin"}}));
    let created = secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    assert_eq!(created.data.unwrap()["user"].0, b"admin");
    assert_eq!(created.type_.as_deref(), Some("Opaque"));

    let maps = Api::<ConfigMap>::default_namespaced(client);
    let frozen: ConfigMap =
        typed(json!({"metadata": {"name": "frozen"}, "immutable": true, "data": {"k": "v"}}));
    let mut changed = maps.create(&PostParams::default(), &frozen).await.unwrap();
    changed.data = Some([("k".to_string(), "other".to_string())].into());
    assert_eq!(
        api_error(
            maps.replace("frozen", &PostParams::default(), &changed)
                .await
        )
        .0,
        422
    );
}

#[tokio::test]
async fn a_request_body_over_3_mib_is_refused_as_the_api_server_does() {
    let (_sim, client) = start().await;
    let events: Api<Event> = Api::namespaced(client, "default");
    let event = |bytes: usize| -> Event {
        typed(json!({
            "metadata": {"name": format!("big-{bytes}")},
            "involvedObject": {"kind": "Service", "name": "web", "namespace": "default"},
            "reason": "Test",
            "message": "x".repeat(bytes),
        }))
    };
    let (code, _) = api_error(events.create(&PostParams::default(), &event(8 << 20)).await);
    assert_eq!(code, 413);
    events
        .create(&PostParams::default(), &event(1 << 20))
        .await
        .expect("a 1 MiB body is accepted");
}

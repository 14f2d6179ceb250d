//! TokenReview and SubjectAccessReview, as a component delegating
//! authentication and authorization sees them.

use crate::common::start;
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};

async fn token_review(client: &kube::Client, token: &str) -> Value {
    let review: TokenReview = serde_json::from_value(json!({"spec": {"token": token}})).unwrap();
    let created = Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .expect("the review is answered");
    serde_json::to_value(created.status).unwrap()
}

async fn allowed(client: &kube::Client, spec: Value) -> (bool, Option<String>) {
    let review: SubjectAccessReview = serde_json::from_value(json!({"spec": spec})).unwrap();
    let status = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .expect("the review is answered")
        .status
        .expect("a status");
    (status.allowed, status.reason)
}

fn get_path(user: &str, groups: &[&str], path: &str) -> Value {
    json!({"user": user, "groups": groups,
        "nonResourceAttributes": {"path": path, "verb": "get"}})
}

#[tokio::test]
async fn token_reviews_name_the_user_of_a_known_token_only() {
    let (sim, client) = start().await;
    let token = sim.service_account_token("monitoring", "prometheus");
    let status = token_review(&client, &token).await;
    assert_eq!(status["authenticated"], true);
    assert_eq!(
        status["user"]["username"],
        "system:serviceaccount:monitoring:prometheus"
    );
    let groups = status["user"]["groups"].as_array().unwrap();
    assert!(groups.contains(&json!("system:serviceaccounts:monitoring")));
    sim.add_token("admin-token", "admin", &["system:masters"]);
    let admin = token_review(&client, "admin-token").await;
    assert_eq!(
        admin["user"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    let unknown = token_review(&client, "not-a-token").await;
    assert_eq!(unknown["authenticated"], Value::Null);
    assert_eq!(unknown["error"], "invalid bearer token");
}

#[tokio::test]
async fn access_reviews_follow_cluster_role_bindings() {
    let (sim, client) = start().await;
    sim.seed(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "metrics-reader"},
        "rules": [{"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]},
                  {"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["get", "list"]}]}))
        .unwrap();
    sim.seed(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "prometheus-metrics"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "namespace": "monitoring", "name": "prometheus"},
                     {"kind": "Group", "name": "ops"}]}))
        .unwrap();
    let prometheus = "system:serviceaccount:monitoring:prometheus";
    let (yes, reason) = allowed(&client, get_path(prometheus, &[], "/metrics")).await;
    assert!(yes);
    assert_eq!(
        reason.as_deref(),
        Some(
            "RBAC: allowed by ClusterRoleBinding \"prometheus-metrics\" of ClusterRole \"metrics-reader\" to ServiceAccount \"prometheus\""
        )
    );
    assert!(
        allowed(&client, get_path("alice", &["ops"], "/debug/pprof"))
            .await
            .0
    );
    assert!(
        !allowed(&client, get_path("alice", &["devs"], "/metrics"))
            .await
            .0
    );
    assert!(
        !allowed(&client, get_path(prometheus, &[], "/metrics/slis"))
            .await
            .0
    );
    let post =
        json!({"user": prometheus, "nonResourceAttributes": {"path": "/metrics", "verb": "post"}});
    assert!(!allowed(&client, post).await.0);
    assert!(
        allowed(&client, get_path("root", &["system:masters"], "/anything"))
            .await
            .0
    );

    let nodes = |verb: &str, subresource: &str| {
        json!({"user": prometheus, "resourceAttributes":
            {"verb": verb, "group": "", "resource": "nodes", "subresource": subresource}})
    };
    assert!(allowed(&client, nodes("list", "")).await.0);
    assert!(allowed(&client, nodes("get", "status")).await.0);
    assert!(!allowed(&client, nodes("delete", "")).await.0);
}

#[tokio::test]
async fn a_review_without_a_subject_is_refused() {
    let (_sim, client) = start().await;
    let review: SubjectAccessReview = serde_json::from_value(json!({"spec":
        {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}}))
    .unwrap();
    let error = Api::<SubjectAccessReview>::all(client)
        .create(&PostParams::default(), &review)
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error}")
    };
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
}

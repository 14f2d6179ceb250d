//! The HTTPS port's delegated authentication and authorization against
//! kubesim's TokenReview and SubjectAccessReview: health paths are open, a
//! bad token is 401, `/metrics` needs a user RBAC allows, and an API server
//! that cannot answer is a 500, never an open door.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use kubesim::KubeSim;
use prometheus_client::registry::Registry as MetricRegistry;
use serde::Deserialize;
use serde_json::json;
use vcd_ccm::access::{DEFAULT_ALWAYS_ALLOW_PATHS, Delegated};
use vcd_ccm::serve::{self, Certificate, Probes, ServeConfig, Server, Transport};

async fn serve(kube: &KubeSim) -> Server {
    let config = ServeConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        transport: Transport::Https(Certificate::SelfSigned),
    };
    let paths = DEFAULT_ALWAYS_ALLOW_PATHS.map(String::from).to_vec();
    let mut registry = MetricRegistry::default();
    let access = Arc::new(Delegated::new(kube.client().unwrap(), paths, &mut registry));
    let metrics = Arc::new(RwLock::new(registry));
    serve::start(config, Probes::default(), metrics, Some(access), None)
        .await
        .expect("the server starts")
}

/// Status and body of a GET, with the bearer token if given.
async fn get(server: &Server, path: &str, token: Option<&str>) -> (u16, String) {
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut request = client.get(format!("{}{path}", server.url()));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("an answer");
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The metrics reader role of `manifests/rbac.yaml`, bound to `monitoring/prometheus`.
fn grant_metrics_to_prometheus(kube: &KubeSim) {
    let rbac = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../manifests/rbac.yaml"
    ))
    .expect("rbac.yaml");
    let reader = serde_yaml_ng::Deserializer::from_str(&rbac)
        .map(|document| serde_json::Value::deserialize(document).unwrap())
        .find(|object| object["metadata"]["name"] == "vcd-ccm-metrics-reader")
        .expect("rbac.yaml has the metrics reader role");
    kube.seed(reader).unwrap();
    kube.seed(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "prometheus-reads-vcd-ccm"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": "vcd-ccm-metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "namespace": "monitoring", "name": "prometheus"}]}),
    )
    .unwrap();
}

#[tokio::test]
async fn metrics_need_a_user_rbac_allows_and_health_is_open() {
    let kube = KubeSim::start().await.unwrap();
    grant_metrics_to_prometheus(&kube);
    let server = serve(&kube).await;
    let prometheus = kube.service_account_token("monitoring", "prometheus");
    let stranger = kube.service_account_token("default", "app");
    kube.add_token("admin-token", "admin", &["system:masters"]);

    assert_eq!(get(&server, "/healthz", None).await, (200, "ok".into()));
    let (status, _) = get(&server, "/readyz", Some(&stranger)).await;
    assert_eq!(status, 200);
    assert_eq!(
        get(&server, "/metrics", None).await,
        (
            403,
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"\n".into()
        )
    );
    let (status, body) = get(&server, "/metrics", Some(&stranger)).await;
    assert_eq!(status, 403);
    assert!(body.contains("system:serviceaccount:default:app"), "{body}");
    assert_eq!(
        get(&server, "/metrics", Some("not-a-token")).await,
        (401, "Unauthorized\n".into())
    );
    assert_eq!(
        get(&server, "/healthz", Some("not-a-token")).await.0,
        401,
        "a bad token is refused even where anonymous users are let in"
    );
    for token in [&prometheus, "admin-token"] {
        let (status, body) = get(&server, "/metrics", Some(token)).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.ends_with("# EOF\n"), "{body}");
    }
    // The token never shows in what the server answers.
    let (_, body) = get(&server, "/metrics", Some(&stranger)).await;
    assert!(!body.contains(&stranger));
}

#[tokio::test]
async fn an_api_server_that_cannot_answer_denies_with_500() {
    let kube = KubeSim::start().await.unwrap();
    let server = serve(&kube).await;
    let token = kube.service_account_token("monitoring", "prometheus");
    drop(kube);
    let (status, body) = get(&server, "/metrics", Some(&token)).await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body.starts_with("Internal Server Error: \"/metrics\": TokenReview: "),
        "{body}"
    );
    let (status, body) = get(&server, "/metrics", None).await;
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("SubjectAccessReview: "), "{body}");
    assert_eq!(get(&server, "/healthz", None).await.0, 200);
}

fn reviews(kube: &KubeSim, resource: &str) -> usize {
    let requests = kube.requests();
    requests
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(resource))
        .count()
}

#[tokio::test]
async fn a_refused_token_or_request_is_reviewed_once_within_its_ttl() {
    let kube = KubeSim::start().await.unwrap();
    let server = serve(&kube).await;
    let stranger = kube.service_account_token("default", "app");
    for _ in 0..5 {
        assert_eq!(get(&server, "/metrics", Some("not-a-token")).await.0, 401);
        assert_eq!(get(&server, "/metrics", Some(&stranger)).await.0, 403);
    }
    assert_eq!(reviews(&kube, "/tokenreviews"), 2, "one per token");
    assert_eq!(reviews(&kube, "/subjectaccessreviews"), 1, "one denial");
    let (_, metrics) = get(&server, "/metrics", Some(&stranger)).await;
    assert!(!metrics.contains("not-a-token"));
}

#[tokio::test]
async fn unknown_paths_are_404_before_any_review() {
    let kube = KubeSim::start().await.unwrap();
    let server = serve(&kube).await;
    for path in ["/", "/livez", "/debug/pprof", "/metrics/x", "/readyz/x"] {
        for token in [None, Some("not-a-token")] {
            assert_eq!(get(&server, path, token).await.0, 404, "{path}");
        }
    }
    assert_eq!(reviews(&kube, "/tokenreviews"), 0);
    assert_eq!(reviews(&kube, "/subjectaccessreviews"), 0);
    assert_eq!(get(&server, "/metrics", Some("not-a-token")).await.0, 401);
    assert_eq!(
        reviews(&kube, "/tokenreviews"),
        1,
        "served paths are reviewed"
    );
}

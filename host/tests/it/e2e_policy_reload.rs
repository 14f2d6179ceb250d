//! Provider policies changing under a running controller: a Service whose
//! governing policy changes (a reload, its Namespace relabelled) is ensured
//! again; a refused reload leaves the previous version deciding and says so
//! on the Service.

use std::path::Path;
use std::time::Duration;

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::sha256_hex;

const POOL_LABEL: &str = "vcd-ccm.io/address-pool";

/// The example policy, pinned, for namespaces with `label`.
fn write_manifest(dir: &Path, pin: &str, label: &str) {
    let manifest = format!(
        "policies:
  - name: namespace-pools
    sha256: {pin}
    selector:
      namespaceSelector:
        matchExpressions:
          - {{key: {label}, operator: Exists}}
"
    );
    std::fs::write(dir.join("policies.yaml"), manifest).expect("the manifest is written");
}

/// The algorithm of the Service's (only) pool.
fn pool_algorithm(cluster: &Cluster, uid: &str) -> Option<String> {
    cluster.pool_algorithms(uid).into_iter().next().flatten()
}

/// A cluster whose policy directory holds the example policy, selecting
/// namespaces labelled [`POOL_LABEL`]; one node.
async fn cluster_with_example_policy(dir: &Path) -> (Cluster, String) {
    let wasm = std::fs::read(format!("{ARTIFACTS_DIR}/namespace_pools.wasm")).expect("built");
    std::fs::write(dir.join("namespace-pools.wasm"), &wasm).expect("copied");
    let pin = sha256_hex(&wasm);
    write_manifest(dir, &pin, POOL_LABEL);
    let cluster = Cluster::start_with(fast_config(), |cluster| {
        cluster.policy_dir = Some(dir.to_path_buf());
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    (cluster, pin)
}

/// `tenant/app` in a namespace the example policy selects, once it has an
/// address; returns its uid.
async fn tenant_service(cluster: &Cluster) -> String {
    cluster
        .kube
        .seed(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "tenant", "labels": {POOL_LABEL: "edge1"}}}))
        .expect("the namespace");
    let uid = cluster
        .create_service("tenant", lb_service("app", &[(8080, 30080)]))
        .await;
    cluster.wait_for_ip("tenant", "app").await;
    assert_eq!(
        pool_algorithm(cluster, &uid).as_deref(),
        Some("LEAST_CONNECTIONS")
    );
    uid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_waits_for_its_namespace_to_reach_the_cache() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let (cluster, _) = cluster_with_example_policy(dir.path()).await;
    // The Namespace reaches the controller well after its Service: ensuring
    // before it arrives would pick the default policy, then move the pool.
    cluster
        .kube
        .faults()
        .lag_watches("namespaces", Duration::from_millis(500));
    tenant_service(&cluster).await;
    assert_eq!(
        cluster.vcd.count("POST /cloudapi/1.0.0/loadBalancer/pools"),
        1
    );
    assert_eq!(
        cluster
            .vcd
            .count("PUT /cloudapi/1.0.0/loadBalancer/pools/{id}"),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relabelling_a_namespace_moves_its_services_between_policies() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let (cluster, _) = cluster_with_example_policy(dir.path()).await;
    cluster
        .kube
        .seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
        .expect("the namespace");
    let uid = cluster
        .create_service("team", lb_service("app", &[(8080, 30080)]))
        .await;
    cluster.wait_for_ip("team", "app").await;
    assert_eq!(
        pool_algorithm(&cluster, &uid).as_deref(),
        Some("ROUND_ROBIN")
    );

    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    let label = |value: serde_json::Value| {
        let namespaces = namespaces.clone();
        async move {
            let patch = json!({"metadata": {"labels": {POOL_LABEL: value}}});
            namespaces
                .patch("team", &PatchParams::default(), &Patch::Merge(patch))
                .await
                .expect("the namespace is relabelled");
        }
    };
    label(json!("edge1")).await;
    wait_for("the example policy's algorithm", || async {
        (pool_algorithm(&cluster, &uid).as_deref() == Some("LEAST_CONNECTIONS")).then_some(())
    })
    .await;

    label(serde_json::Value::Null).await;
    wait_for("the default policy's algorithm again", || async {
        (pool_algorithm(&cluster, &uid).as_deref() == Some("ROUND_ROBIN")).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_reach_the_services_they_govern() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let (cluster, pin) = cluster_with_example_policy(dir.path()).await;
    let uid = tenant_service(&cluster).await;

    // A wrong pin is refused: the Service hears of it, VCD keeps its objects.
    write_manifest(dir.path(), &"0".repeat(64), POOL_LABEL);
    let message = cluster
        .wait_for_event("tenant", "app", "LoadBalancerPolicyReloadFailed")
        .await;
    assert!(
        message.starts_with("policy namespace-pools was not reloaded: "),
        "{message}"
    );
    assert!(message.contains("sha256"), "{message}");
    assert_eq!(
        pool_algorithm(&cluster, &uid).as_deref(),
        Some("LEAST_CONNECTIONS")
    );

    // The policy no longer selects the namespace: the default policy decides.
    write_manifest(dir.path(), &pin, "example.com/other");
    wait_for("the default policy's algorithm", || async {
        (pool_algorithm(&cluster, &uid).as_deref() == Some("ROUND_ROBIN")).then_some(())
    })
    .await;
}

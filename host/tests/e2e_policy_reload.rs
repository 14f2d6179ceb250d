//! Provider policies changing under a running controller: a Service whose
//! governing policy changes is ensured again; a refused reload leaves the
//! previous version deciding and says so on the Service.

mod e2e_support;
mod lb_support;
mod poll;
mod vcd_support;

use std::path::Path;

use e2e_support::{Cluster, fast_config, lb_service, wait_for};
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
    let needle = format!(" uid={uid}");
    cluster.vcd.with_world(|w| {
        w.pools
            .iter()
            .find(|p| {
                p.description
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&needle)
            })
            .and_then(|p| p.algorithm.clone())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_reach_the_services_they_govern() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let wasm = std::fs::read(format!("{ARTIFACTS_DIR}/namespace_pools.wasm")).expect("built");
    std::fs::write(dir.path().join("namespace-pools.wasm"), &wasm).expect("copied");
    let pin = sha256_hex(&wasm);
    write_manifest(dir.path(), &pin, POOL_LABEL);
    let cluster = Cluster::start_with(fast_config(), |cluster| {
        cluster.policy_dir = Some(dir.path().to_path_buf());
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
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
        pool_algorithm(&cluster, &uid).as_deref(),
        Some("LEAST_CONNECTIONS")
    );

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

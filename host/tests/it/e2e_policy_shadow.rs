//! Shadow policies and captured inputs through the service controller: a
//! shadow is evaluated beside the governing policy, only the governing
//! decision reaches VCD, a difference is an Event and a metric, a failing
//! shadow changes nothing; a Service that asks for it has its decision input
//! captured as a suite that passes against the policy that decided.

use std::path::Path;

use serde_json::json;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::sha256_hex;
use vcd_ccm::policy::suite::{SuiteRunner, report};

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::lb;

/// Copies the built component `artifact` into `dir` as `<name>.wasm` and
/// returns its pin.
fn install(dir: &Path, artifact: &str, name: &str) -> String {
    let wasm = std::fs::read(format!("{ARTIFACTS_DIR}/{artifact}.wasm")).expect("built");
    std::fs::write(dir.join(format!("{name}.wasm")), &wasm).expect("copied");
    sha256_hex(&wasm)
}

/// A cluster whose policy directory holds `manifest`; one node.
async fn cluster_with(dir: &Path, manifest: &str) -> Cluster {
    std::fs::write(dir.join("policies.yaml"), manifest).expect("the manifest is written");
    let cluster = Cluster::start_with(fast_config(), |cluster| {
        cluster.policy_dir = Some(dir.to_path_buf());
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
}

fn shadow_counter(cluster: &Cluster, shadow: &str, result: &str) -> u64 {
    let series = format!(
        "policy_shadow_decisions_total{{policy=\"{shadow}\",shadows=\"default\",result=\"{result}\"}} "
    );
    cluster
        .metrics_text()
        .lines()
        .find_map(|line| line.strip_prefix(&series)?.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_differs_is_reported_while_the_governing_decision_is_applied() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let pin = install(dir.path(), "namespace_pools", "namespace-pools");
    let manifest = format!(
        "policies:\n- name: namespace-pools\n  sha256: {pin}\n  mode: shadow\n  shadows: default\n"
    );
    let cluster = cluster_with(dir.path(), &manifest).await;
    // A namespace the example policy serves: it decides, and otherwise.
    cluster
        .kube
        .seed(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "tenant", "labels": {"vcd-ccm.io/address-pool": "edge1"}}}))
        .expect("the namespace");
    let uid = cluster
        .create_service("tenant", lb_service("web", &[(8080, 30080)]))
        .await;
    cluster.wait_for_ip("tenant", "web").await;
    // The default policy's round robin, not the example's least connections.
    assert_eq!(
        cluster.pool_algorithms(&uid),
        [Some("ROUND_ROBIN".to_string())]
    );
    let message = cluster
        .wait_for_event("tenant", "web", "ShadowPolicyDiffers")
        .await;
    assert!(
        message.starts_with("shadow policy namespace-pools would decide otherwise than default: "),
        "{message}"
    );
    assert!(
        message.contains("- algorithm: round-robin; + algorithm: least-connections"),
        "{message}"
    );
    wait_for("the difference counted", || async {
        (shadow_counter(&cluster, "namespace-pools", "different") >= 1).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_shadow_never_affects_the_service() {
    let dir = tempfile::tempdir().expect("a policy directory");
    let pin = install(dir.path(), "misbehaving", "misbehaving");
    let manifest = format!(
        "policies:\n- name: misbehaving\n  sha256: {pin}\n  config: trap\n  mode: shadow\n  shadows: default\n"
    );
    let cluster = cluster_with(dir.path(), &manifest).await;
    cluster
        .create_service("default", lb_service("web", &[(8080, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster
        .wait_for_event("default", "web", "EnsuredLoadBalancer")
        .await;
    wait_for("the failure counted", || async {
        (shadow_counter(&cluster, "misbehaving", "failed") >= 1).then_some(())
    })
    .await;
    let events = cluster.events("default", "web").await;
    assert!(
        events.iter().all(
            |(reason, _)| reason != "ShadowPolicyDiffers" && reason != "SyncLoadBalancerFailed"
        ),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captured_input_is_a_suite_the_deciding_policy_passes() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut web = lb_service("web", &[(8080, 30080)]);
    web["metadata"]["annotations"] = json!({"vcd-ccm.io/capture-policy-input": "true"});
    cluster.create_service("default", web).await;
    cluster
        .create_service("default", lb_service("other", &[(8081, 30081)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster.wait_for_ip("default", "other").await;
    let captures = cluster
        .policies
        .clone()
        .expect("the controller runs")
        .clone();
    assert_eq!(captures.captures().list(), "default/web\n");
    assert!(captures.captures().suite("default", "other").is_none());
    let suite = captures
        .captures()
        .suite("default", "web")
        .expect("captured");
    assert!(suite.contains("policy: default"), "{suite}");
    assert!(suite.contains("free-count"), "{suite}");

    let dir = tempfile::tempdir().expect("a suite directory");
    let file = dir.path().join("captured.yaml");
    std::fs::write(&file, &suite).expect("the suite is written");
    // The runner blocks on the policy engine's runtime: off this one.
    let (counts, text) = tokio::task::spawn_blocking(move || {
        let mut runner = SuiteRunner::new(lb::policy_engine());
        let results = runner
            .run_file(&file, None)
            .expect("the captured suite runs");
        let mut text = Vec::new();
        report::text(&mut text, &results).expect("a report");
        (
            report::counts(&results),
            String::from_utf8_lossy(&text).into_owned(),
        )
    })
    .await
    .expect("the suite ran");
    assert_eq!(counts, (1, 0), "{text}");
}

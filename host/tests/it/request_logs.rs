//! What the CCM writes, recorded: the demo through the binary and a serial
//! Service lifecycle through the real controller, normalised and compared
//! with `host/tests/golden/` (see `support::golden`). A change of the code's
//! shape must leave both logs as they are.

use std::process::Command;

use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service};
use crate::support::golden::{self, Normaliser, Order};
use crate::support::lb::{blocks_scenario, spaces_scenario};
use crate::support::objects::ServiceEdits;

const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";
const CERT_ALIAS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";
const SHARING_KEY: &str = "vcd-ccm.io/sharing-key";

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[test]
fn the_demo_writes_what_it_wrote() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let logs = dir.path().join("logs");
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["demo", "--once", "--timeout", "120s", "--kubeconfig-out"])
        .arg(dir.path().join("demo.kubeconfig"))
        .arg("--request-log")
        .arg(&logs)
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let entries: Vec<vcdsim::LogEntry> = read_jsonl(&logs.join("vcd.jsonl"));
    let mut normaliser = Normaliser::new(Order::Concurrent);
    let writes = golden::vcd_writes(&entries, &mut normaliser);
    golden::assert_matches("demo.vcd", &writes);
    let records: Vec<kubesim::RequestRecord> = read_jsonl(&logs.join("kube.jsonl"));
    golden::assert_matches("demo.kube", &golden::kube_writes(&records, &mut normaliser));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_service_lifecycle_writes_what_it_wrote() {
    serial_lifecycle(blocks_scenario(), "service-lifecycle").await;
}

/// The same on an IP Space: allocations made, claimed, shared and released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_service_lifecycle_on_ip_spaces_writes_what_it_wrote() {
    serial_lifecycle(spaces_scenario(), "service-lifecycle-spaces").await;
}

/// Below API 37.2 an IP Space picks the address it allocates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_service_lifecycle_on_ip_spaces_before_37_2_writes_what_it_wrote() {
    let mut scenario = spaces_scenario();
    scenario.api_versions = vec!["37.0".into(), "37.1".into()];
    serial_lifecycle(scenario, "service-lifecycle-spaces-37.1").await;
}

/// One worker, one change at a time: the order of the writes is part of
/// what is recorded.
async fn serial_lifecycle(scenario: vcdsim::Scenario, golden: &str) {
    let config = vcd_ccm::controllers::service::ServiceControllerConfig {
        workers: 1,
        ..fast_config()
    };
    let mut cluster = Cluster::start_on(scenario, config.clone(), |_| {}).await;
    // The Nodes are in the controller's first list, not a later update.
    cluster.controller_stop();
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    cluster.start_controller(config).await;
    cluster.vcd.reset_log();
    cluster.kube.clear_requests();

    let mut web = lb_service("web", &[(80, 30080), (443, 30443)]);
    web["metadata"]["annotations"] = json!({SSL_PORTS: "443", CERT_ALIAS: "my-cert"});
    cluster.create_service("default", web).await;
    cluster.wait_for_ip("default", "web").await;
    for (name, protocol, node_port) in [("dns", "UDP", 30053), ("dns-tcp", "TCP", 30054)] {
        let mut dns = lb_service(name, &[(53, node_port)]);
        dns["spec"]["ports"][0]["protocol"] = json!(protocol);
        dns["metadata"]["annotations"] = json!({SHARING_KEY: "dns"});
        cluster.create_service("default", dns).await;
        cluster.wait_for_ip("default", name).await;
    }
    let mut ranged = lb_service("ranged", &[(8443, 30843)]);
    ranged["spec"]["loadBalancerSourceRanges"] = json!(["198.51.100.0/24"]);
    cluster.create_service("default", ranged).await;
    cluster.wait_for_ip("default", "ranged").await;

    cluster
        .patch_service(
            "default",
            "web",
            json!({"spec": {"ports": [
                {"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 30080},
                {"name": "p443", "port": 443, "protocol": "TCP", "nodePort": 30443},
                {"name": "p8080", "port": 8080, "protocol": "TCP", "nodePort": 30808}
            ]}}),
        )
        .await;
    crate::support::cluster::wait_for("web's port 8080 served", || async {
        cluster
            .vcd
            .with_world(|w| {
                w.virtual_services
                    .iter()
                    .any(|vs| vs.name.ends_with("-tcp-8080"))
            })
            .then_some(())
    })
    .await;
    for name in ["dns-tcp", "web", "dns", "ranged"] {
        cluster.delete_service("default", name).await;
        cluster.wait_for_gone("default", name).await;
    }

    let mut normaliser = Normaliser::new(Order::Serial);
    let vcd = golden::vcd_writes(&cluster.vcd.requests(), &mut normaliser);
    golden::assert_matches(&format!("{golden}.vcd"), &vcd);
    let kube = golden::kube_writes(&cluster.kube.requests(), &mut normaliser);
    golden::assert_matches(&format!("{golden}.kube"), &kube);
}

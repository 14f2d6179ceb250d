//! Drives the real kubectl binary against kubesim.

use crate::common::{WAIT, start, typed};
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, PostParams};
use std::path::Path;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn kubectl_available() -> bool {
    std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

async fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = tokio::time::timeout(
        WAIT,
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output(),
    )
    .await
    .expect("kubectl finishes in time")
    .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "kubectl {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: LoadBalancer
  selector: {app: web}
  ports:
  - {name: http, port: 80}
";

#[tokio::test]
async fn kubectl_works_against_kubesim() {
    if !kubectl_available() {
        eprintln!(
            "SKIPPED kubectl_works_against_kubesim: kubectl is not on PATH (.ci/run installs it)"
        );
        return;
    }
    let (sim, client) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let manifest = dir.path().join("svc.yaml");
    std::fs::write(&manifest, SERVICE).unwrap();

    assert!(
        kubectl(&kubeconfig, &["get", "services"])
            .await
            .contains("kubernetes")
    );
    assert!(
        kubectl(&kubeconfig, &["create", "-f", manifest.to_str().unwrap()])
            .await
            .contains("service/web created")
    );
    std::fs::write(
        &manifest,
        format!("{SERVICE}  - {{name: https, port: 443}}\n"),
    )
    .unwrap();
    assert!(
        kubectl(&kubeconfig, &["apply", "-f", manifest.to_str().unwrap()])
            .await
            .contains("configured")
    );
    kubectl(
        &kubeconfig,
        &[
            "patch",
            "service",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"sessionAffinity":"ClientIP"}}"#,
        ],
    )
    .await;
    kubectl(&kubeconfig, &["label", "service", "web", "tier=front"]).await;
    kubectl(&kubeconfig, &["annotate", "service", "web", "note=hello"]).await;
    let svc: Service = sim
        .get_typed(Some("default"), "web")
        .unwrap()
        .expect("web exists");
    let spec = svc.spec.unwrap();
    assert_eq!(spec.ports.unwrap().len(), 2);
    assert_eq!(spec.session_affinity.as_deref(), Some("ClientIP"));
    assert_eq!(svc.metadata.labels.unwrap()["tier"], "front");
    assert_eq!(svc.metadata.annotations.unwrap()["note"], "hello");
    let listed = kubectl(
        &kubeconfig,
        &["get", "svc", "-l", "tier=front", "-o", "name"],
    )
    .await;
    assert_eq!(listed.trim(), "service/web");

    let mut watch = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args([
            "get",
            "configmaps",
            "-w",
            "-o",
            "name",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let maps = Api::<ConfigMap>::default_namespaced(client);
    maps.create(
        &PostParams::default(),
        &typed(serde_json::json!({"metadata": {"name": "watched"}})),
    )
    .await
    .unwrap();
    let seen = tokio::time::timeout(WAIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("watched") {
                return line;
            }
        }
        String::new()
    })
    .await
    .expect("kubectl get -w shows the new object");
    assert_eq!(seen.trim(), "configmap/watched");
    watch.kill().await.unwrap();

    assert!(
        kubectl(&kubeconfig, &["delete", "service", "web"])
            .await
            .contains("deleted")
    );
    assert!(
        sim.get_typed::<Service>(Some("default"), "web")
            .unwrap()
            .is_none()
    );
}

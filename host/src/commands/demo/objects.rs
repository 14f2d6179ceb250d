//! The Kubernetes objects the demo creates: a Node per VM, as a kubelet with
//! `--cloud-provider=external` registers it, seven Services (one limited to
//! source ranges, which the managed gateway firewall enforces; one keeping
//! each client on one node by `sessionAffinity: ClientIP` and redirecting
//! plain HTTP to its HTTPS port by `vcd-ccm.io/https-redirect`; one serving
//! HTTPS with the certificate of a `kubernetes.io/tls` Secret; a UDP and a
//! TCP DNS Service sharing one address by their sharing key; one with an
//! IPv4 and an IPv6 address) and that Secret, as cert-manager would leave
//! it.

use anyhow::Context;
use k8s_openapi::api::core::v1::{Namespace, Node, Secret, Service};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use super::setup::{POOL_LABEL, UDP_LABEL};
use crate::controllers::node::UNINITIALIZED_TAINT_KEY;
use crate::lb::SHARING_KEY_ANNOTATION;

pub const TENANT_NAMESPACE: &str = "tenant-a";
/// The TLS Secret the `store` Service's HTTPS port serves.
const STORE_SECRET: &str = "store-tls";

/// Hostname address only and the uninitialized taint: the cloud node
/// controller fills in the rest.
fn node(name: &str) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": name});
    if name.starts_with("control-plane") {
        labels["node-role.kubernetes.io/control-plane"] = json!("");
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": [{
            "key": UNINITIALIZED_TAINT_KEY, "value": "true", "effect": "NoSchedule"
        }]},
        "status": {
            "addresses": [{"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": "v1.31.4", "osImage": "Ubuntu 24.04 LTS",
                "containerRuntimeVersion": "containerd://1.7.24", "kernelVersion": "6.8.0",
                "architecture": "amd64", "operatingSystem": "linux", "bootID": "", "machineID": "",
                "systemUUID": "", "kubeProxyVersion": ""}
        }
    })
}

fn service(name: &str, annotations: Value, ports: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"type": "LoadBalancer", "selector": {"app": name}, "ports": ports}
    })
}

/// `service`, reachable only from `ranges` (the gateway firewall enforces them).
fn restricted(mut service: Value, ranges: &[&str]) -> Value {
    service["spec"]["loadBalancerSourceRanges"] = json!(ranges);
    service
}

/// `service` with an address of each family.
fn dual_stack(mut service: Value) -> Value {
    service["spec"]["ipFamilyPolicy"] = json!("RequireDualStack");
    service["spec"]["ipFamilies"] = json!(["IPv4", "IPv6"]);
    service
}

/// `service`, keeping each client on one node for NSX ALB's client-IP
/// persistence timeout (5 minutes), which the Service states.
fn sticky(mut service: Value) -> Value {
    service["spec"]["sessionAffinity"] = json!("ClientIP");
    service["spec"]["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 300}});
    service
}

/// (namespace, Service).
pub fn services() -> Vec<(&'static str, Value)> {
    vec![
        (
            "default",
            restricted(
                service(
                    "web",
                    json!({}),
                    json!([{"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "http"}]),
                ),
                &["198.51.100.0/24", "192.0.2.0/24"],
            ),
        ),
        (
            "default",
            sticky(service(
                "shop",
                json!({
                    "service.beta.kubernetes.io/vcloud-avi-ssl-ports": "443",
                    "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias": "my-cert",
                    "vcd-ccm.io/https-redirect": "true"
                }),
                json!([
                    {"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "http"},
                    {"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "https"}
                ]),
            )),
        ),
        (
            "default",
            service(
                "store",
                json!({"vcd-ccm.io/tls-secret": format!("443={STORE_SECRET}")}),
                json!([{"name": "https", "port": 443, "protocol": "TCP"}]),
            ),
        ),
        (
            "default",
            service(
                "dns",
                json!({SHARING_KEY_ANNOTATION: "dns"}),
                json!([{"name": "dns", "port": 53, "protocol": "UDP"}]),
            ),
        ),
        (
            "default",
            service(
                "dns-tcp",
                json!({SHARING_KEY_ANNOTATION: "dns"}),
                json!([{"name": "dns-tcp", "port": 53, "protocol": "TCP"}]),
            ),
        ),
        (
            "default",
            dual_stack(service(
                "portal",
                json!({}),
                json!([{"name": "http", "port": 8080, "protocol": "TCP"}]),
            )),
        ),
        (
            TENANT_NAMESPACE,
            service(
                "game",
                json!({}),
                json!([
                    {"name": "game-tcp", "port": 7777, "protocol": "TCP"},
                    {"name": "game-udp", "port": 7777, "protocol": "UDP"}
                ]),
            ),
        ),
    ]
}

/// Creates the tenant namespace (labelled for the example policy, whose
/// pool is the gateway `edge1`), the Nodes and the Services.
pub async fn create(client: &kube::Client, vms: &[String]) -> anyhow::Result<()> {
    let namespace: Namespace = serde_json::from_value(json!({
        "metadata": {"name": TENANT_NAMESPACE, "labels": {POOL_LABEL: "edge1", UDP_LABEL: "true"}}
    }))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .context("creating the tenant namespace")?;
    for vm in vms {
        let node: Node = serde_json::from_value(node(vm))?;
        Api::<Node>::all(client.clone())
            .create(&PostParams::default(), &node)
            .await
            .with_context(|| format!("creating Node {vm}"))?;
    }
    Api::<Secret>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &tls_secret()?)
        .await
        .context("creating the TLS Secret")?;
    for (namespace, body) in services() {
        let service: Service = serde_json::from_value(body)?;
        Api::<Service>::namespaced(client.clone(), namespace)
            .create(&PostParams::default(), &service)
            .await
            .context("creating a Service")?;
    }
    Ok(())
}

/// A `kubernetes.io/tls` Secret with a new self-signed certificate.
fn tls_secret() -> anyhow::Result<Secret> {
    let pair = rcgen::generate_simple_self_signed(vec!["store.example".to_string()])
        .context("generating the demo's TLS certificate")?;
    Ok(serde_json::from_value(json!({
        "metadata": {"name": STORE_SECRET},
        "type": "kubernetes.io/tls",
        "stringData": {"tls.crt": pair.cert.pem(), "tls.key": pair.signing_key.serialize_pem()}
    }))?)
}

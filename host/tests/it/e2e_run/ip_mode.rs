//! The address's mode and hostname through `vcd-ccm run` (contract 0.4.0,
//! `vcd-ccm.io/ip-mode`, `vcd-ccm.io/hostname`): `VIP` and a hostname reach
//! the Service's status, the default stays `Proxy`, and what VIP cannot
//! serve or a name that is not a DNS name is refused before any write.

use k8s_openapi::api::core::v1::{LoadBalancerIngress, Service};
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use super::{CONVERGE, START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::cluster_objects;

const IP_MODE: &str = "vcd-ccm.io/ip-mode";
const HOSTNAME: &str = "vcd-ccm.io/hostname";

async fn ingress(world: &World, name: &str) -> Result<LoadBalancerIngress, String> {
    let service = Api::<Service>::namespaced(world.client.clone(), "default")
        .get(name)
        .await
        .map_err(|e| e.to_string())?;
    service
        .status
        .and_then(|s| s.load_balancer?.ingress?.into_iter().next())
        .ok_or_else(|| format!("{name} has no ingress yet"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_on_ip_blocks() {
    exposes(World::start().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_on_ip_spaces() {
    let world = World::start_on(vcdsim::Scenario::ip_space()).await;
    world.use_one_arm();
    exposes(world).await;
}

/// `VIP` and a hostname reach the status, the default stays `Proxy`, and
/// what VIP cannot serve or a misnamed host is refused before any write.
async fn exposes(world: World) {
    world.add_nodes().await;
    let ccm = world.spawn("ip-mode", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world
        .create_annotated_service(
            "plain",
            &[80],
            json!({IP_MODE: "VIP", HOSTNAME: "web.example.com"}),
        )
        .await;
    world.create_service("proxied", &[81]).await;
    let (plain, _) = wait_until("plain's ingress", START + CONVERGE, || async {
        let entry = ingress(&world, "plain").await?;
        match entry.ip_mode.as_deref() {
            Some("VIP") => Ok(entry),
            other => Err(format!("ipMode {other:?}")),
        }
    })
    .await;
    assert_eq!(plain.hostname.as_deref(), Some("web.example.com"));
    assert!(plain.ip.is_some());
    let (proxied, _) = wait_until("proxied's ingress", START, || ingress(&world, "proxied")).await;
    assert_eq!(
        (proxied.ip_mode.as_deref(), proxied.hostname),
        (Some("Proxy"), None)
    );

    // What VIP cannot serve, and a name that is not one: refused, nothing
    // of either Service written.
    let sticky = world
        .create_annotated_service(
            "sticky",
            &[82],
            json!({IP_MODE: "VIP", "vcd-ccm.io/persistence": "client-ip"}),
        )
        .await;
    let (message, _) = wait_until("sticky's refusal", START, || {
        world.latest_event("sticky", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(message.contains(IP_MODE), "{message}");
    assert!(message.contains("session persistence"), "{message}");
    let misnamed = world
        .create_annotated_service("misnamed", &[83], json!({HOSTNAME: "Web_Site"}))
        .await;
    let (message, _) = wait_until("misnamed's refusal", START, || {
        world.latest_event("misnamed", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(message.contains(HOSTNAME), "{message}");
    assert!(message.contains("not a DNS name"), "{message}");
    let written: Vec<_> = cluster_objects(&world.vcd)
        .into_iter()
        .filter(|o| o.tag.contains(&sticky.uid) || o.tag.contains(&misnamed.uid))
        .collect();
    assert!(written.is_empty(), "{written:?}");

    // Without the annotations, the status is what it always was.
    Api::<Service>::namespaced(world.client.clone(), "default")
        .patch(
            "plain",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {IP_MODE: null, HOSTNAME: null}}})),
        )
        .await
        .expect("the annotations are removed");
    wait_until("plain back to Proxy", START, || async {
        let entry = ingress(&world, "plain").await?;
        match (entry.ip_mode.as_deref(), &entry.hostname) {
            (Some("Proxy"), None) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

//! A gateway without NSX ALB: `vcd-ccm run` still initialises Nodes, tells
//! every LoadBalancer Service why it waits, says so on `/readyz` and in a
//! metric, and serves the Services once ALB is turned on.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Service};
use kube::Api;
use vcd_ccm::controllers::service::{READY_CONDITION, condition_of};

use crate::support::poll::wait_until;
use crate::support::run::{NODES, World};

const WAIT: Duration = Duration::from_secs(60);

fn set_alb(world: &World, enabled: bool) {
    world.vcd.with_world(|w| {
        for gateway in &mut w.gateways {
            gateway.load_balancer.enabled = enabled;
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_are_initialised_while_the_load_balancer_side_waits_for_alb() {
    let world = World::start().await;
    set_alb(&world, false);
    world.add_new_nodes().await;
    let nodes: Api<Node> = Api::all(world.client.clone());
    world.create_service("web", &[80]).await;
    let ccm = world.spawn("degraded", &["--leader-elect=false"]);

    wait_until("the Nodes initialised", WAIT, || async {
        for (name, _) in NODES {
            let node = nodes.get(name).await.map_err(|e| e.to_string())?;
            let spec = node.spec.unwrap_or_default();
            if spec.provider_id.is_none() || !spec.taints.unwrap_or_default().is_empty() {
                return Err(format!("{name} not initialised yet"));
            }
        }
        Ok(())
    })
    .await;
    let (message, _) = wait_until("the Service's Warning Event", WAIT, || {
        world.latest_event("web", "LoadBalancerUnavailable")
    })
    .await;
    assert!(message.contains("load balancer"), "{message}");
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    let condition = || async {
        let service = services.get("web").await.map_err(|e| e.to_string())?;
        condition_of(&service, READY_CONDITION)
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
            .ok_or_else(|| "no condition yet".to_string())
    };
    let (waiting, _) = wait_until("the Service's condition", WAIT, condition).await;
    // The words of a LoadBalancerUnavailable Event (the reason may have moved on).
    assert_eq!(
        (waiting.0.as_str(), waiting.1.as_str()),
        ("False", "LoadBalancerUnavailable")
    );
    assert!(
        waiting
            .2
            .starts_with("The load-balancer side of VMware Cloud Director is not working"),
        "{}",
        waiting.2
    );
    let (status, body) = ccm.get("/readyz").await.unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("[-]load-balancer failed"), "{body}");
    assert_eq!(
        ccm.metric("vcd_ccm_load_balancer_ready").await.unwrap(),
        0.0
    );

    set_alb(&world, true);
    let (ip, waited) = wait_until("the Service's address once ALB is on", WAIT, || async {
        world.external_ip("web").await
    })
    .await;
    assert!(!ip.is_empty());
    println!("address {waited:?} after ALB was turned on");
    let (ready, _) = wait_until("the condition turned True", WAIT, || async {
        let found = condition().await?;
        (found.0 == "True")
            .then_some(found)
            .ok_or("still False".to_string())
    })
    .await;
    assert_eq!(ready.1, "EnsuredLoadBalancer");
    assert_eq!(
        ccm.metric("vcd_ccm_load_balancer_ready").await.unwrap(),
        1.0
    );
    ccm.ready().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_balancers_turned_off_leave_a_ready_node_side() {
    let world = World::start().await;
    let text = std::fs::read_to_string(&world.files.cloud_config).unwrap();
    let off = text.replace("loadbalancer:\n", "loadbalancer:\n  enabled: false\n");
    assert_ne!(text, off);
    std::fs::write(&world.files.cloud_config, off).unwrap();
    world.add_nodes().await;
    world.create_service("web", &[80]).await;
    let ccm = world.spawn("nodes-only", &["--leader-elect=false"]);
    wait_until("ready", WAIT, || ccm.ready()).await;
    let (_, body) = ccm.get("/readyz?verbose").await.unwrap();
    assert!(!body.contains("load-balancer"), "{body}");
    assert!(ccm.metric("running_managed_controllers").await.is_ok());
    let (_, metrics) = ccm.get("/metrics").await.unwrap();
    assert!(
        !metrics.contains("name=\"service\""),
        "no service controller: {metrics}"
    );
    assert!(world.external_ip("web").await.is_err());
}

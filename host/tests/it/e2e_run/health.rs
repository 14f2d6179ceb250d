//! `--health-interval` through `vcd-ccm run`: VCD's count of members up
//! reaches the Service's `vcd-ccm.io/LoadBalancerHealthy` condition and
//! `/metrics`, at one VCD call per read.

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use vcd_ccm::controllers::service::{HEALTHY_CONDITION, condition_of};

use super::{CONVERGE, START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;

pub(super) async fn health_message(world: &World, name: &str) -> Result<String, String> {
    let service = Api::<Service>::namespaced(world.client.clone(), "default")
        .get(name)
        .await
        .map_err(|e| e.to_string())?;
    condition_of(&service, HEALTHY_CONDITION)
        .map(|c| format!("{} {}", c.status, c.message))
        .ok_or_else(|| "no health condition yet".into())
}

/// The load-balancer side's VCD calls other than health reads, over three
/// health reads from now.
pub(super) async fn steady_calls(world: &World) -> Vec<String> {
    world.vcd.reset_log();
    wait_until("three health reads", START, || async {
        let calls = world.vcd.requests();
        let reads = calls
            .iter()
            .filter(|r| r.template.ends_with("/loadBalancer/poolSummaries"))
            .count();
        match reads >= 3 {
            true => Ok(()),
            false => Err(format!("{reads} reads")),
        }
    })
    .await;
    world
        .vcd
        .requests()
        .iter()
        .filter(|r| r.template.contains("/edgeGateways/") || r.template.contains("/loadBalancer/"))
        .filter(|r| !(r.method == "GET" && r.template.ends_with("/loadBalancer/poolSummaries")))
        .map(|r| format!("{} {}", r.method, r.template))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_interval_reads_members_up_into_the_service() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("health", &["--health-interval=1s"]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world.create_service("web", &[80]).await;
    wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    let (message, _) = wait_until("web's health", START, || async {
        let message = health_message(&world, "web").await?;
        match message.starts_with("True ") {
            true => Ok(message),
            false => Err(message),
        }
    })
    .await;
    assert!(message.ends_with(" members up"), "{message}");
    // Steady, between drift checks: each read is one list, and nothing else
    // of the load-balancer side reaches VCD (the node side's VM reads are
    // its own).
    let others = steady_calls(&world).await;
    assert!(others.is_empty(), "{others:#?}");
    println!("health reporting: 1 VCD call per read (<= 128 pools): 60 an hour at the default 60s");
    let (_, metrics) = ccm.get("/metrics").await.expect("the metrics");
    assert!(
        metrics.contains("vcd_ccm_load_balancer_healthy{namespace=\"default\",service=\"web\"} 1"),
        "{metrics}"
    );
}

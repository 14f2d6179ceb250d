//! Figures at scale (printed; `cargo test --test e2e_scale -- --nocapture`):
//! how long 40 LoadBalancer Services over 20 Nodes take to converge through
//! the real controller, what it costs in VCD and Kubernetes calls, and what
//! one more Node costs. The assertions are about the outcome, not the time.

use crate::support::{cluster, lb};
use std::time::Instant;

use crate::support::cluster::{
    Cluster, ServiceControllerConfig, fast_config, lb_service, wait_for,
};

const SERVICES: usize = 40;
const NODES: usize = 20;

fn vcd_calls(cluster: &Cluster) -> (u64, u64) {
    lb::calls(&cluster.vcd)
}

fn kube_writes(cluster: &Cluster) -> usize {
    cluster
        .kube
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_services_over_twenty_nodes() {
    let config = ServiceControllerConfig {
        workers: 4,
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    for i in 0..NODES {
        cluster
            .add_node(&format!("worker-{i}"), &format!("10.0.1.{}", 10 + i))
            .await;
    }
    cluster.vcd.reset_log();
    cluster.kube.clear_requests();
    let started = Instant::now();
    for i in 0..SERVICES {
        let node_port = 30000 + i as i32;
        cluster
            .create_service(
                "default",
                lb_service(&format!("svc-{i}"), &[(80, node_port)]),
            )
            .await;
    }
    for i in 0..SERVICES {
        cluster.wait_for_ip("default", &format!("svc-{i}")).await;
    }
    let took = started.elapsed();
    let (reads, writes) = vcd_calls(&cluster);
    let kube = kube_writes(&cluster);
    println!(
        "{SERVICES} Services × {NODES} Nodes converged in {:.2} s ({:.0} ms per Service, 4 workers); \
         VCD: {reads} reads, {writes} writes ({:.1} + {:.1} per Service); Kubernetes writes: {kube} ({:.1} per Service)",
        took.as_secs_f64(),
        took.as_secs_f64() * 1000.0 / SERVICES as f64,
        reads as f64 / SERVICES as f64,
        writes as f64 / SERVICES as f64,
        kube as f64 / SERVICES as f64,
    );
    let ips: std::collections::HashSet<String> =
        lb::objects_of_cluster(&cluster.vcd, cluster::CLUSTER)
            .into_iter()
            .filter(|o| o.kind == "virtual service")
            .map(|o| o.address)
            .collect();
    assert_eq!(ips.len(), SERVICES, "one address per Service");
    // Services ensured before the controller's cache held every Node are
    // completed by node updates; let those land before measuring the next.
    wait_for("every pool with every Node", || async {
        let full = cluster.vcd.with_world(|w| {
            w.pools
                .iter()
                .filter(|p| w.pool_member_ips(p).len() == NODES)
                .count()
        });
        (full == SERVICES).then_some(())
    })
    .await;

    // One more Node: the cluster's IP set gains it, one write in all.
    cluster.vcd.reset_log();
    let started = Instant::now();
    cluster.add_node("worker-new", "10.0.1.200").await;
    wait_for("the new Node in every pool", || async {
        let pools = lb::objects_of_cluster(&cluster.vcd, cluster::CLUSTER)
            .into_iter()
            .filter(|o| o.kind == "pool")
            .count();
        let members = cluster.vcd.with_world(|w| {
            w.pools
                .iter()
                .filter(|p| w.pool_member_ips(p).iter().any(|ip| ip == "10.0.1.200"))
                .count()
        });
        (pools == SERVICES && members == SERVICES).then_some(())
    })
    .await;
    let (reads, writes) = vcd_calls(&cluster);
    println!(
        "one more Node reached {SERVICES} pools in {:.2} s; VCD: {reads} reads, {writes} writes",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        writes,
        1,
        "one write, to the cluster's IP set, whatever the number of Services:\n{}",
        lb::call_lines(&cluster.vcd)
    );
}

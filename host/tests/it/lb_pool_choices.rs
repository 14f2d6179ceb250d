//! What each value of the default policy's `vcd-ccm.io/health-monitor` and
//! `vcd-ccm.io/pool-algorithm` annotations puts on the wire: the pool body
//! VCD receives, read from vcdsim's request log, for every value the
//! default policy's README lists (in any case, as it promises).

use serde_json::Value;
use vcd_ccm::lb::{LoadBalancers, PortSpec, ServiceSpec};
use vcdsim::Sim;

use crate::support::lb::*;
use crate::support::vcd;

const MONITOR: &str = "vcd-ccm.io/health-monitor";
const ALGORITHM: &str = "vcd-ccm.io/pool-algorithm";
const POOLS: &str = "/cloudapi/1.0.0/loadBalancer/pools";

/// The body of the pool create whose name holds `namespace.name`.
fn pool_body(sim: &Sim, name: &str) -> Value {
    let needle = format!("wire.{name}-");
    let bodies: Vec<Value> = sim
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.template == POOLS)
        .map(|r| r.request_body)
        .filter(|body| body["name"].as_str().is_some_and(|n| n.contains(&needle)))
        .collect();
    assert_eq!(bodies.len(), 1, "one pool created for {name}");
    bodies.into_iter().next().unwrap()
}

/// Ensures `svc` on 2 nodes, returns its pool's body, and deletes it again
/// so the gateway stays small.
async fn pool_of(sim: &Sim, lb: &LoadBalancers, svc: &ServiceSpec) -> Value {
    lb.ensure(svc, &nodes(2))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", svc.name));
    let body = pool_body(sim, &svc.name);
    lb.delete(svc).await.unwrap();
    body
}

fn annotated(name: &str, port: PortSpec, key: &str, value: &str) -> ServiceSpec {
    let mut svc = service("wire", name, &format!("uid-{name}"), vec![port]);
    svc.annotations.insert(key.into(), value.into());
    svc
}

#[tokio::test]
async fn each_health_monitor_value_is_the_pools_monitor_type() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let cases = [
        ("none", tcp(80, 30080), None),
        ("tcp", tcp(80, 30080), Some("TCP")),
        ("HTTP", tcp(80, 30080), Some("HTTP")),
        ("https", tcp(443, 30443), Some("HTTPS")),
        ("Ping", tcp(80, 30080), Some("PING")),
        ("udp", udp(53, 30053), Some("UDP")),
        ("ping", udp(53, 30053), Some("PING")),
        ("none", udp(53, 30053), None),
    ];
    for (n, (value, port, wire)) in cases.into_iter().enumerate() {
        let svc = annotated(&format!("monitor-{n}"), port, MONITOR, value);
        let body = pool_of(&sim, &lb, &svc).await;
        let types: Vec<&str> = body["healthMonitors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["type"].as_str())
            .collect();
        assert_eq!(types, Vec::from_iter(wire), "{MONITOR}: {value}: {body}");
    }
}

#[tokio::test]
async fn each_pool_algorithm_value_is_the_pools_algorithm() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let cases = [
        ("least-connections", "LEAST_CONNECTIONS"),
        ("Round-Robin", "ROUND_ROBIN"),
        ("consistent-hash", "CONSISTENT_HASH"),
        ("fastest-response", "FASTEST_RESPONSE"),
        ("LEAST-LOAD", "LEAST_LOAD"),
        ("fewest-servers", "FEWEST_SERVERS"),
        ("random", "RANDOM"),
        ("fewest-tasks", "FEWEST_TASKS"),
        ("core-affinity", "CORE_AFFINITY"),
    ];
    for (n, (value, wire)) in cases.into_iter().enumerate() {
        let svc = annotated(&format!("algorithm-{n}"), tcp(80, 30080), ALGORITHM, value);
        let body = pool_of(&sim, &lb, &svc).await;
        assert_eq!(body["algorithm"], wire, "{ALGORITHM}: {value}: {body}");
    }
    // Without the annotation, the default policy's default.
    let svc = service(
        "wire",
        "algorithm-default",
        "uid-default",
        vec![tcp(80, 30080)],
    );
    assert_eq!(pool_of(&sim, &lb, &svc).await["algorithm"], "ROUND_ROBIN");
}

//! Figures for the default policy: compile (load) time, and `decide` latency
//! with a fresh store and instance per call, as production runs it.
//!
//! `cargo bench --bench decide` prints the figures; it asserts nothing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use vcd_ccm::policy::PolicyEngine;
use vcd_ccm::policy::builtin;
use vcd_ccm::policy::model::DecisionInput;

const LOADS: usize = 20;
const WARMUP: usize = 200;
const DECIDES: usize = 5000;

const INPUT: &str = r#"
service:
  namespace: shop
  name: web
  uid: 0f6c1d2e-5b7a-4c1e-9d3f-000000000001
  labels: {app: web, tier: frontend}
  annotations:
    service.beta.kubernetes.io/vcloud-avi-ssl-ports: "443"
    vcd-ccm.io/pool-algorithm: least-connections
  ports:
  - {name: http, protocol: tcp, port: 80, node-port: 30080, app-protocol: http}
  - {name: https, protocol: tcp, port: 443, node-port: 30443, app-protocol: http}
  - {name: dns, protocol: udp, port: 53, node-port: 30053}
  ip-families: [ipv4]
namespace: {name: shop, labels: {tenant: acme}}
cluster:
  cluster-id: urn:vcloud:entity:vmware:capvcdCluster:0001
  org: acme
  vdc: acme-vdc
  gateway: edge-1
  vcd-api-version: "37.2"
  capabilities: {shared-vip: true}
pools:
- {name: public, source: ip-block, ranges: [{first: 203.0.113.10, last: 203.0.113.200}], free-count: 150}
certificates: [{alias: web-cert}, {alias: api-cert}]
profiles: [l4-tcp, l4-udp, http, https]
current:
  address: {specific: 203.0.113.12}
  ports: []
"#;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let engine = PolicyEngine::new().expect("engine");
    let config = r#"{"certAlias": "web-cert"}"#;

    let mut loads: Vec<Duration> = (0..LOADS)
        .map(|_| {
            let started = Instant::now();
            black_box(
                engine
                    .block_on(builtin::load_default(&engine, config.into()))
                    .expect("default policy loads"),
            );
            started.elapsed()
        })
        .collect();
    loads.sort();

    let policy = engine
        .block_on(builtin::load_default(&engine, config.into()))
        .expect("default policy loads");
    let input: DecisionInput = vcd_ccm::policy::yaml::from_str(INPUT).expect("bench input");
    for _ in 0..WARMUP {
        engine.block_on(policy.decide(&input)).expect("decides");
    }
    let mut decides: Vec<Duration> = (0..DECIDES)
        .map(|_| {
            let started = Instant::now();
            black_box(
                engine
                    .block_on(policy.decide(black_box(&input)))
                    .expect("decides"),
            );
            started.elapsed()
        })
        .collect();
    decides.sort();

    println!(
        "default policy: {} bytes",
        builtin::DEFAULT_POLICY_WASM.len()
    );
    println!(
        "load (compile + verify + validate-config), {LOADS} runs: p50 {:?}, min {:?}, max {:?}",
        percentile(&loads, 0.5),
        loads[0],
        loads[LOADS - 1]
    );
    println!(
        "decide (fresh instance per call, 3 ports), {DECIDES} calls: p50 {:?}, p99 {:?}, max {:?}",
        percentile(&decides, 0.5),
        percentile(&decides, 0.99),
        decides[DECIDES - 1]
    );
}

//! Figures for a policy in each language: load time (compile, verify,
//! validate-config) in a fresh engine, load time after a restart with the
//! compile cache (`VCD_CCM_COMPILE_CACHE`, through the real binary), memory
//! per instance, and `decide` latency with a fresh store and instance per
//! call, as production runs it.
//!
//! Rust is the built-in default policy. Python and JavaScript are the
//! templates `vcd-ccm policy new --lang` writes, as the `policy_languages`
//! tests build them under `target/policy-toolchains/` (run
//! `cargo test -p vcd-ccm --test it policy_languages` first; a language not
//! built is reported as such).
//!
//! Last, how far past its deadline an endless loop runs before the epoch
//! ticker stops it (the `misbehaving` test policy, 100 ms deadline): the
//! sandbox tests assert only that the deadline stops it.
//!
//! `cargo bench --bench decide` prints the figures; it asserts nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vcd_ccm::policy::model::DecisionInput;
use vcd_ccm::policy::{Limits, LoadError, Policy, PolicyEngine, PolicySource, builtin, loader};

/// Fresh engines per language: each load compiles from scratch.
const LOADS: usize = 3;
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

/// One policy to measure: its name, component and settings.
struct Subject {
    language: &'static str,
    bytes: Vec<u8>,
    config: &'static str,
}

fn subjects() -> Vec<Subject> {
    let mut subjects = vec![Subject {
        language: "Rust (built-in default)",
        bytes: builtin::DEFAULT_POLICY_WASM.to_vec(),
        config: r#"{"certAlias": "web-cert"}"#,
    }];
    for (language, flag) in [("Python", "python"), ("JavaScript", "javascript")] {
        match template_component(flag) {
            Some(path) => subjects.push(Subject {
                language,
                bytes: std::fs::read(&path).expect("the component is readable"),
                config: r#"{"pool": "public", "certificate": "web-cert"}"#,
            }),
            None => println!(
                "{language}: no template built under target/policy-toolchains/; \
                 run `cargo test -p vcd-ccm --test it policy_languages` first"
            ),
        }
    }
    subjects
}

/// The newest template build of a language, if the tests made one.
fn template_component(flag: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policy-toolchains");
    std::fs::read_dir(root)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(&format!("{flag}-"))
        })
        .map(|entry| entry.path().join("edge-pools/policy.wasm"))
        .filter(|path| path.is_file())
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
}

fn try_load(engine: &Arc<PolicyEngine>, subject: &Subject) -> Result<Policy, LoadError> {
    let source = PolicySource {
        name: "bench",
        bytes: &subject.bytes,
        pin: None,
        config: subject.config.into(),
        limits: Limits::default(),
    };
    engine.block_on(loader::load(engine, source))
}

fn load(engine: &Arc<PolicyEngine>, subject: &Subject) -> Policy {
    try_load(engine, subject).expect("the policy loaded before")
}

/// The load time a restarted `vcd-ccm` reports with a warm compile cache.
fn cached_load(subject: &Subject) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let component = dir.path().join("policy.wasm");
    std::fs::write(&component, &subject.bytes).expect("written");
    let mut took = Vec::new();
    for _ in 0..2 {
        let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
            .args(["policy", "inspect"])
            .arg(&component)
            .env("VCD_CCM_COMPILE_CACHE", dir.path().join("cache"))
            .env("RUST_LOG", "vcd_ccm::policy::compiled=info")
            .output()
            .expect("vcd-ccm runs");
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        let ms = log
            .split("took_ms=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map_or_else(|| "?".to_string(), |ms| format!("{ms}ms"));
        took.push(ms);
    }
    format!(
        "compiled {}, read back after a restart {}",
        took[0], took[1]
    )
}

/// Calls of the endless loop, each stopped by its deadline.
const OVERRUNS: usize = 20;
const LOOP_DEADLINE: Duration = Duration::from_millis(100);

/// How long past [`LOOP_DEADLINE`] an endless loop runs, over [`OVERRUNS`] calls.
fn deadline_overrun(input: &DecisionInput) {
    let bytes = std::fs::read(format!("{}/misbehaving.wasm", builtin::ARTIFACTS_DIR))
        .expect("build.rs builds the misbehaving test policy");
    let engine = PolicyEngine::new().expect("engine");
    let source = PolicySource {
        name: "misbehaving",
        bytes: &bytes,
        pin: None,
        config: "loop".into(),
        limits: Limits {
            timeout: LOOP_DEADLINE,
            ..Limits::default()
        },
    };
    let policy = engine
        .block_on(loader::load(&engine, source))
        .expect("the misbehaving policy loads");
    let mut overruns: Vec<Duration> = (0..OVERRUNS)
        .map(|_| {
            let started = Instant::now();
            let result = engine.block_on(policy.decide(input));
            assert!(result.is_err(), "an endless loop returned");
            started.elapsed().saturating_sub(LOOP_DEADLINE)
        })
        .collect();
    overruns.sort();
    println!(
        "endless loop, {LOOP_DEADLINE:?} deadline, {OVERRUNS} calls: stopped past it by p50 {:?}, max {:?}",
        percentile(&overruns, 0.5),
        overruns[OVERRUNS - 1]
    );
}

fn main() {
    let input: DecisionInput = vcd_ccm::policy::yaml::from_str(INPUT).expect("bench input");
    for subject in subjects() {
        // A template built against an earlier draft of the contract no
        // longer loads: say so rather than measure nothing.
        if let Err(error) = try_load(&PolicyEngine::new().expect("engine"), &subject) {
            println!(
                "{}: the build under target/policy-toolchains/ does not load ({error}); \
                 rebuild it with `cargo test -p vcd-ccm --test it policy_languages`",
                subject.language
            );
            continue;
        }
        let mut loads: Vec<Duration> = (0..LOADS)
            .map(|_| {
                let engine = PolicyEngine::new().expect("engine");
                let started = Instant::now();
                black_box(load(&engine, &subject));
                started.elapsed()
            })
            .collect();
        loads.sort();

        let engine = PolicyEngine::new().expect("engine");
        let policy = load(&engine, &subject);
        let mut peak_memory = 0;
        for _ in 0..WARMUP {
            let (decided, cost) = engine.block_on(policy.decide_measured(&input));
            decided.expect("decides");
            peak_memory = peak_memory.max(cost.peak_memory_bytes);
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
            "{}: {:.1} MB component",
            subject.language,
            subject.bytes.len() as f64 / 1e6
        );
        println!(
            "  load (compile + verify + validate-config) in a fresh engine, {LOADS} runs: p50 {:?}, min {:?}, max {:?}",
            percentile(&loads, 0.5),
            loads[0],
            loads[LOADS - 1]
        );
        println!(
            "  with the compile cache (vcd-ccm policy inspect): {}",
            cached_load(&subject)
        );
        println!(
            "  memory per instance: {:.1} MiB of the default 32 MiB",
            peak_memory as f64 / (1 << 20) as f64
        );
        println!(
            "  decide (fresh instance per call, 3 ports), {DECIDES} calls: p50 {:?}, p99 {:?}, max {:?}",
            percentile(&decides, 0.5),
            percentile(&decides, 0.99),
            decides[DECIDES - 1]
        );
    }
    deadline_overrun(&input);
}

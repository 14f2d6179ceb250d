//! The sandbox contains misbehaving policies: time, memory, traps, forbidden
//! imports and log floods fail as typed errors, and the host keeps serving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vcd_ccm::policy::builtin::{self, ARTIFACTS_DIR};
use vcd_ccm::policy::loader::{self, PolicySource};
use vcd_ccm::policy::model::{AppProfile, DecisionInput, PoolSource, Protocol, ServicePort};
use vcd_ccm::policy::{CallError, EvalError, Limits, LoadError, Policy, PolicyEngine};

fn misbehaving_wasm() -> Vec<u8> {
    std::fs::read(format!("{ARTIFACTS_DIR}/misbehaving.wasm"))
        .expect("build.rs builds the misbehaving fixture")
}

fn load_misbehaving(engine: &Arc<PolicyEngine>, behaviour: &str, limits: Limits) -> Policy {
    let bytes = misbehaving_wasm();
    loader::load(
        engine,
        PolicySource {
            name: "misbehaving",
            bytes: &bytes,
            pin: None,
            config: behaviour.into(),
            limits,
        },
    )
    .expect("the fixture loads")
}

fn web_input() -> DecisionInput {
    let mut input: DecisionInput = serde_yaml_ng::from_str(
        r#"
service: {namespace: shop, name: web, uid: u-1, ip-families: [ipv4]}
namespace: {name: shop}
pools: [{name: public, source: ip-block, ranges: [{first: 203.0.113.10, last: 203.0.113.20}], free-count: 11}]
profiles: [l4-tcp, l4-udp, http, https]
"#,
    )
    .unwrap();
    input.service.ports.push(ServicePort {
        name: "http".into(),
        protocol: Protocol::Tcp,
        port: 80,
        node_port: Some(30080),
        app_protocol: None,
    });
    assert_eq!(input.pools[0].source, PoolSource::IpBlock);
    input
}

fn call_error(result: Result<vcd_ccm::policy::model::Decision, EvalError>) -> CallError {
    match result {
        Err(EvalError::Call { cause, .. }) => cause,
        other => panic!("expected a sandbox failure, got {other:?}"),
    }
}

/// Loads a policy that the loader must refuse, and returns why it did.
fn refused(name: &str, bytes: &[u8], pin: Option<&str>, config: &str) -> LoadError {
    let engine = PolicyEngine::new().unwrap();
    let source = PolicySource {
        name,
        bytes,
        pin,
        config: config.into(),
        limits: Limits::default(),
    };
    match loader::load(&engine, source) {
        Ok(_) => panic!("policy {name} was accepted"),
        Err(error) => error,
    }
}

fn default_still_serves(engine: &Arc<PolicyEngine>) {
    let policy = builtin::load_default(engine, "{}".into()).unwrap();
    let decision = policy
        .decide(&web_input())
        .expect("the default policy still decides");
    assert_eq!(decision.ports[0].profile, AppProfile::L4Tcp);
}

#[test]
fn endless_loop_is_stopped_within_twice_its_deadline() {
    let engine = PolicyEngine::new().unwrap();
    let timeout = Duration::from_millis(100);
    let policy = load_misbehaving(
        &engine,
        "loop",
        Limits {
            timeout,
            ..Limits::default()
        },
    );
    let started = Instant::now();
    let error = call_error(policy.decide(&web_input()));
    let elapsed = started.elapsed();
    assert!(
        matches!(error, CallError::Timeout(t) if t == timeout),
        "{error:?}"
    );
    assert!(elapsed >= timeout, "stopped early: {elapsed:?}");
    assert!(elapsed < 2 * timeout, "stopped late: {elapsed:?}");
    default_still_serves(&engine);
}

#[test]
fn memory_growth_past_the_cap_is_out_of_memory() {
    let engine = PolicyEngine::new().unwrap();
    let limits = Limits {
        memory_bytes: 8 << 20,
        ..Limits::default()
    };
    let policy = load_misbehaving(&engine, "oom", limits);
    let error = call_error(policy.decide(&web_input()));
    assert!(
        matches!(error, CallError::OutOfMemory { limit_bytes } if limit_bytes == 8 << 20),
        "{error:?}"
    );
    default_still_serves(&engine);
}

#[test]
fn a_trap_is_reported_as_a_trap() {
    let engine = PolicyEngine::new().unwrap();
    let policy = load_misbehaving(&engine, "trap", Limits::default());
    let error = call_error(policy.decide(&web_input()));
    assert!(
        matches!(&error, CallError::Trap { trap, .. } if trap.contains("unreachable")),
        "{error:?}"
    );
    default_still_serves(&engine);
}

#[test]
fn a_log_flood_is_bounded_and_the_call_still_returns() {
    let engine = PolicyEngine::new().unwrap();
    let policy = load_misbehaving(
        &engine,
        "log-flood",
        Limits {
            timeout: Duration::from_secs(5),
            ..Limits::default()
        },
    );
    match policy.decide(&web_input()) {
        Err(EvalError::Declined { error, .. }) => assert_eq!(error.to_string(), "flooded"),
        other => panic!("expected the policy's own error, got {other:?}"),
    }
}

#[test]
fn a_forbidden_import_is_refused_at_load_by_name() {
    let engine = PolicyEngine::new().unwrap();
    let wat = r#"(component (import "wasi:http/outgoing-handler@0.2.0" (instance)))"#;
    let error = refused("sneaky", wat.as_bytes(), None, "{}");
    match error {
        LoadError::ForbiddenImport { policy, import, .. } => {
            assert_eq!(policy, "sneaky");
            assert_eq!(import, "wasi:http/outgoing-handler@0.2.0");
        }
        other => panic!("expected ForbiddenImport, got {other}"),
    }
    default_still_serves(&engine);
}

#[test]
fn a_wrong_pin_is_refused_before_compiling() {
    let bytes = misbehaving_wasm();
    let pin = "0".repeat(64);
    let error = refused("pinned", &bytes, Some(&pin), "ok");
    assert!(
        matches!(&error, LoadError::DigestMismatch { actual, .. } if *actual == loader::sha256_hex(&bytes)),
        "{error}"
    );
}

#[test]
fn a_config_the_policy_rejects_refuses_the_policy() {
    let bytes = misbehaving_wasm();
    let error = refused("misbehaving", &bytes, None, "dance");
    assert!(
        matches!(&error, LoadError::InvalidConfig { message, .. } if message.contains("dance")),
        "{error}"
    );
}

#[test]
fn bytes_that_are_no_component_are_refused() {
    let error = refused("junk", b"\0asm junk", None, "{}");
    assert!(
        matches!(error, LoadError::InvalidComponent { .. }),
        "{error}"
    );
}

#[test]
fn a_component_of_another_world_is_refused() {
    let error = refused("empty", b"(component)", None, "{}");
    assert!(
        matches!(&error, LoadError::WrongWorld { reason, .. } if reason.contains("vcd:lb-policy/policy@0.1.0")),
        "{error}"
    );
}

#[test]
fn an_invalid_decision_is_rejected_with_what_is_wrong() {
    let engine = PolicyEngine::new().unwrap();
    // "ok" answers keep-current with no ports: two contract violations here.
    let policy = load_misbehaving(&engine, "ok", Limits::default());
    match policy.decide(&web_input()) {
        Err(EvalError::InvalidDecision { problem, .. }) => {
            assert!(
                problem.contains("keep-current, but the Service has no address yet"),
                "{problem}"
            );
            assert!(
                problem.contains("Service port 80/tcp has no entry"),
                "{problem}"
            );
        }
        other => panic!("expected InvalidDecision, got {other:?}"),
    }
}

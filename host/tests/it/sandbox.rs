//! The sandbox contains misbehaving policies: time, memory, traps, forbidden
//! imports and log floods fail as typed errors, and the host keeps serving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::policies::{misbehaving, misbehaving_wasm, web_input};

use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::{self, PolicySource};
use vcd_ccm::policy::model::AppProfile;
use vcd_ccm::policy::{CallError, EvalError, Limits, LoadError, Policy, PolicyEngine};

fn load_misbehaving(engine: &Arc<PolicyEngine>, behaviour: &str, limits: Limits) -> Policy {
    engine.block_on(misbehaving(engine, behaviour, limits))
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
    match engine.block_on(loader::load(&engine, source)) {
        Ok(_) => panic!("policy {name} was accepted"),
        Err(error) => error,
    }
}

fn default_still_serves(engine: &Arc<PolicyEngine>) {
    let policy = engine
        .block_on(loader::load_default(
            engine,
            "{}".into(),
            Default::default(),
        ))
        .unwrap();
    let decision = engine
        .block_on(policy.decide(&web_input()))
        .expect("the default policy still decides");
    assert_eq!(decision.ports[0].profile, AppProfile::L4Tcp);
}

#[test]
fn endless_loop_is_stopped_at_its_deadline() {
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
    let error = call_error(engine.block_on(policy.decide(&web_input())));
    let elapsed = started.elapsed();
    assert!(
        matches!(error, CallError::Timeout(t) if t == timeout),
        "{error:?}"
    );
    // Only the deadline ends an endless loop, so the Timeout shows it; how
    // late after the deadline is a figure of `cargo bench --bench decide`.
    assert!(elapsed >= timeout, "stopped early: {elapsed:?}");
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
    let error = call_error(engine.block_on(policy.decide(&web_input())));
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
    let error = call_error(engine.block_on(policy.decide(&web_input())));
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
    match engine.block_on(policy.decide(&web_input())) {
        Err(EvalError::Declined { error, .. }) => assert_eq!(error.to_string(), "flooded"),
        other => panic!("expected the policy's own error, got {other:?}"),
    }
}

#[test]
fn a_forbidden_import_is_refused_at_load_by_name() {
    let engine = PolicyEngine::new().unwrap();
    // A server's interface: linked for no toolchain, so refused.
    let wat = r#"(component (import "wasi:http/incoming-handler@0.2.0" (instance)))"#;
    let error = refused("sneaky", wat.as_bytes(), None, "{}");
    match error {
        LoadError::ForbiddenImport { policy, import, .. } => {
            assert_eq!(policy, "sneaky");
            assert_eq!(import, "wasi:http/incoming-handler@0.2.0");
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
    match engine.block_on(policy.decide(&web_input())) {
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

// Budgets that hold whatever the guest does: deadlines over host calls,
// bounded output, memory across every memory and table, fair pool shares.

fn short(timeout_ms: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        ..Limits::default()
    }
}

#[test]
fn a_guest_asleep_in_a_wasi_call_is_stopped_at_its_deadline() {
    let engine = PolicyEngine::new().unwrap();
    let policy = load_misbehaving(&engine, "sleep", short(100));
    // The guest sleeps forever: only the deadline ends its call.
    let error = call_error(engine.block_on(policy.decide(&web_input())));
    assert!(matches!(error, CallError::Timeout(_)), "{error:?}");
    default_still_serves(&engine);
}

#[test]
fn load_time_calls_have_the_deadline_too() {
    let engine = PolicyEngine::new().unwrap();
    let bytes = misbehaving_wasm();
    let source = PolicySource {
        name: "misbehaving",
        bytes: &bytes,
        pin: None,
        config: "sleep-in-validate".into(),
        limits: short(100),
    };
    match engine.block_on(loader::load(&engine, source)) {
        Err(LoadError::Call {
            call: "validate-config",
            cause: CallError::Timeout(_),
            ..
        }) => {}
        other => panic!("expected a validate-config timeout, got {:?}", other.err()),
    }
    let stalls = std::fs::read(format!("{ARTIFACTS_DIR}/stalls_describe.wasm")).unwrap();
    let source = PolicySource {
        name: "stalls",
        bytes: &stalls,
        pin: None,
        config: "{}".into(),
        limits: short(100),
    };
    match engine.block_on(loader::load(&engine, source)) {
        Err(LoadError::Call {
            call: "describe",
            cause: CallError::Timeout(_),
            ..
        }) => {}
        other => panic!("expected a describe timeout, got {:?}", other.err()),
    }
    // Both would run forever: only their deadlines end them.
    default_still_serves(&engine);
}

/// The test process's peak resident memory so far (`VmHWM`), in KiB.
fn peak_resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line")
}

#[test]
fn oversized_output_is_refused_before_it_is_copied() {
    let engine = PolicyEngine::new().unwrap();
    for behaviour in ["error-flood", "warning-flood", "alias-flood"] {
        let policy = load_misbehaving(&engine, behaviour, short(2000));
        let peak = peak_resident_kib();
        let error = call_error(engine.block_on(policy.decide(&web_input())));
        assert!(
            matches!(error, CallError::OutputTooLarge { limit_bytes: 65536 }),
            "{behaviour}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "returned or logged a value of more than 65536 bytes, which the host refuses"
        );
        // 1000 aliases of a 4 MiB buffer would be 4 GiB copied: the peak
        // grows by far less than one copy of them (other tests running
        // beside this one included).
        let grown = peak_resident_kib().saturating_sub(peak);
        assert!(
            grown < 1024 * 1024,
            "{behaviour}: the peak grew {grown} KiB"
        );
    }
    default_still_serves(&engine);
}

#[test]
fn what_a_guest_prints_is_quoted_bounded() {
    let engine = PolicyEngine::new().unwrap();
    let policy = load_misbehaving(&engine, "stdout-flood", Limits::default());
    let error = call_error(engine.block_on(policy.decide(&web_input())));
    match &error {
        CallError::Trap { stderr, .. } => {
            // 100 KiB printed; 16 KiB kept, the last 512 bytes quoted.
            assert!(stderr.len() <= 512, "{} bytes", stderr.len());
            assert!(stderr.starts_with("ooo"), "{stderr}");
            assert!(!stderr.contains('\n'), "{stderr}");
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn policy_text_cannot_forge_log_lines() {
    let engine = PolicyEngine::new().unwrap();
    let policy = load_misbehaving(&engine, "forged-text", Limits::default());
    match engine.block_on(policy.decide(&web_input())) {
        Err(error @ EvalError::Declined { .. }) => assert_eq!(
            error.to_string(),
            "policy misbehaving: refused\\nINFO forged line \\u{1b}[2J"
        ),
        other => panic!("expected the policy's own error, got {other:?}"),
    }
}

/// A component whose core instances hold `memories` memories of `pages`
/// 64 KiB pages each; its exports have the contract's names, not its types.
fn component_with_memories(memories: usize, pages: u32) -> Vec<u8> {
    let mut wat = String::from("(component\n  (core module $m (func (export \"noop\")))\n");
    wat.push_str(&format!("  (core module $mem (memory {pages}))\n"));
    wat.push_str("  (core instance $i (instantiate $m))\n");
    for _ in 0..memories {
        wat.push_str("  (core instance (instantiate $mem))\n");
    }
    wat.push_str(
        r#"  (func $noop (canon lift (core func $i "noop")))
  (instance $policy
    (export "describe" (func $noop))
    (export "validate-config" (func $noop))
    (export "decide" (func $noop)))
  (export "vcd:lb-policy/policy@0.1.0" (instance $policy)))"#,
    );
    wat.into_bytes()
}

#[test]
fn the_memory_cap_counts_every_memory_of_the_instance() {
    // Two memories of 20 MiB: each fits the 32 MiB cap, together they do not.
    let error = refused("two-memories", &component_with_memories(2, 320), None, "{}");
    assert!(
        matches!(
            &error,
            LoadError::Call { call: "describe", cause: CallError::OutOfMemory { limit_bytes }, .. }
                if *limit_bytes == 32 << 20
        ),
        "{error}"
    );
}

#[test]
fn a_component_larger_than_a_pool_slot_is_refused_at_load() {
    let error = refused("three-memories", &component_with_memories(3, 1), None, "{}");
    assert!(
        matches!(&error, LoadError::InvalidComponent { reason, .. } if reason.contains("memories")),
        "{error}"
    );
}

#[test]
fn a_policy_gets_its_share_of_the_pool_and_default_keeps_its_own() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use vcd_ccm::policy::capacity::PER_POLICY;
    let engine = PolicyEngine::new().unwrap();
    // Two rounds of the share, the second starting well within the slot
    // wait (2 s), each long enough for default's calls to run within it.
    let deadline = Duration::from_millis(900);
    let sleeper = Arc::new(load_misbehaving(
        &engine,
        "sleep",
        Limits {
            timeout: deadline,
            ..Limits::default()
        },
    ));
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let calls = 2 * PER_POLICY as usize;
    let (started, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let begun = Instant::now();
    let hostile: Vec<_> = (0..calls)
        .map(|_| {
            let (engine, sleeper) = (engine.clone(), sleeper.clone());
            let (started, finished) = (started.clone(), finished.clone());
            std::thread::spawn(move || {
                started.fetch_add(1, Ordering::SeqCst);
                let error = call_error(engine.block_on(sleeper.decide(&web_input())));
                finished.fetch_add(1, Ordering::SeqCst);
                error
            })
        })
        .collect();
    while started.load(Ordering::SeqCst) < calls {
        std::thread::yield_now();
    }
    // While the hostile policy holds its whole share (none of its calls
    // can end before its deadline), default decides, never waiting for it.
    for _ in 0..20 {
        engine
            .block_on(default.decide(&web_input()))
            .expect("default decides");
    }
    assert_eq!(
        finished.load(Ordering::SeqCst),
        0,
        "default's calls waited for the hostile policy's"
    );
    for call in hostile {
        let error = call.join().unwrap();
        // Calls over the share waited for a slot instead of failing.
        assert!(matches!(error, CallError::Timeout(_)), "{error:?}");
    }
    // Two rounds of its share, one after the other.
    let elapsed = begun.elapsed();
    assert!(elapsed >= 2 * deadline, "ran at once: {elapsed:?}");
}

#[test]
fn a_call_that_cannot_get_a_slot_in_time_is_busy() {
    use vcd_ccm::policy::capacity::{PER_POLICY, SLOT_WAIT};
    let engine = PolicyEngine::new().unwrap();
    // The share's calls hold their slots twice as long as another waits for
    // one, so every call past the share is busy however the threads start.
    let sleeper = Arc::new(load_misbehaving(
        &engine,
        "sleep",
        Limits {
            timeout: 2 * SLOT_WAIT,
            ..Limits::default()
        },
    ));
    let hostile: Vec<_> = (0..3 * PER_POLICY)
        .map(|_| {
            let (engine, sleeper) = (engine.clone(), sleeper.clone());
            std::thread::spawn(move || call_error(engine.block_on(sleeper.decide(&web_input()))))
        })
        .collect();
    let errors: Vec<CallError> = hostile.into_iter().map(|c| c.join().unwrap()).collect();
    let busy = errors
        .iter()
        .filter(|e| matches!(e, CallError::Busy { share: 8, .. }))
        .count();
    let timeouts = errors
        .iter()
        .filter(|e| matches!(e, CallError::Timeout(_)))
        .count();
    assert_eq!((timeouts, busy), (8, 16), "{errors:?}");
    let message = errors
        .iter()
        .find(|e| matches!(e, CallError::Busy { .. }))
        .unwrap()
        .to_string();
    assert_eq!(
        message,
        "already runs 8 calls at once, its share of the instance pool; this call waited 2s for a slot"
    );
}

//! A policy that misbehaves on request, to prove the sandbox contains it.
//! The config picks the behaviour: a bare word or a JSON string. Built
//! against contract 0.2.0, so the host's calls in that version's shapes are
//! exercised too.

wit_bindgen::generate!({ path: "../../../wit/0.2.0", world: "lb-policy" });

use exports::vcd::lb_policy::policy::Guest;
use vcd::lb_policy::host::{Level, log};
use vcd::lb_policy::types::{AddressChoice, Decision, DecisionError, DecisionInput, PolicyInfo};

const BEHAVIOURS: [&str; 12] = [
    "ok",
    "loop",
    "oom",
    "trap",
    "log-flood",
    "sleep",
    "sleep-in-validate",
    "error-flood",
    "warning-flood",
    "alias-flood",
    "stdout-flood",
    "forged-text",
];

struct Misbehaving;

impl Guest for Misbehaving {
    fn describe() -> PolicyInfo {
        PolicyInfo {
            name: "misbehaving".into(),
            version: "0.1.0".into(),
        }
    }

    fn validate_config(config: String) -> Result<(), String> {
        match behaviour(&config) {
            "sleep-in-validate" => sleep_forever(),
            known if BEHAVIOURS.contains(&known) => Ok(()),
            _ => Err(format!(
                "config must be one of {BEHAVIOURS:?}, got {config:?}"
            )),
        }
    }

    fn decide(config: String, _input: DecisionInput) -> Result<Decision, DecisionError> {
        match behaviour(&config) {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "oom" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(std::hint::black_box(vec![1u8; 1 << 20]));
                }
            }
            "trap" => std::process::abort(),
            "log-flood" => {
                for i in 0..10_000 {
                    log(Level::Info, &format!("line {i}: {}", "x".repeat(4096)));
                }
                Err(DecisionError::Other("flooded".into()))
            }
            // Blocks in a WASI call (poll on a monotonic-clock pollable), not
            // in guest code.
            "sleep" => sleep_forever(),
            "error-flood" => Err(DecisionError::Other("x".repeat(8 << 20))),
            "warning-flood" => Ok(keep_current(vec![String::new(); 100_000])),
            "alias-flood" => Ok(keep_current(aliases_of_one_buffer(4 << 20, 1000))),
            "stdout-flood" => {
                for _ in 0..100 {
                    println!("{}", "o".repeat(1024));
                }
                panic!("after flooding stdout")
            }
            "forged-text" => {
                log(Level::Info, "policy line\nINFO forged line \u{1b}[31mred");
                Err(DecisionError::Other(
                    "refused\nINFO forged line \u{1b}[2J".into(),
                ))
            }
            _ => Ok(keep_current(Vec::new())),
        }
    }
}

fn keep_current(warnings: Vec<String>) -> Decision {
    Decision {
        address: AddressChoice::KeepCurrent,
        ports: Vec::new(),
        warnings,
        preserve_client_ip: false,
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// `count` strings that all point at one `bytes`-long buffer: small in the
/// guest's memory, `count × bytes` for a host that copies each one.
fn aliases_of_one_buffer(bytes: usize, count: usize) -> Vec<String> {
    let buffer: &'static mut str = "a".repeat(bytes).leak();
    let (pointer, length) = (buffer.as_mut_ptr(), buffer.len());
    (0..count)
        // SAFETY: deliberately not sound — the strings alias — which is the
        // point of this fixture. They are handed to the canonical ABI and
        // never used or dropped by the guest; the host refuses the value
        // before the post-return that would free them.
        .map(|_| unsafe { String::from_raw_parts(pointer, length, length) })
        .collect()
}

fn behaviour(config: &str) -> &str {
    config.trim().trim_matches('"')
}

export!(Misbehaving);

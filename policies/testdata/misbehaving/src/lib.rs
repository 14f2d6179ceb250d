//! A policy that misbehaves on request, to prove the sandbox contains it.
//! The config picks the behaviour of `decide`: a bare word or a JSON string.

wit_bindgen::generate!({ path: "../../../wit", world: "lb-policy" });

use exports::vcd::lb_policy::policy::Guest;
use vcd::lb_policy::host::{Level, log};
use vcd::lb_policy::types::{AddressChoice, Decision, DecisionError, DecisionInput, PolicyInfo};

const BEHAVIOURS: [&str; 5] = ["ok", "loop", "oom", "trap", "log-flood"];

struct Misbehaving;

impl Guest for Misbehaving {
    fn describe() -> PolicyInfo {
        PolicyInfo {
            name: "misbehaving".into(),
            version: "0.1.0".into(),
        }
    }

    fn validate_config(config: String) -> Result<(), String> {
        if BEHAVIOURS.contains(&behaviour(&config)) {
            Ok(())
        } else {
            Err(format!(
                "config must be one of {BEHAVIOURS:?}, got {config:?}"
            ))
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
            _ => Ok(Decision {
                address: AddressChoice::KeepCurrent,
                ports: Vec::new(),
                warnings: Vec::new(),
            }),
        }
    }
}

fn behaviour(config: &str) -> &str {
    config.trim().trim_matches('"')
}

export!(Misbehaving);

//! A policy that never finishes `describe`: it sleeps in a WASI call, so
//! only a deadline that covers host calls can stop its load.

wit_bindgen::generate!({ path: "../../../wit/0.1.0", world: "lb-policy" });

use exports::vcd::lb_policy::policy::Guest;
use vcd::lb_policy::types::{Decision, DecisionError, DecisionInput, PolicyInfo};

struct StallsDescribe;

impl Guest for StallsDescribe {
    fn describe() -> PolicyInfo {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }

    fn validate_config(_config: String) -> Result<(), String> {
        Ok(())
    }

    fn decide(_config: String, _input: DecisionInput) -> Result<Decision, DecisionError> {
        Err(DecisionError::NoAddressAvailable)
    }
}

export!(StallsDescribe);

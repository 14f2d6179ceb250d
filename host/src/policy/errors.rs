//! Typed failures of loading and running policies.

use std::time::Duration;

use super::model::DecisionError;

/// Why a policy could not be loaded. Nothing is swapped in when loading fails.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The component file could not be read.
    #[error("cannot read policy {}: {error}", path.display())]
    Read {
        /// The file named on the command line or in a suite.
        path: std::path::PathBuf,
        /// Why reading failed.
        #[source]
        error: std::io::Error,
    },
    /// The bytes are not the ones the provider pinned.
    #[error("policy {policy}: sha256 is {actual}, but the pin says {expected}")]
    DigestMismatch {
        /// The policy's name.
        policy: String,
        /// The pin from `policies.yaml`.
        expected: String,
        /// The digest of the bytes found.
        actual: String,
    },
    /// Wasmtime could not compile the bytes, or the component does not fit
    /// one slot of the instance pool.
    #[error("policy {policy}: not a valid WebAssembly component: {reason}")]
    InvalidComponent {
        /// The policy's name.
        policy: String,
        /// Wasmtime's explanation.
        reason: String,
    },
    /// The component imports an interface outside the allow-list.
    #[error("policy {policy}: imports {import}, which policies may not use (allowed: {allowed})")]
    ForbiddenImport {
        /// The policy's name.
        policy: String,
        /// The first import refused, as the component names it.
        import: String,
        /// The interfaces a policy may import.
        allowed: String,
    },
    /// The component does not export the contract's functions with the
    /// contract's types.
    #[error("policy {policy}: does not implement the lb-policy world: {reason}")]
    WrongWorld {
        /// The policy's name.
        policy: String,
        /// What is missing or different.
        reason: String,
    },
    /// `describe`, the type check of `decide` or `validate-config` failed
    /// in the sandbox.
    #[error("policy {policy}: {call} failed: {cause}")]
    Call {
        /// The policy's name.
        policy: String,
        /// Which call: `describe`, `decide type check`, `validate-config`.
        call: &'static str,
        /// How it failed.
        #[source]
        cause: CallError,
    },
    /// `validate-config` refused the provider's settings.
    #[error("policy {policy}: rejected its config: {message}")]
    InvalidConfig {
        /// The policy's name.
        policy: String,
        /// The policy's own words, escaped and capped.
        message: String,
    },
}

/// A sandboxed call that did not return normally.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The call's wall-clock deadline passed, in guest code or in a host call.
    #[error("ran longer than its {0:?} deadline and was stopped")]
    Timeout(Duration),
    /// The instance's memories and tables together outgrew the cap.
    #[error(
        "tried to grow its memory past the {limit_bytes}-byte limit (all its memories and tables together)"
    )]
    OutOfMemory {
        /// The policy's memory cap.
        limit_bytes: usize,
    },
    /// A returned value or a log line carried more bytes than the host lifts.
    #[error("returned or logged a value of more than {limit_bytes} bytes, which the host refuses")]
    OutputTooLarge {
        /// The bound on one value.
        limit_bytes: usize,
    },
    /// A decision carried more warnings than the host accepts.
    #[error("returned {count} warnings; at most {limit} are accepted")]
    TooManyWarnings {
        /// How many the policy returned.
        count: usize,
        /// How many are accepted.
        limit: usize,
    },
    /// No slot of the policy's share of the instance pool freed up in time.
    #[error(
        "already runs {share} calls at once, its share of the instance pool; this call waited {waited:?} for a slot"
    )]
    Busy {
        /// The policy's share: calls it may run at once.
        share: u32,
        /// How long this call waited.
        waited: Duration,
    },
    /// The guest trapped (a panic, `unreachable`, a failed WASI write).
    #[error("trapped: {trap}{}", stderr_tail(.stderr))]
    Trap {
        /// Wasmtime's description of the trap, escaped and capped.
        trap: String,
        /// The end of what the guest printed, escaped and capped.
        stderr: String,
    },
}

fn stderr_tail(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {stderr})")
    }
}

/// Why `decide` produced no usable decision.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The call failed in the sandbox.
    #[error("policy {policy}: {cause}")]
    Call {
        /// The policy's name.
        policy: String,
        /// How the call failed.
        #[source]
        cause: CallError,
    },
    /// The policy declined, for a reason it names.
    #[error("policy {policy}: {error}")]
    Declined {
        /// The policy's name.
        policy: String,
        /// The policy's decision-error, its strings escaped and capped.
        error: DecisionError,
    },
    /// The policy answered, but the answer breaks the contract.
    #[error("policy {policy} made an invalid decision: {problem}")]
    InvalidDecision {
        /// The policy's name.
        policy: String,
        /// Every rule the decision breaks.
        problem: String,
    },
}

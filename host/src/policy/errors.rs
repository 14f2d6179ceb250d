//! Typed failures of loading and running policies.

use std::time::Duration;

use super::model::DecisionError;

/// Why a policy could not be loaded. Nothing is swapped in when loading fails.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read policy {}: {error}", path.display())]
    Read {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("policy {policy}: sha256 is {actual}, but the pin says {expected}")]
    DigestMismatch {
        policy: String,
        expected: String,
        actual: String,
    },
    #[error("policy {policy}: not a valid WebAssembly component: {reason}")]
    InvalidComponent { policy: String, reason: String },
    #[error("policy {policy}: imports {import}, which policies may not use (allowed: {allowed})")]
    ForbiddenImport {
        policy: String,
        import: String,
        allowed: String,
    },
    #[error("policy {policy}: does not implement the lb-policy world: {reason}")]
    WrongWorld { policy: String, reason: String },
    #[error("policy {policy}: {call} failed: {cause}")]
    Call {
        policy: String,
        call: &'static str,
        cause: CallError,
    },
    #[error("policy {policy}: rejected its config: {message}")]
    InvalidConfig { policy: String, message: String },
}

/// A sandboxed call that did not return normally.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("ran longer than its {0:?} deadline and was stopped")]
    Timeout(Duration),
    #[error(
        "tried to grow its memory past the {limit_bytes}-byte limit (all its memories and tables together)"
    )]
    OutOfMemory { limit_bytes: usize },
    #[error("returned or logged a value of more than {limit_bytes} bytes, which the host refuses")]
    OutputTooLarge { limit_bytes: usize },
    #[error("returned {count} warnings; at most {limit} are accepted")]
    TooManyWarnings { count: usize, limit: usize },
    #[error(
        "already runs {share} calls at once, its share of the instance pool; this call waited {waited:?} for a slot"
    )]
    Busy { share: u32, waited: Duration },
    #[error("trapped: {trap}{}", stderr_tail(.stderr))]
    Trap { trap: String, stderr: String },
    #[error("could not be instantiated: {0}")]
    Instantiate(String),
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
    #[error("policy {policy}: {cause}")]
    Call { policy: String, cause: CallError },
    /// The policy declined, for a reason it names.
    #[error("policy {policy}: {error}")]
    Declined {
        policy: String,
        error: DecisionError,
    },
    /// The policy answered, but the answer breaks the contract.
    #[error("policy {policy} made an invalid decision: {problem}")]
    InvalidDecision { policy: String, problem: String },
}

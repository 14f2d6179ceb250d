//! Whether VCD answers now: every request notes whether an answer came (any
//! status: VCD, or what stands in front of it, answered) or none did (a
//! connect error, a reset, a timeout, a TLS failure). Readiness and the
//! leader's decision to step down read it; it is shared by every clone of
//! the client and created before the client, so probes can hold it while
//! VCD has not been reached yet.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::errors::VcdError;
use crate::text::sanitize;

/// Room for the last failure in a readiness line.
const ERROR_BYTES: usize = 300;

#[derive(Debug, Default)]
struct State {
    answered_at: Option<Instant>,
    failing_since: Option<Instant>,
    last_error: String,
}

/// The client's view of whether VCD answers.
#[derive(Debug, Clone, Default)]
pub struct Reachability(Arc<Mutex<State>>);

impl Reachability {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes the outcome of one request.
    pub(super) fn note<T>(&self, outcome: &Result<T, VcdError>) {
        let mut state = self.state();
        match outcome {
            Err(error) if error.is_unanswered() => {
                state.failing_since.get_or_insert_with(Instant::now);
                state.last_error = sanitize(&error.to_string(), ERROR_BYTES);
            }
            _ => {
                state.answered_at = Some(Instant::now());
                state.failing_since = None;
            }
        }
    }

    /// How long requests have gone unanswered, and the last failure; `None`
    /// while the last request was answered.
    pub fn unanswered_for(&self) -> Option<(Duration, String)> {
        let state = self.state();
        let since = state.failing_since?;
        Some((since.elapsed(), state.last_error.clone()))
    }

    /// How long since the last answer; `None` before the first.
    pub fn since_last_answer(&self) -> Option<Duration> {
        self.state().answered_at.map(|at| at.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcd::errors::CallSite;

    fn unanswered() -> Result<(), VcdError> {
        Err(VcdError::Transport {
            call: CallSite::new("get_versions", reqwest::Method::GET, "/api/versions"),
            detail: "connection refused".into(),
        })
    }

    #[test]
    fn an_answer_of_any_kind_ends_the_failure() {
        let reach = Reachability::default();
        assert!(reach.unanswered_for().is_none());
        reach.note(&unanswered());
        let (_, error) = reach.unanswered_for().expect("failing");
        assert!(error.contains("connection refused"), "{error}");
        reach.note(&unanswered());
        reach.note::<()>(&Ok(()));
        assert!(reach.unanswered_for().is_none());
        assert!(reach.since_last_answer().is_some());
    }
}

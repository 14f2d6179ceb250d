//! A case's costs held against the budgets the CCM will enforce, so a policy
//! that passes its suite here does not fail the same call in production.

use std::fmt;
use std::time::Duration;

use crate::policy::errors::{CallError, EvalError};
use crate::policy::model::Decision;
use crate::policy::sandbox::{CallCost, Limits, OUTPUT_BYTES};

/// The budgets one call runs under: the policy's [`Limits`] and the output bound.
#[derive(Clone, Copy, Debug)]
pub struct Budgets {
    /// The call's deadline.
    pub timeout: Duration,
    /// The cap on the instance's memories and tables together, in bytes.
    pub memory_bytes: usize,
    /// The most bytes the returned value may carry into the host.
    pub output_bytes: usize,
}

impl From<Limits> for Budgets {
    fn from(limits: Limits) -> Budgets {
        Budgets {
            timeout: limits.timeout,
            memory_bytes: limits.memory_bytes,
            output_bytes: OUTPUT_BYTES,
        }
    }
}

/// The budget a call went over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// The wall-clock deadline.
    Timeout,
    /// The memory cap.
    Memory,
    /// The bound on the returned value.
    Output,
}

impl Budget {
    /// The budget's name in reports: `timeout`, `memory` or `output`.
    pub fn name(self) -> &'static str {
        match self {
            Budget::Timeout => "timeout",
            Budget::Memory => "memory",
            Budget::Output => "output",
        }
    }
}

impl Budgets {
    /// The budget the call went over, if any: the sandbox stopped it for
    /// that budget, or what it cost is above it.
    pub fn exceeded(
        &self,
        result: &Result<Decision, EvalError>,
        cost: &CallCost,
    ) -> Option<Budget> {
        let stopped_for = match result {
            Err(EvalError::Call { cause, .. }) => match cause {
                CallError::Timeout(_) => Some(Budget::Timeout),
                CallError::OutOfMemory { .. } => Some(Budget::Memory),
                CallError::OutputTooLarge { .. } => Some(Budget::Output),
                _ => None,
            },
            _ => None,
        };
        stopped_for.or(if cost.time > self.timeout {
            Some(Budget::Timeout)
        } else if cost.peak_memory_bytes > self.memory_bytes {
            Some(Budget::Memory)
        } else if cost.output_bytes.unwrap_or(0) > self.output_bytes {
            Some(Budget::Output)
        } else {
            None
        })
    }

    /// What `budget` is here and what the call cost of it, for a failure.
    pub fn explain(&self, budget: Budget, cost: &CallCost) -> String {
        match budget {
            Budget::Timeout => format!(
                "over the timeout budget ({:?}): the call ran {:.1?}",
                self.timeout, cost.time
            ),
            Budget::Memory => format!(
                "over the memory budget ({}): the instance reached {}",
                Bytes(self.memory_bytes),
                Bytes(cost.peak_memory_bytes)
            ),
            Budget::Output => format!(
                "over the output budget ({}): the returned value was refused",
                Bytes(self.output_bytes)
            ),
        }
    }
}

/// A byte count in the unit that reads best: `312 B`, `1.5 KiB`, `32 MiB`.
pub struct Bytes(pub usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        let (unit, size) = if bytes >= 1 << 20 {
            ("MiB", 1 << 20)
        } else if bytes >= 1 << 10 {
            ("KiB", 1 << 10)
        } else {
            return write!(f, "{bytes} B");
        };
        if bytes.is_multiple_of(size) {
            write!(f, "{} {unit}", bytes / size)
        } else {
            write!(f, "{:.1} {unit}", bytes as f64 / size as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> Budgets {
        Budgets::from(Limits::default())
    }

    #[test]
    fn a_call_stopped_by_the_sandbox_names_the_budget() {
        let stopped = |cause| {
            Err(EvalError::Call {
                policy: "p".into(),
                cause,
            })
        };
        let cost = CallCost::default();
        let timeout = stopped(CallError::Timeout(Duration::from_millis(100)));
        assert_eq!(budgets().exceeded(&timeout, &cost), Some(Budget::Timeout));
        let memory = stopped(CallError::OutOfMemory { limit_bytes: 1 });
        assert_eq!(budgets().exceeded(&memory, &cost), Some(Budget::Memory));
        let output = stopped(CallError::OutputTooLarge { limit_bytes: 1 });
        assert_eq!(budgets().exceeded(&output, &cost), Some(Budget::Output));
    }

    #[test]
    fn a_cost_above_a_budget_is_over_it() {
        let declined = Err(EvalError::Declined {
            policy: "p".into(),
            error: crate::policy::model::DecisionError::NoAddressAvailable,
        });
        let slow = CallCost {
            time: Duration::from_millis(101),
            ..CallCost::default()
        };
        assert_eq!(budgets().exceeded(&declined, &slow), Some(Budget::Timeout));
        assert_eq!(
            budgets().explain(Budget::Timeout, &slow),
            "over the timeout budget (100ms): the call ran 101.0ms"
        );
        assert_eq!(budgets().exceeded(&declined, &CallCost::default()), None);
    }

    #[test]
    fn bytes_read_in_their_unit() {
        assert_eq!(Bytes(312).to_string(), "312 B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(64 << 10).to_string(), "64 KiB");
        assert_eq!(Bytes(32 << 20).to_string(), "32 MiB");
    }
}

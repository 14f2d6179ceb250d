//! Policy test suites: YAML cases (input → expected decision or error) run
//! through the production loader, sandbox and decision checks, each call's
//! costs held against the budgets the CCM enforces.

pub mod budget;
pub mod format;
pub mod report;
pub mod runner;

pub use runner::{CaseResult, Outcome, SuiteError, SuiteRunner};

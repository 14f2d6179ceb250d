//! Printing suite results: one line per case with its costs beside the
//! budgets (and a diff on failure), the costs of all calls together, and the
//! closing `N passed, N failed` line; or one JSON document with the same.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use super::budget::{Budgets, Bytes};
use super::runner::{CaseResult, Outcome};
use crate::policy::sandbox::CallCost;

/// How many cases passed and how many failed.
pub fn counts(results: &[CaseResult]) -> (usize, usize) {
    let passed = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Passed))
        .count();
    (passed, results.len() - passed)
}

/// The costs of all calls together: time summed, memory and output at
/// their largest and output summed.
#[derive(Default, Serialize)]
pub struct Totals {
    /// Every call's time, summed (`time_us` in JSON).
    #[serde(rename = "time_us", serialize_with = "micros")]
    pub time: Duration,
    /// The slowest call's time (`slowest_us` in JSON).
    #[serde(rename = "slowest_us", serialize_with = "micros")]
    pub slowest: Duration,
    /// The highest memory high-water mark of any call.
    pub peak_memory_bytes: usize,
    /// Every returned value's bytes, summed.
    pub output_bytes: usize,
    /// The largest returned value's bytes.
    pub largest_output_bytes: usize,
}

/// What the calls of `results` cost together.
pub fn totals(results: &[CaseResult]) -> Totals {
    let mut totals = Totals::default();
    for CaseResult { cost, .. } in results {
        let output = cost.output_bytes.unwrap_or(0);
        totals.time += cost.time;
        totals.slowest = totals.slowest.max(cost.time);
        totals.peak_memory_bytes = totals.peak_memory_bytes.max(cost.peak_memory_bytes);
        totals.output_bytes += output;
        totals.largest_output_bytes = totals.largest_output_bytes.max(output);
    }
    totals
}

fn micros<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u128(duration.as_micros())
}

/// `time 1.2ms of 100ms, memory 1.1 MiB of 32 MiB, output 212 B of 64 KiB`.
fn costs(cost: &CallCost, budgets: &Budgets) -> String {
    let output = cost
        .output_bytes
        .map_or_else(|| "none".to_string(), |bytes| Bytes(bytes).to_string());
    format!(
        "time {:.1?} of {:?}, memory {} of {}, output {output} of {}",
        cost.time,
        budgets.timeout,
        Bytes(cost.peak_memory_bytes),
        Bytes(budgets.memory_bytes),
        Bytes(budgets.output_bytes)
    )
}

/// Writes a `PASS`/`FAIL` line per case with its costs and budgets (each
/// failure followed by its diff, indented), a `costs:` line for all calls
/// and the closing `N passed, N failed` line.
pub fn text(out: &mut impl Write, results: &[CaseResult]) -> io::Result<()> {
    for result in results {
        let (word, detail) = match &result.outcome {
            Outcome::Passed => ("PASS", None),
            Outcome::Failed(diff) => ("FAIL", Some(diff)),
        };
        writeln!(
            out,
            "{word} {} :: {} ({})",
            result.suite.display(),
            result.name,
            costs(&result.cost, &result.budgets)
        )?;
        if let Some(diff) = detail {
            for line in diff.lines() {
                writeln!(out, "    {line}")?;
            }
        }
    }
    let totals = totals(results);
    writeln!(
        out,
        "costs: {} calls, time {:.1?} (slowest {:.1?}), memory peak {}, output {} (largest {})",
        results.len(),
        totals.time,
        totals.slowest,
        Bytes(totals.peak_memory_bytes),
        Bytes(totals.output_bytes),
        Bytes(totals.largest_output_bytes)
    )?;
    let (passed, failed) = counts(results);
    writeln!(out, "{passed} passed, {failed} failed")
}

#[derive(Serialize)]
struct JsonCost {
    time_us: u128,
    peak_memory_bytes: usize,
    /// `null` when the call returned nothing.
    output_bytes: Option<usize>,
}

#[derive(Serialize)]
struct JsonBudgets {
    timeout_ms: u128,
    memory_bytes: usize,
    output_bytes: usize,
}

#[derive(Serialize)]
struct JsonCase<'a> {
    suite: String,
    name: &'a str,
    passed: bool,
    cost: JsonCost,
    budgets: JsonBudgets,
    /// `timeout`, `memory` or `output`; `null` within every budget.
    over_budget: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    cases: Vec<JsonCase<'a>>,
    total: Totals,
    passed: usize,
    failed: usize,
}

/// Writes one pretty-printed JSON document: every case (suite, name,
/// passed, its cost, budgets and the budget it went over, and the diff of a
/// failure), the costs of all calls together, and the pass and fail counts.
pub fn json(out: &mut impl Write, results: &[CaseResult]) -> io::Result<()> {
    let cases = results
        .iter()
        .map(|r| JsonCase {
            suite: r.suite.display().to_string(),
            name: &r.name,
            passed: matches!(r.outcome, Outcome::Passed),
            cost: JsonCost {
                time_us: r.cost.time.as_micros(),
                peak_memory_bytes: r.cost.peak_memory_bytes,
                output_bytes: r.cost.output_bytes,
            },
            budgets: JsonBudgets {
                timeout_ms: r.budgets.timeout.as_millis(),
                memory_bytes: r.budgets.memory_bytes,
                output_bytes: r.budgets.output_bytes,
            },
            over_budget: r.over_budget.map(|budget| budget.name()),
            diff: match &r.outcome {
                Outcome::Passed => None,
                Outcome::Failed(diff) => Some(diff),
            },
        })
        .collect();
    let (passed, failed) = counts(results);
    serde_json::to_writer_pretty(
        &mut *out,
        &JsonReport {
            cases,
            total: totals(results),
            passed,
            failed,
        },
    )?;
    writeln!(out)
}

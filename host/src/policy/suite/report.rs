//! Printing suite results: one line per case (with a diff on failure) and the
//! closing `N passed, N failed` line, or one JSON document.

use std::io::{self, Write};

use serde::Serialize;

use super::runner::{CaseResult, Outcome};

/// How many cases passed and how many failed.
pub fn counts(results: &[CaseResult]) -> (usize, usize) {
    let passed = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Passed))
        .count();
    (passed, results.len() - passed)
}

/// Writes a `PASS`/`FAIL` line per case (each failure followed by its diff,
/// indented) and the closing `N passed, N failed` line.
pub fn text(out: &mut impl Write, results: &[CaseResult]) -> io::Result<()> {
    for result in results {
        let (word, detail) = match &result.outcome {
            Outcome::Passed => ("PASS", None),
            Outcome::Failed(diff) => ("FAIL", Some(diff)),
        };
        writeln!(
            out,
            "{word} {} :: {} ({:?})",
            result.suite.display(),
            result.name,
            result.elapsed
        )?;
        if let Some(diff) = detail {
            for line in diff.lines() {
                writeln!(out, "    {line}")?;
            }
        }
    }
    let (passed, failed) = counts(results);
    writeln!(out, "{passed} passed, {failed} failed")
}

#[derive(Serialize)]
struct JsonCase<'a> {
    suite: String,
    name: &'a str,
    passed: bool,
    elapsed_us: u128,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    cases: Vec<JsonCase<'a>>,
    passed: usize,
    failed: usize,
}

/// Writes one pretty-printed JSON document: every case (suite, name, passed,
/// `elapsed_us`, and the diff of a failure) and the pass and fail counts.
pub fn json(out: &mut impl Write, results: &[CaseResult]) -> io::Result<()> {
    let cases = results
        .iter()
        .map(|r| JsonCase {
            suite: r.suite.display().to_string(),
            name: &r.name,
            passed: matches!(r.outcome, Outcome::Passed),
            elapsed_us: r.elapsed.as_micros(),
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
            passed,
            failed,
        },
    )?;
    writeln!(out)
}

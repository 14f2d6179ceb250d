//! The preflight report as a ✓/✗ table with the fix under each ✗, or as
//! one JSON document for scripts.

use serde_json::{Value, json};

use crate::preflight::{Outcome, Report};

const PASS: &str = "✓";
const FAIL: &str = "✗";
const SKIPPED: &str = "–";

fn counts(report: &Report) -> (usize, usize, usize) {
    report
        .findings
        .iter()
        .fold((0, 0, 0), |(pass, fail, skip), f| match f.outcome {
            Outcome::Pass(_) => (pass + 1, fail, skip),
            Outcome::Fail { .. } => (pass, fail + 1, skip),
            Outcome::Skipped(_) => (pass, fail, skip + 1),
        })
}

/// One row per check; a failed check's fix on the line below it.
pub fn table(report: &Report) -> String {
    let width = report
        .findings
        .iter()
        .map(|f| f.check.name().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for finding in &report.findings {
        let name = finding.check.name();
        let (mark, text) = match &finding.outcome {
            Outcome::Pass(detail) => (PASS, detail.clone()),
            Outcome::Fail { problem, .. } => (FAIL, problem.clone()),
            Outcome::Skipped(reason) => (SKIPPED, format!("skipped: {reason}")),
        };
        out.push_str(&format!("{mark} {name:<width$}  {text}\n"));
        if let Outcome::Fail { fix, .. } = &finding.outcome {
            out.push_str(&format!("  {:<width$}  fix: {fix}\n", ""));
        }
    }
    let (passed, failed, skipped) = counts(report);
    out.push_str(&format!(
        "\n{passed} passed, {failed} failed, {skipped} skipped\n"
    ));
    out
}

/// `{"passed": bool, "summary": {...}, "checks": [{"check", "status",
/// "detail", "fix"?}]}`.
pub fn json(report: &Report) -> Value {
    let checks: Vec<Value> = report
        .findings
        .iter()
        .map(|finding| {
            let check = finding.check.name();
            match &finding.outcome {
                Outcome::Pass(detail) => {
                    json!({"check": check, "status": "pass", "detail": detail})
                }
                Outcome::Fail { problem, fix } => {
                    json!({"check": check, "status": "fail", "detail": problem, "fix": fix})
                }
                Outcome::Skipped(reason) => {
                    json!({"check": check, "status": "skipped", "detail": reason})
                }
            }
        })
        .collect();
    let (passed, failed, skipped) = counts(report);
    json!({
        "passed": report.passed(),
        "summary": {"passed": passed, "failed": failed, "skipped": skipped},
        "checks": checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::{CheckId, Finding};

    fn report() -> Report {
        Report {
            findings: vec![
                Finding {
                    check: CheckId::Login,
                    outcome: Outcome::pass("API version 37.2"),
                },
                Finding {
                    check: CheckId::Certificate,
                    outcome: Outcome::fail("certAlias x is missing", "upload it"),
                },
                Finding {
                    check: CheckId::Clock,
                    outcome: Outcome::skipped("needs a login"),
                },
            ],
        }
    }

    #[test]
    fn the_table_marks_each_check_and_puts_the_fix_under_a_failure() {
        let text = table(&report());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "✓ login        API version 37.2");
        assert_eq!(lines[1], "✗ certificate  certAlias x is missing");
        assert_eq!(lines[2], "               fix: upload it");
        assert_eq!(lines[3], "– clock        skipped: needs a login");
        assert_eq!(lines[5], "1 passed, 1 failed, 1 skipped");
    }

    #[test]
    fn the_json_says_whether_all_passed_and_each_status() {
        let document = json(&report());
        assert_eq!(document["passed"], false);
        assert_eq!(document["checks"][1]["status"], "fail");
        assert_eq!(document["checks"][1]["fix"], "upload it");
        assert_eq!(document["summary"]["skipped"], 1);
    }
}

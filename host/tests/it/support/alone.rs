//! Running one test in a process of its own.
//!
//! Some tests depend on process-wide state that the other tests of this
//! binary share: a log capture needs tracing's dispatcher and per-callsite
//! caches to itself, which tests hitting the same callsites from other
//! threads disturb. Such a test calls [`run_alone`]: in the test binary's own
//! run it starts the same binary again with only that test, and passes or
//! fails with it; in that child it returns `true` and the test does its work.

use std::process::Command;

const CHILD: &str = "VCD_CCM_TEST_ALONE";

/// `true` in the child, where the test body runs; otherwise runs the child
/// for `test` (its full path, e.g. `vcd_secrets::no_secret_…`), asserts it
/// passed, and returns `false`.
pub fn run_alone(test: &str) -> bool {
    if std::env::var(CHILD).is_ok_and(|name| name == test) {
        return true;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, test)
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{test} failed in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    false
}

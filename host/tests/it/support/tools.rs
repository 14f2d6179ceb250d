//! Programs some tests drive (a registry, promtool), found on the PATH as
//! `.ci/run` finds them. Missing under `CI=true`, the test fails; elsewhere
//! it is skipped with a line written past the test harness's capture, so
//! `cargo test` shows it, naming the Debian package that would run it, and
//! the run ends with the list of every test skipped, after the harness's
//! summary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The lines of the tests skipped so far, listed at exit.
static SKIPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static LIST_AT_EXIT: Once = Once::new();

/// Runs as the test binary exits, after the harness's `test result` line.
extern "C" fn list_skipped() {
    let skipped = SKIPPED.lock().unwrap_or_else(|p| p.into_inner());
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "\n{} test(s) SKIPPED for want of a program (CI=true runs them all):",
        skipped.len()
    );
    for line in skipped.iter() {
        let _ = writeln!(err, "  {line}");
    }
}

/// Notes a skipped test for the list at exit.
fn note_skipped(line: &str) {
    SKIPPED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(line.to_string());
    LIST_AT_EXIT.call_once(|| {
        shutdown_hooks::add_shutdown_hook(list_skipped);
    });
}

/// A program and the Debian package that ships it.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

pub const DOCKER_REGISTRY: Tool = Tool {
    program: "docker-registry",
    package: "docker-registry",
};
pub const HTPASSWD: Tool = Tool {
    program: "htpasswd",
    package: "apache2-utils",
};
pub const PROMTOOL: Tool = Tool {
    program: "promtool",
    package: "prometheus",
};

/// The file `program` names on the PATH, as `command -v` finds it.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
}

/// The paths of `tools`, in order, or `None` when one is missing outside
/// CI, after saying so where `cargo test` shows it. The test is named by
/// its thread, which the harness names after it.
pub fn require<const N: usize>(tools: [Tool; N]) -> Option<[PathBuf; N]> {
    let found = tools.map(|t| on_path(t.program));
    let missing: Vec<&Tool> = tools
        .iter()
        .zip(&found)
        .filter(|(_, path)| path.is_none())
        .map(|(tool, _)| tool)
        .collect();
    if missing.is_empty() {
        return Some(found.map(|path| path.unwrap_or_default()));
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let programs: Vec<&str> = missing.iter().map(|t| t.program).collect();
    let packages: Vec<&str> = missing.iter().map(|t| t.package).collect();
    let line = format!(
        "SKIPPED {test}: {} not on the PATH (Debian: apt-get install {})",
        programs.join(", "),
        packages.join(" ")
    );
    assert!(!in_ci(), "{line}; CI runs every test");
    // Straight to the process's stderr: the harness captures `eprintln!`.
    let _ = writeln!(std::io::stderr(), "{line}");
    note_skipped(&line.replacen("SKIPPED ", "", 1));
    None
}

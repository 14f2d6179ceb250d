//! Policies written in Python (componentize-py) and JavaScript
//! (componentize-js), through the real binary: the templates `policy new
//! --lang` writes build with their one command and pass their suites, and
//! hostile policies in both languages are contained as Rust ones are.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use tempfile::TempDir;

use crate::support::toolchains::{self, Lang};

/// `vcd-ccm` with the compile cache of this test process: the hostile
/// fixtures are compiled once, however many behaviours run.
fn vcd_ccm(dir: &Path, args: &[&str]) -> Output {
    static CACHE: OnceLock<TempDir> = OnceLock::new();
    let cache = CACHE.get_or_init(|| tempfile::tempdir().unwrap());
    vcd_ccm_caching_in(cache.path(), dir, args)
}

fn vcd_ccm_caching_in(cache: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(args)
        .current_dir(dir)
        .env("VCD_CCM_COMPILE_CACHE", cache)
        .env("RUST_LOG", "warn,vcd_ccm::policy::compiled=info")
        .output()
        .expect("vcd-ccm runs")
}

#[test]
fn each_template_builds_with_one_command_and_passes_its_suite() {
    for lang in [Lang::Python, Lang::Javascript] {
        let project = toolchains::project(lang);
        let size = std::fs::metadata(project.component()).unwrap().len();
        let tested = vcd_ccm(
            &project.dir,
            &["policy", "test", "tests/", "--output", "json"],
        );
        let report: Value = serde_json::from_slice(&tested.stdout).unwrap_or_else(|e| {
            panic!("{lang:?}: {e}\n{}", String::from_utf8_lossy(&tested.stderr))
        });
        assert!(tested.status.success(), "{lang:?}: {report:#}");
        assert_eq!(report["passed"], 7, "{lang:?}: {report:#}");
        println!(
            "{lang:?}: policy new + make took {:?} (zero: reused), component {:.1} MB, 7 cases passed",
            project.built_in,
            size as f64 / 1e6
        );
    }
}

/// An 18 MB component compiled once is read back by the next process: the
/// second `policy inspect` (a restart) takes its code from the cache.
#[test]
fn compiled_code_outlives_the_process_in_the_compile_cache() {
    let component = toolchains::project(Lang::Python).component();
    let component = component.to_str().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let here = Path::new(".");
    let source = |output: Output| {
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{log}");
        log.lines()
            .find(|line| line.contains("policy code ready"))
            .unwrap_or_else(|| panic!("no load logged: {log}"))
            .to_string()
    };
    // A deadline a loaded machine meets for an 18 MB component's `describe`.
    let inspect = ["policy", "inspect", "--timeout-ms", "1000", component];
    let first = source(vcd_ccm_caching_in(cache.path(), here, &inspect));
    assert!(first.contains(r#"source="compiler""#), "{first}");
    assert!(
        std::fs::read_dir(cache.path()).unwrap().next().is_some(),
        "nothing was kept"
    );
    let second = source(vcd_ccm_caching_in(cache.path(), here, &inspect));
    assert!(second.contains(r#"source="compile cache""#), "{second}");
    println!("first load: {first}\nafter a restart: {second}");
}

/// What `policy eval` says for one behaviour of a hostile fixture.
fn misbehave(component: &Path, behaviour: &str, port: u16) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("input.yaml"),
        "service: {namespace: shop, name: web, uid: u1, ip-families: [ipv4], ports: [{protocol: tcp, port: 80, node-port: 30080}]}
namespace: {name: shop}
cluster: {cluster-id: demo, org: acme, vdc: acme-vdc, gateway: edge-1, vcd-api-version: \"37.2\"}
pools: [{name: internal, source: ip-block, ranges: [{first: 10.20.0.10, last: 10.20.0.20}], free-count: 11}]
profiles: [l4-tcp]
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        format!(r#"{{"do": "{behaviour}", "port": {port}}}"#),
    )
    .unwrap();
    let component = component.to_str().unwrap();
    let output = vcd_ccm(
        dir.path(),
        &[
            "policy",
            "eval",
            "--policy",
            component,
            "--input",
            "input.yaml",
            "--config",
            "config.json",
            // A deadline for a loaded machine too: a component of 12 to
            // 19 MB is instantiated within each call's budget.
            "--timeout-ms",
            "1000",
        ],
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn hostile_python_and_javascript_policies_are_contained() {
    // A server on loopback the policies try to reach: nothing may connect.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let expectations: [(Lang, &str, &[&str]); 12] = [
        (Lang::Python, "ok", &["from-pool: internal"]),
        (
            Lang::Python,
            "connect",
            &["connect denied: PermissionError"],
        ),
        (Lang::Python, "resolve", &["resolve denied: gaierror"]),
        (Lang::Python, "loop", &["1s deadline"]),
        (
            Lang::Python,
            "oom",
            &["memory past the 33554432-byte limit"],
        ),
        (Lang::Python, "print-flood", &["trapped", "flood flood"]),
        (Lang::Javascript, "ok", &["from-pool: internal"]),
        // A sync export cannot await: the request never settles, and the
        // host's HTTP hook refuses it before any connection either way.
        (Lang::Javascript, "fetch", &["fetch pending"]),
        (Lang::Javascript, "fetch-name", &["fetch-name pending"]),
        (Lang::Javascript, "loop", &["1s deadline"]),
        (
            Lang::Javascript,
            "oom",
            &["memory past the 33554432-byte limit"],
        ),
        (Lang::Javascript, "print-flood", &["1s deadline"]),
    ];
    for (lang, behaviour, needles) in expectations {
        let said = misbehave(&toolchains::hostile(lang), behaviour, port);
        for needle in needles {
            assert!(said.contains(needle), "{lang:?} {behaviour}: {said}");
        }
        assert!(!said.contains("succeeded"), "{lang:?} {behaviour}: {said}");
        assert!(
            said.len() < 4096,
            "{lang:?} {behaviour}: {} bytes",
            said.len()
        );
    }
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("a policy reached the loopback server: {other:?}"),
    }
}

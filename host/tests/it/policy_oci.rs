//! Policies from an OCI registry, against Debian's `docker-registry` on
//! loopback: `vcd-ccm policy push` publishes, `policy inspect` and
//! `policy test` pull by digest; credentials come from a Docker config and
//! never show; bytes that do not match their digests are refused and
//! nothing is served from them. `e2e` runs `vcd-ccm run` on an image
//! policy read with a pull Secret.
//!
//! `cargo test -p vcd-ccm --test it policy_oci -- --nocapture` prints the
//! push and pull times.

mod e2e;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Instant;

use crate::support::registry::{PASSWORD, TestRegistry};
use vcd_ccm::policy::PolicyEngine;
use vcd_ccm::policy::builtin::{self, ARTIFACTS_DIR};
use vcd_ccm::policy::directory;
use vcd_ccm::policy::loader::sha256_hex;
use vcd_ccm::policy::registry::PolicyState;

/// The example provider policy, built by the test build.
pub fn example() -> PathBuf {
    PathBuf::from(format!("{ARTIFACTS_DIR}/namespace_pools.wasm"))
}

/// The built-in default policy's component: a second, different policy.
pub fn default_component() -> PathBuf {
    PathBuf::from(format!("{ARTIFACTS_DIR}/default_policy.wasm"))
}

/// `vcd-ccm ARGS` with no Docker config of the user's in the way.
pub fn vcd_ccm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(args)
        .env_remove("REGISTRY_AUTH_FILE")
        .env("HOME", "/nonexistent")
        .output()
        .expect("vcd-ccm runs")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Pushes `component` to `target` and returns the pinned reference printed.
pub fn push(component: &Path, target: &str, extra: &[&str]) -> String {
    let mut args = vec!["policy", "push", component.to_str().unwrap(), target];
    args.extend(extra);
    let output = vcd_ccm(&args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "push failed: {stderr}");
    let reference = stdout.trim().to_string();
    assert!(reference.contains("@sha256:"), "{reference}");
    reference
}

/// The example suite with its `policy` pointing at `reference`.
fn suite_for(dir: &Path, reference: &str) -> PathBuf {
    let original =
        std::fs::read_to_string("../policies/examples/namespace-pools/tests/namespace-pools.yaml")
            .expect("the example suite");
    let suite = original
        .lines()
        .map(|line| {
            if line.starts_with("policy:") {
                format!("policy: {reference}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join("namespace-pools.yaml");
    std::fs::write(&path, suite).expect("the suite is written");
    path
}

#[test]
fn a_pushed_component_is_pulled_by_digest_inspected_and_tested() {
    let Some(registry) = TestRegistry::start() else {
        return;
    };
    let target = format!("{}:v1", registry.reference("policies/pools"));
    let started = Instant::now();
    let reference = push(&example(), &target, &[]);
    println!(
        "push of the example ({} bytes): {:?}",
        std::fs::metadata(example()).unwrap().len(),
        started.elapsed()
    );
    let prefix = format!("{}@sha256:", registry.reference("policies/pools"));
    assert!(reference.starts_with(&prefix), "{reference}");
    // The same component pushes to the same digest: no timestamp in it.
    assert_eq!(push(&example(), &target, &[]), reference);

    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let component = std::fs::read(example()).unwrap();
    assert!(
        stdout.contains(&format!("sha256:    {}", sha256_hex(&component))),
        "{stdout}"
    );
    assert!(stdout.contains("accepted:  yes"), "{stdout}");
    assert!(
        stdout.contains(&format!("component: {reference}")),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let suite = suite_for(dir.path(), &reference);
    let output = vcd_ccm(&["policy", "test", suite.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.trim_end().ends_with(" passed, 0 failed"), "{stdout}");
    assert!(!stdout.contains("\n0 passed"), "{stdout}");

    // A tag alone is refused, saying how to pin it.
    let output = vcd_ccm(&["policy", "inspect", &target]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.contains("has no digest") && stderr.contains("@sha256:<64 hex>"),
        "{stderr}"
    );
}

#[test]
fn credentials_come_from_the_docker_config_and_never_show() {
    let Some(registry) = TestRegistry::start_with_auth() else {
        return;
    };
    let target = registry.reference("policies/pools");
    let anonymous = vcd_ccm(&["policy", "push", example().to_str().unwrap(), &target]);
    let (_, stderr) = text(&anonymous);
    assert!(!anonymous.status.success());
    assert!(
        stderr.contains(&format!(
            "registry {} refused access to policies/pools (401, anonymously)",
            registry.host
        )),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, registry.docker_config()).unwrap();
    let flag = format!("--registry-auth={}", config.display());
    let reference = push(&example(), &target, &[&flag]);
    let inspected = vcd_ccm(&["policy", "inspect", &reference, &flag]);
    let (stdout, stderr) = text(&inspected);
    assert!(inspected.status.success(), "{stdout}{stderr}");
    // $REGISTRY_AUTH_FILE is the default when the flag is not given.
    let by_variable = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["policy", "inspect", &reference])
        .env("REGISTRY_AUTH_FILE", &config)
        .output()
        .unwrap();
    assert!(by_variable.status.success(), "{:?}", text(&by_variable));

    // A wrong password is refused, and no password is printed.
    let wrong = registry
        .docker_config()
        .replace(&base64_of(PASSWORD), &base64_of("wrong"));
    std::fs::write(&config, wrong).unwrap();
    let refused = vcd_ccm(&["policy", "inspect", &reference, &flag]);
    let (stdout, stderr) = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("(401, with credentials)"), "{stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(PASSWORD) && !shown.contains("wrong"),
            "{shown}"
        );
    }
}

fn base64_of(password: &str) -> String {
    use base64::Engine as _;
    let user = crate::support::registry::USER;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

#[test]
fn bytes_that_do_not_match_their_digest_are_refused_and_never_served() {
    let Some(registry) = TestRegistry::start() else {
        return;
    };
    let reference = push(&example(), &registry.reference("policies/pools"), &[]);
    // The registry's copy of the layer is changed, its size kept.
    let component = std::fs::read(example()).unwrap();
    let mut other = component.clone();
    let middle = other.len() / 2;
    other[middle] ^= 0xff;
    let layer = registry.blob_file(&sha256_hex(&component));
    std::fs::write(&layer, &other).unwrap();

    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "has sha256:{}, not the sha256:{} it was asked for by",
            sha256_hex(&other),
            sha256_hex(&component)
        )),
        "{stderr}"
    );
    // A longer layer than the manifest says is cut off at its size.
    let longer = [component.as_slice(), b"more"].concat();
    std::fs::write(&layer, &longer).unwrap();
    let (_, stderr) = text(&vcd_ccm(&["policy", "inspect", &reference]));
    assert!(
        stderr.contains(&format!(
            "is {} bytes, over the limit of {} bytes",
            longer.len(),
            component.len()
        )),
        "{stderr}"
    );
    std::fs::write(&layer, &other).unwrap();

    // In the CCM's policy directory: refused, nothing served from it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policies.yaml"),
        format!("policies:\n- name: pools\n  image: {reference}\n  selector: {{allowAnnotation: true}}\n"),
    )
    .unwrap();
    let engine = PolicyEngine::new().unwrap();
    let default = Arc::new(
        engine
            .block_on(builtin::load_default(&engine, "{}".into()))
            .unwrap(),
    );
    let (set, report) = engine
        .block_on(directory::load(&engine, dir.path(), default, None))
        .unwrap();
    assert_eq!(report.pulls_failed, ["pools"]);
    let PolicyState::Failed(reason) = &set.provider("pools").unwrap().state else {
        panic!("a tampered layer is not served");
    };
    assert!(reason.contains("it was asked for by"), "{reason}");

    // A tampered manifest fails its own digest.
    let manifest_hex = reference.rsplit_once("@sha256:").unwrap().1;
    std::fs::write(registry.blob_file(manifest_hex), b"{\"schemaVersion\": 2}").unwrap();
    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (_, stderr) = text(&output);
    assert!(
        stderr.contains(&format!("manifest sha256:{manifest_hex} has sha256:")),
        "{stderr}"
    );
}

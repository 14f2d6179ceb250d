//! `vcd-ccm policy test | eval | inspect`, run as the real binary. The default
//! policy's and the example policy's suites run here, inside `cargo test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vcd_ccm::policy::builtin::ARTIFACTS_DIR;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn vcd_ccm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn closing_counts(output: &Output) -> (usize, usize) {
    let text = stdout(output);
    let last = text.lines().last().unwrap_or_default().to_string();
    let numbers: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        last.ends_with(" failed") && numbers.len() == 2,
        "no closing line in:\n{text}"
    );
    (numbers[0], numbers[1])
}

const SUITE_HEAD: &str = r#"
policy: default
config: {certAlias: web-cert}
defaults:
  service: {namespace: shop, name: web, uid: u-1, ip-families: [ipv4]}
  namespace: {name: shop}
  pools: [{name: public, source: ip-block, ranges: [{first: 203.0.113.10, last: 203.0.113.20}], free-count: 11}]
  certificates: [{alias: web-cert}]
  profiles: [l4-tcp, l4-udp, http, https]
cases:
"#;

const PLAIN_TCP: &str = r#"
- name: plain-tcp
  input: {service: {ports: [{protocol: tcp, port: 80, node-port: 30080}]}}
  expect:
    decision:
      address: {from-pool: public}
      ports: [{service-port: 80, protocol: tcp, listen-port: 80, profile: l4-tcp, health-monitor: tcp, algorithm: round-robin}]
"#;

fn write_suite(dir: &Path, cases: &str) -> PathBuf {
    let path = dir.join("suite.yaml");
    std::fs::write(&path, format!("{SUITE_HEAD}{cases}")).unwrap();
    path
}

/// The cases the suites under `dir` hold: each suite lists them under
/// `cases:`, one `- name:` at the start of a line each.
fn shipped_cases(dir: &str) -> usize {
    let dir = repo().join(dir);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .map(|text| text.lines().filter(|l| l.starts_with("- name: ")).count())
        .sum()
}

#[test]
fn the_shipped_suites_all_pass() {
    let suites = [
        "policies/default/tests",
        "policies/examples/namespace-pools/tests",
    ];
    let output = vcd_ccm(&["policy", "test", suites[0], suites[1]]);
    let (passed, failed) = closing_counts(&output);
    assert_eq!(failed, 0, "{}", stdout(&output));
    let shipped: usize = suites.iter().map(|dir| shipped_cases(dir)).sum();
    assert!(shipped >= 181, "the suites were not found: {shipped} cases");
    assert_eq!(passed, shipped, "every shipped case runs");
    assert!(output.status.success());
}

#[test]
fn a_failing_case_prints_a_diff_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = PLAIN_TCP
        .replace("plain-tcp", "wrong-profile")
        .replace("health-monitor: tcp", "health-monitor: ping");
    let suite = write_suite(dir.path(), &format!("{PLAIN_TCP}{wrong}"));
    let output = vcd_ccm(&["policy", "test", suite.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("PASS ") && text.contains(":: plain-tcp"),
        "{text}"
    );
    assert!(
        text.contains("FAIL ") && text.contains(":: wrong-profile"),
        "{text}"
    );
    assert!(
        text.contains("-     health-monitor: ping") && text.contains("+     health-monitor: tcp"),
        "{text}"
    );
    assert_eq!(closing_counts(&output), (1, 1));
}

#[test]
fn run_filters_cases_and_json_output_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let other = PLAIN_TCP.replace("plain-tcp", "another");
    let suite = write_suite(dir.path(), &format!("{PLAIN_TCP}{other}"));
    let output = vcd_ccm(&[
        "policy",
        "test",
        suite.to_str().unwrap(),
        "--run",
        "^another$",
        "--output",
        "json",
    ]);
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["passed"], 1);
    assert_eq!(report["failed"], 0);
    assert_eq!(report["cases"][0]["name"], "another");
}

#[test]
fn load_errors_exit_2_and_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    let bad_policy = dir.path().join("bad-policy.yaml");
    std::fs::write(&bad_policy, "policy: nowhere.wasm\ncases: []\n").unwrap();
    let typo = dir.path().join("typo.yaml");
    std::fs::write(&typo, format!("{SUITE_HEAD}- name: typo\n  input: {{service: {{portz: []}}}}\n  expect: {{error: no-address-available}}\n")).unwrap();
    for (suite, expected) in [
        (
            &missing,
            "missing.yaml: no such file or directory".to_string(),
        ),
        (
            &bad_policy,
            format!(
                "{}: No such file",
                dir.path().join("nowhere.wasm").display()
            ),
        ),
        (
            &typo,
            "case \"typo\": input: service.portz: unknown field `portz`".to_string(),
        ),
    ] {
        let output = vcd_ccm(&["policy", "test", suite.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{}", suite.display());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&expected), "{stderr}");
    }
}

#[test]
fn eval_prints_the_decision_or_the_policys_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.yaml");
    std::fs::write(
        &input,
        "service: {namespace: shop, name: web, ports: [{protocol: udp, port: 53}]}\n\
         pools: [{name: public, source: ip-space, ranges: [{first: 198.51.100.1, last: 198.51.100.9}], free-count: 9}]\n\
         profiles: [l4-udp]\n",
    )
    .unwrap();
    let output = vcd_ccm(&[
        "policy",
        "eval",
        "--policy",
        "default",
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let decision: serde_json::Value = serde_yaml_ng::from_str(&stdout(&output)).unwrap();
    assert_eq!(decision["address"]["from-pool"], "public");
    assert_eq!(decision["ports"][0]["profile"], "l4-udp");

    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"algorithm": "fastest-response"}"#).unwrap();
    let declined = vcd_ccm(&[
        "policy",
        "eval",
        "--policy",
        "default",
        "--input",
        input.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(declined.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&declined.stderr)
            .contains("needs the PREMIUM load balancer feature set")
    );
}

#[test]
fn eval_of_a_policy_that_sleeps_returns_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.yaml");
    std::fs::write(&input, "service: {namespace: shop, name: web}\n").unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#""sleep""#).unwrap();
    let wasm = format!(
        "{}/misbehaving.wasm",
        vcd_ccm::policy::builtin::ARTIFACTS_DIR
    );
    let started = std::time::Instant::now();
    let output = vcd_ccm(&[
        "policy",
        "eval",
        "--policy",
        &wasm,
        "--input",
        input.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ran longer than its 100ms deadline"),
        "{stderr}"
    );
    // The loop never ends on its own: finishing at all is the claim, with
    // room for compiling the component on a loaded machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
}

#[test]
fn inspect_reports_interfaces_and_acceptance() {
    let default = format!("{ARTIFACTS_DIR}/default_policy.wasm");
    let output = vcd_ccm(&["policy", "inspect", &default]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("contract:  vcd:lb-policy@0.4.0"), "{text}");
    assert!(text.contains("policy:    default 0.1.0"), "{text}");
    assert!(text.contains("accepted:  yes"), "{text}");
    assert!(text.contains("sha256:    "), "{text}");
    // The example provider policy stays on the first contract and is served too.
    let example = format!("{ARTIFACTS_DIR}/namespace_pools.wasm");
    let output = vcd_ccm(&["policy", "inspect", &example]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("contract:  vcd:lb-policy@0.1.0"), "{text}");
    assert!(text.contains("accepted:  yes"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let sneaky = dir.path().join("sneaky.wat");
    std::fs::write(
        &sneaky,
        r#"(component (import "wasi:http/incoming-handler@0.2.0" (instance)))"#,
    )
    .unwrap();
    let refused = vcd_ccm(&["policy", "inspect", sneaky.to_str().unwrap()]);
    let text = stdout(&refused);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(
        text.contains("wasi:http/incoming-handler@0.2.0 (FORBIDDEN)"),
        "{text}"
    );
    assert!(
        text.contains("accepted:  no: policy sneaky: imports wasi:http/incoming-handler@0.2.0"),
        "{text}"
    );

    // A version this host does not serve is named, with the ones it does.
    let future = dir.path().join("future.wat");
    std::fs::write(
        &future,
        r#"(component (instance $p) (export "vcd:lb-policy/policy@0.5.0" (instance $p)))"#,
    )
    .unwrap();
    let refused = vcd_ccm(&["policy", "inspect", future.to_str().unwrap()]);
    let text = stdout(&refused);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "contract:  vcd:lb-policy@0.5.0 (not served: this host serves 0.4.0, 0.3.0, 0.2.0, 0.1.0)"
        ),
        "{text}"
    );
    assert!(text.contains("accepted:  no: "), "{text}");
}

//! `vcd-ccm policy new | wit | test | configmap` as a policy author uses them,
//! through the real binary. `policy_authoring` builds a new crate outside the
//! checkout with cargo, its dependencies resolved as `policies/Cargo.lock`
//! pins them (which the template's versions follow) and built in the
//! target directory of `policies/`, which build.rs has filled: only the
//! crate itself compiles. The other tests use the components build.rs
//! builds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use tempfile::TempDir;
use vcd_ccm::cli::{DEFAULT_POLICY_CONFIGMAP, DEFAULT_POLICY_NAMESPACE};
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::capture::CAPTURE_ANNOTATION;
use vcd_ccm::policy::loader::sha256_hex;

use crate::support::poll::wait_until;
use crate::support::run::World;

/// How long the running CCM may take to act.
const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The policy `author_policy` creates.
const NAME: &str = "edge-pools";

/// `vcd-ccm args…` run in `dir`.
fn vcd_ccm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a policy author does first, in a temporary directory outside the
/// checkout: `policy new`, `cargo build --release --target wasm32-wasip2`
/// in the crate, `policy test tests/`, each checked. Returns the built
/// component and the directory (the crate is `NAME` inside it), which lives
/// as long as the `TempDir`.
pub fn author_policy() -> (PathBuf, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let created = vcd_ccm(dir.path(), &["policy", "new", NAME]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let crate_dir = dir.path().join(NAME);

    // The toolchain is the one running this test (RUSTUP_TOOLCHAIN is
    // inherited). The dependencies are the project's policies' own, built
    // once: the same lock and the same target directory.
    let policies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies");
    std::fs::copy(policies.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    let target_dir = policies.join("target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(&target_dir)
        .current_dir(&crate_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    let release = "wasm32-wasip2/release/edge_pools.wasm";
    let built_component = target_dir.join(release);
    assert!(
        built_component.is_file(),
        "{} was not built",
        built_component.display()
    );
    // Where the crate's suite looks for it, as after a build of its own.
    let component = crate_dir.join("target").join(release);
    std::fs::create_dir_all(component.parent().unwrap()).unwrap();
    std::fs::copy(&built_component, &component).unwrap();

    let tested = vcd_ccm(&crate_dir, &["policy", "test", "tests/"]);
    let report = text(&tested.stdout);
    assert!(tested.status.success(), "{report}{}", text(&tested.stderr));
    assert!(report.ends_with("7 passed, 0 failed\n"), "{report}");
    for figure in [
        "time ",
        " of 100ms",
        "memory ",
        " of 32 MiB",
        "output ",
        " of 64 KiB",
    ] {
        assert!(report.contains(figure), "no {figure:?} in:\n{report}");
    }
    assert!(report.contains("\ncosts: 7 calls, time "), "{report}");
    (component, dir)
}

/// `vcd-ccm policy configmap spec` run in `dir`; the ConfigMap when it succeeds.
fn configmap(dir: &Path, spec: &str) -> Result<ConfigMap, String> {
    std::fs::write(dir.join("spec.yaml"), spec).unwrap();
    let output = vcd_ccm(dir, &["policy", "configmap", "spec.yaml"]);
    if output.status.success() {
        Ok(serde_yaml_ng::from_slice(&output.stdout).unwrap())
    } else {
        assert_eq!(output.status.code(), Some(1));
        Err(text(&output.stderr))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_authoring() {
    let (component, dir) = tokio::task::spawn_blocking(author_policy).await.unwrap();
    let spec = format!(
        "policies:\n- name: {NAME}\n  file: {NAME}/target/wasm32-wasip2/release/edge_pools.wasm\n  config: {{pool: internal, certificate: web-cert}}\n  selector: {{allowAnnotation: true}}\n"
    );
    let config_map = configmap(dir.path(), &spec).unwrap();
    let bytes = std::fs::read(&component).unwrap();
    let metadata = &config_map.metadata;
    assert_eq!(metadata.name.as_deref(), Some(DEFAULT_POLICY_CONFIGMAP));
    assert_eq!(
        metadata.namespace.as_deref(),
        Some(DEFAULT_POLICY_NAMESPACE)
    );
    let binary = config_map.binary_data.unwrap();
    assert_eq!(binary["edge_pools.wasm"].0, bytes);
    let manifest: serde_json::Value =
        serde_yaml_ng::from_str(&config_map.data.unwrap()["policies.yaml"]).unwrap();
    let entry = &manifest["policies"][0];
    assert_eq!(entry["sha256"], sha256_hex(&bytes));
    assert_eq!(entry["file"], "edge_pools.wasm");
    assert_eq!(entry["config"]["pool"], "internal");

    rolled_out_as_a_shadow(dir.path()).await;
}

/// The new policy shipped beside the default one with `mode: shadow`: the
/// ConfigMap `policy configmap` makes is applied to the cluster, mounted as
/// kubelet mounts it and loaded by `vcd-ccm run`; a Service gets the default
/// policy's decision in VCD and an Event with the new policy's difference,
/// and its captured input is a suite that passes for the default policy and
/// shows the new one's difference.
async fn rolled_out_as_a_shadow(dir: &Path) {
    let spec = format!(
        "policies:\n- name: {NAME}\n  file: {NAME}/target/wasm32-wasip2/release/edge_pools.wasm\n  mode: shadow\n  shadows: default\n"
    );
    let config_map = configmap(dir, &spec).unwrap();
    let world = World::start().await;
    let applied = Api::<ConfigMap>::namespaced(world.client.clone(), DEFAULT_POLICY_NAMESPACE)
        .create(&PostParams::default(), &config_map)
        .await
        .expect("the ConfigMap is applied");
    mount(&applied, &world.files.policy_dir);
    world.add_nodes().await;
    let ccm = world.spawn("authored", &["--leader-elect=false"]);
    let web = world
        .create_annotated_service("web", &[80], json!({CAPTURE_ANNOTATION: "true"}))
        .await;
    wait_until("the Service's address", WAIT, || world.external_ip("web")).await;
    let (message, _) = wait_until("the shadow's Event", WAIT, || async {
        Api::<Event>::namespaced(world.client.clone(), "default")
            .list(&Default::default())
            .await
            .map_err(|e| e.to_string())?
            .items
            .into_iter()
            .find(|e| {
                e.involved_object.name.as_deref() == Some("web")
                    && e.reason.as_deref() == Some("ShadowPolicyDiffers")
            })
            .and_then(|e| e.message)
            .ok_or_else(|| "no ShadowPolicyDiffers Event yet".to_string())
    })
    .await;
    assert!(
        message.contains(&format!(
            "shadow policy {NAME} would decide otherwise than default"
        )) && message.contains("- algorithm: round-robin; + algorithm: least-connections"),
        "{message}"
    );
    let needle = format!(" uid={}", web.uid);
    let algorithms: Vec<Option<String>> = world.vcd.with_world(|w| {
        w.pools
            .iter()
            .filter(|p| {
                p.description
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&needle)
            })
            .map(|p| p.algorithm.clone())
            .collect()
    });
    assert_eq!(
        algorithms,
        [Some("ROUND_ROBIN".to_string())],
        "the default policy's"
    );
    let (_, metrics) = ccm.get("/metrics").await.unwrap();
    assert!(
        metrics.contains(&format!(
            "policy_shadow_decisions_total{{policy=\"{NAME}\",shadows=\"default\",result=\"different\"}}"
        )),
        "{metrics}"
    );

    let (status, captured) = ccm.get("/policy/captures/default/web").await.unwrap();
    assert_eq!(status, 200, "{captured}");
    std::fs::write(dir.join("captured.yaml"), &captured).unwrap();
    let passed = vcd_ccm(dir, &["policy", "test", "captured.yaml"]);
    assert!(passed.status.success(), "{}", text(&passed.stdout));
    // The same input against the new policy, with its own settings.
    let mut against_new: serde_json::Value = serde_yaml_ng::from_str(&captured).unwrap();
    against_new["policy"] = json!(format!(
        "{NAME}/target/wasm32-wasip2/release/edge_pools.wasm"
    ));
    against_new["config"] = json!({});
    let against_new = serde_yaml_ng::to_string(&against_new).unwrap();
    std::fs::write(dir.join("captured-new.yaml"), against_new).unwrap();
    let differs = vcd_ccm(dir, &["policy", "test", "captured-new.yaml"]);
    let report = text(&differs.stdout);
    assert_eq!(
        differs.status.code(),
        Some(1),
        "{report}{}",
        text(&differs.stderr)
    );
    assert!(
        report.contains("+     algorithm: least-connections"),
        "{report}"
    );
}

/// Each `data` and `binaryData` key of the ConfigMap as a file in `dir`, as
/// kubelet mounts a ConfigMap volume.
fn mount(config_map: &ConfigMap, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (key, value) in config_map.data.iter().flatten() {
        std::fs::write(dir.join(key), value).unwrap();
    }
    for (key, value) in config_map.binary_data.iter().flatten() {
        std::fs::write(dir.join(key), &value.0).unwrap();
    }
}

#[test]
fn policy_wit_writes_the_contract_the_host_serves() {
    let dir = tempfile::tempdir().unwrap();
    let output = vcd_ccm(dir.path(), &["policy", "wit", "--out", "wit"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for file in ["types.wit", "world.wit"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join("wit").join(file)).unwrap(),
            std::fs::read_to_string(repo.join("wit").join(file)).unwrap(),
        );
    }
    let refused = vcd_ccm(dir.path(), &["policy", "new", "default"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("built-in policy's name"));
}

#[test]
fn a_case_over_a_budget_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let suite = |behaviour: &str, limits: &str| {
        format!(
            "policy: {ARTIFACTS_DIR}/misbehaving.wasm\nconfig: {behaviour}\nlimits: {limits}\ncases:\n- name: {behaviour}\n  input: {{service: {{namespace: shop, name: web, ports: [{{protocol: tcp, port: 80}}]}}}}\n  expect: {{error: no-address-available}}\n"
        )
    };
    for (behaviour, limits) in [
        ("loop", "{timeoutMs: 20}"),
        ("oom", "{memoryLimitMiB: 4}"),
        ("error-flood", "{}"),
    ] {
        std::fs::write(
            dir.path().join(format!("{behaviour}.yaml")),
            suite(behaviour, limits),
        )
        .unwrap();
    }
    let output = vcd_ccm(dir.path(), &["policy", "test", ".", "--output", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let cases = report["cases"].as_array().unwrap();
    let over: Vec<(&str, &str)> = cases
        .iter()
        .map(|case| {
            (
                case["name"].as_str().unwrap(),
                case["over_budget"].as_str().unwrap_or("none"),
            )
        })
        .collect();
    assert_eq!(
        over,
        [
            ("error-flood", "output"),
            ("loop", "timeout"),
            ("oom", "memory")
        ]
    );
    let oom = &cases[2];
    assert_eq!(oom["budgets"]["memory_bytes"], 4 << 20);
    assert!(oom["cost"]["peak_memory_bytes"].as_u64().unwrap() <= 4 << 20);
    assert!(oom["cost"]["output_bytes"].is_null());
    assert!(report["total"]["time_us"].as_u64().unwrap() >= 20_000);

    let output = vcd_ccm(dir.path(), &["policy", "test", "loop.yaml"]);
    let report = text(&output.stdout);
    assert!(
        report.contains("FAIL loop.yaml :: loop (time ")
            && report.contains("    over the timeout budget (20ms): the call ran "),
        "{report}"
    );
}

#[test]
fn configmap_over_1_mib_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let component = std::fs::read(format!("{ARTIFACTS_DIR}/default_policy.wasm")).unwrap();
    let mut spec = String::from("policies:\n");
    for i in 1..=8 {
        std::fs::write(dir.path().join(format!("p{i}.wasm")), &component).unwrap();
        spec.push_str(&format!(
            "- {{name: p{i}, selector: {{allowAnnotation: true}}}}\n"
        ));
    }
    let error = configmap(dir.path(), &spec).unwrap_err();
    assert!(
        error.contains("over the 1048576-byte (1 MiB) limit of a Kubernetes ConfigMap"),
        "{error}"
    );
    assert!(
        error.contains(&format!("largest: p1.wasm {} bytes", component.len())),
        "{error}"
    );
}

#[test]
fn configmap_with_a_config_the_policy_refuses_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!(
        "policies:\n- name: web\n  file: {ARTIFACTS_DIR}/default_policy.wasm\n  config: {{certAlias: web-cert, colour: blue}}\n  selector: {{allowAnnotation: true}}\n"
    );
    let error = configmap(dir.path(), &spec).unwrap_err();
    assert!(
        error.contains("the CCM would refuse it: policy web: rejected its config")
            && error.contains("unknown field `colour`"),
        "{error}"
    );
    let limits = spec.replace("  selector", "  timeoutMs: 0\n  selector");
    let error = configmap(dir.path(), &limits).unwrap_err();
    assert!(
        error.contains("policies[0].timeoutMs: 0 is outside 1–10000"),
        "{error}"
    );
    // The built-in policy's settings alone, checked the same way.
    let error = configmap(dir.path(), "default:\n  config: {algorithm: fastest}\n").unwrap_err();
    assert!(
        error.contains("policy default: rejected its config") && error.contains("fastest"),
        "{error}"
    );
    let settings = configmap(
        dir.path(),
        "default:\n  config: {algorithm: least-connections}\n",
    )
    .expect("settings the policy accepts");
    assert!(settings.data.unwrap()["policies.yaml"].contains("least-connections"));
}

#[test]
fn the_default_configmap_is_the_one_the_deployment_mounts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let deployment = std::fs::read_to_string(repo.join("manifests/deployment.yaml")).unwrap();
    assert!(deployment.contains(&format!("namespace: {DEFAULT_POLICY_NAMESPACE}")));
    assert!(
        deployment.contains(&format!(
            "configMap:\n            name: {DEFAULT_POLICY_CONFIGMAP}"
        )),
        "manifests/deployment.yaml no longer mounts {DEFAULT_POLICY_CONFIGMAP}"
    );
}

//! The provider's policy directory: selection, hot reload through kubelet's
//! `..data` symlink swap, and refusal of corrupt or wrongly pinned policies.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::directory;
use vcd_ccm::policy::loader::{self, sha256_hex};
use vcd_ccm::policy::model::{Namespace, Service};
use vcd_ccm::policy::registry::{PolicySet, PolicyState, ReloadStatus, SelectError};
use vcd_ccm::policy::{PolicyEngine, Registry};

use crate::support::poll::DEADLINE;

fn artifact(name: &str) -> Vec<u8> {
    std::fs::read(format!("{ARTIFACTS_DIR}/{name}.wasm")).unwrap()
}

fn manifest(entries: &[(&str, &[u8], &str)]) -> String {
    let mut text = String::from("policies:\n");
    for (name, bytes, extra) in entries {
        text.push_str(&format!(
            "- name: {name}\n  sha256: {}\n{extra}",
            sha256_hex(bytes)
        ));
    }
    text
}

/// A directory laid out the way kubelet mounts a ConfigMap.
struct MountedConfigMap {
    dir: tempfile::TempDir,
    generation: u32,
}

impl MountedConfigMap {
    fn new(files: &[(&str, &[u8])]) -> MountedConfigMap {
        let mut mount = MountedConfigMap {
            dir: tempfile::tempdir().unwrap(),
            generation: 0,
        };
        mount.publish(files);
        for (name, _) in files {
            symlink(format!("..data/{name}"), mount.path().join(name)).unwrap();
        }
        mount
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a new generation and swaps `..data` onto it with one rename.
    fn publish(&mut self, files: &[(&str, &[u8])]) {
        self.generation += 1;
        let generation = format!("..2026_11_21_{}", self.generation);
        std::fs::create_dir(self.path().join(&generation)).unwrap();
        for (name, bytes) in files {
            std::fs::write(self.path().join(&generation).join(name), bytes).unwrap();
        }
        symlink(&generation, self.path().join("..data_tmp")).unwrap();
        std::fs::rename(self.path().join("..data_tmp"), self.path().join("..data")).unwrap();
    }
}

fn service(annotations: &[(&str, &str)]) -> Service {
    Service {
        namespace: "shop".into(),
        name: "web".into(),
        annotations: annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Service::default()
    }
}

fn namespace(labels: &[(&str, &str)]) -> Namespace {
    Namespace {
        name: "shop".into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn load(engine: &Arc<PolicyEngine>, dir: &Path) -> PolicySet {
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let (set, report) = engine
        .block_on(directory::load(engine, dir, default, None))
        .unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    set
}

#[test]
fn selection_is_first_match_then_annotation_then_default() {
    let engine = PolicyEngine::new().unwrap();
    let pools = artifact("namespace_pools");
    let text = manifest(&[
        (
            "gold",
            &pools,
            "  file: namespace_pools.wasm\n  selector: {namespaceSelector: {matchLabels: {tier: gold}}}\n",
        ),
        (
            "opt-in",
            &pools,
            "  file: namespace_pools.wasm\n  selector: {allowAnnotation: true}\n",
        ),
        (
            "by-class",
            &pools,
            "  file: namespace_pools.wasm\n  selector: {loadBalancerClass: example.com/lb}\n",
        ),
    ]);
    let mount = MountedConfigMap::new(&[
        ("policies.yaml", text.as_bytes()),
        ("namespace_pools.wasm", &pools),
    ]);
    let set = load(&engine, mount.path());

    let chosen = |s: &Service, n: &Namespace| set.select(s, n).map(|p| p.name().to_string());
    assert_eq!(
        chosen(&service(&[]), &namespace(&[("tier", "gold")])),
        Ok("gold".into())
    );
    assert_eq!(
        chosen(
            &service(&[("vcd-ccm.io/policy", "opt-in")]),
            &namespace(&[])
        ),
        Ok("opt-in".into())
    );
    // A matching selector comes first in manifest order, before the annotation.
    assert_eq!(
        chosen(
            &service(&[("vcd-ccm.io/policy", "opt-in")]),
            &namespace(&[("tier", "gold")])
        ),
        Ok("gold".into())
    );
    let mut classy = service(&[]);
    classy.load_balancer_class = Some("example.com/lb".into());
    assert_eq!(chosen(&classy, &namespace(&[])), Ok("by-class".into()));
    assert_eq!(chosen(&service(&[]), &namespace(&[])), Ok("default".into()));
    assert_eq!(
        chosen(&service(&[("vcd-ccm.io/policy", "gold")]), &namespace(&[])),
        Err(SelectError::NotSelectable("gold".into()))
    );
    assert_eq!(
        chosen(
            &service(&[("vcd-ccm.io/policy", "platinum")]),
            &namespace(&[])
        ),
        Err(SelectError::UnknownPolicy("platinum".into()))
    );
}

#[test]
fn a_policy_that_never_loaded_fails_only_the_services_it_governs() {
    let engine = PolicyEngine::new().unwrap();
    let corrupt = b"not wasm at all".to_vec();
    let text = manifest(&[(
        "broken",
        &corrupt,
        "  selector: {namespaceSelector: {matchLabels: {tier: gold}}}\n",
    )]);
    let mount = MountedConfigMap::new(&[
        ("policies.yaml", text.as_bytes()),
        ("broken.wasm", &corrupt),
    ]);
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let (set, report) = engine
        .block_on(directory::load(&engine, mount.path(), default, None))
        .unwrap();
    assert_eq!(report.failed.len(), 1);
    assert!(
        report.failed[0]
            .1
            .contains("not a valid WebAssembly component"),
        "{:?}",
        report.failed
    );
    match set.select(&service(&[]), &namespace(&[("tier", "gold")])) {
        Err(SelectError::Unavailable { name, reason }) => {
            assert_eq!(name, "broken");
            assert!(
                reason.contains("not a valid WebAssembly component"),
                "{reason}"
            );
        }
        other => panic!(
            "expected Unavailable, got {:?}",
            other.map(|p| p.name().to_string())
        ),
    }
    assert_eq!(
        set.select(&service(&[]), &namespace(&[])).unwrap().name(),
        "default"
    );
}

#[test]
fn a_missing_manifest_means_no_provider_policies_and_a_bad_one_is_an_error() {
    let engine = PolicyEngine::new().unwrap();
    let empty = tempfile::tempdir().unwrap();
    assert!(load(&engine, empty.path()).providers.is_empty());
    let mount = MountedConfigMap::new(&[("policies.yaml", b"policies:\n- name: x\n  sha: 1\n")]);
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let error = engine
        .block_on(directory::load(&engine, mount.path(), default, None))
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("policies.yaml: policies[0]") && error.contains("unknown field `sha`"),
        "{error}"
    );
}

/// Waits for a reload the watcher makes on its own (a notify event, a
/// hash, a compile); the bound only tells a stuck watcher from a slow one.
fn wait_for(registry: &Registry, what: &str, check: impl Fn(&PolicySet) -> bool) {
    let started = Instant::now();
    while !check(&registry.current()) {
        assert!(
            started.elapsed() < DEADLINE,
            "not within {DEADLINE:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("{what}: {:?} after the publish", started.elapsed());
}

fn wait_for_status(registry: &Registry, what: &str, check: impl Fn(&ReloadStatus) -> bool) {
    let started = Instant::now();
    while !check(&registry.status()) {
        assert!(
            started.elapsed() < DEADLINE,
            "not within {DEADLINE:?}: a reload refusing {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn serving(set: &PolicySet, name: &str) -> Option<String> {
    match &set.provider(name)?.state {
        PolicyState::Ready(policy) => Some(policy.info.name.clone()),
        PolicyState::Failed(_) => None,
    }
}

#[test]
fn a_symlink_swap_is_served_and_bad_versions_never_replace_good_ones() {
    let engine = PolicyEngine::new().unwrap();
    let pools = artifact("namespace_pools");
    let other = artifact("misbehaving");
    let selector = "  file: tenant.wasm\n  selector: {allowAnnotation: true}\n";
    let first = manifest(&[("tenant", &pools, selector)]);
    let mut mount =
        MountedConfigMap::new(&[("policies.yaml", first.as_bytes()), ("tenant.wasm", &pools)]);
    let registry = Arc::new(Registry::new(load(&engine, mount.path())));
    assert_eq!(
        serving(&registry.current(), "tenant").as_deref(),
        Some("namespace-pools")
    );
    let _watcher =
        directory::watch(engine.clone(), mount.path().to_path_buf(), registry.clone()).unwrap();

    // A new version, correctly pinned: swapped in.
    let second = manifest(&[("tenant", &other, &format!("{selector}  config: ok\n"))]);
    mount.publish(&[
        ("policies.yaml", second.as_bytes()),
        ("tenant.wasm", &other),
    ]);
    wait_for(&registry, "the new version serves", |set| {
        serving(set, "tenant").as_deref() == Some("misbehaving")
    });

    // Corrupt bytes (pinned to themselves), a wrong pin, a broken manifest: all refused.
    let corrupt = b"\0asm\x0d\0\x01\0garbage".to_vec();
    let corrupt_manifest = manifest(&[("tenant", &corrupt, selector)]);
    let wrong_pin = manifest(&[("tenant", &pools, selector)]);
    let refusals = [
        (
            corrupt_manifest.as_bytes(),
            &corrupt,
            "not a valid WebAssembly component",
        ),
        (wrong_pin.as_bytes(), &other, "but the pin says"),
        (b"policies: {".as_slice(), &other, "policies.yaml"),
    ];
    for (text, bytes, reason) in refusals {
        let before = registry.status().refusals;
        mount.publish(&[("policies.yaml", text), ("tenant.wasm", bytes)]);
        wait_for_status(&registry, reason, |status| status.refusals > before);
        let refused = registry.status().last_refusals;
        assert!(
            refused.iter().any(|(_, why)| why.contains(reason)),
            "{refused:?}"
        );
    }
    let set = registry.current();
    assert_eq!(
        serving(&set, "tenant").as_deref(),
        Some("misbehaving"),
        "the last good version keeps serving"
    );
    let entry = &set.provider("tenant").unwrap().entry;
    assert_eq!(
        entry.sha256,
        Some(sha256_hex(&other)),
        "the served entry is the one it was loaded from"
    );

    // Back to a good version: served again.
    mount.publish(&[("policies.yaml", first.as_bytes()), ("tenant.wasm", &pools)]);
    wait_for(&registry, "the good version serves again", |set| {
        serving(set, "tenant").as_deref() == Some("namespace-pools")
    });
}
